//! Typed views of the `flywheel` ops. IRDL ops have no generated accessors, so these read
//! operands (through `operandSegmentSizes`) and attributes by name, in one place.

use crate::{layout::Layout, stablehlo::Precision, tensor::is_i1};
use melior::ir::{
    attribute::{DenseI32ArrayAttribute, DenseI64ArrayAttribute, FloatAttribute, IntegerAttribute},
    operation::{OperationLike, OperationRef},
    Attribute, AttributeLike, Value,
};

/// Why an attribute could not be read, phrased for a diagnostic.
pub type AttributeError = String;

fn attribute<'c>(op: &OperationRef<'c, '_>, name: &str) -> Result<Attribute<'c>, AttributeError> {
    op.attribute(name).map_err(|_| format!("requires attribute '{name}'"))
}

fn optional_attribute<'c>(op: &OperationRef<'c, '_>, name: &str) -> Option<Attribute<'c>> {
    op.attribute(name).ok()
}

fn float_attribute(attribute: Attribute, name: &str) -> Result<f64, AttributeError> {
    FloatAttribute::try_from(attribute)
        .map(|float| float.value())
        .map_err(|_| format!("attribute '{name}' must be a float, got {attribute}"))
}

fn integer_attribute(attribute: Attribute, name: &str) -> Result<i64, AttributeError> {
    IntegerAttribute::try_from(attribute)
        .map(|integer| integer.value())
        .map_err(|_| format!("attribute '{name}' must be an integer, got {attribute}"))
}

fn bool_attribute(attribute: Attribute, name: &str) -> Result<bool, AttributeError> {
    match IntegerAttribute::try_from(attribute) {
        Ok(integer) if is_i1(attribute.r#type()) => Ok(integer.value() != 0),
        _ => Err(format!("attribute '{name}' must be a bool, got {attribute}")),
    }
}

fn precision_attribute(op: &OperationRef, name: &str) -> Result<Option<Precision>, AttributeError> {
    let Some(attribute) = optional_attribute(op, name) else { return Ok(None) };
    crate::ir::string_attribute(attribute)
        .and_then(|text| Precision::parse(&format!("{} {text}", Precision::KIND)).ok())
        .map(Some)
        .ok_or_else(|| format!("attribute '{name}' must be \"DEFAULT\", \"HIGH\" or \"HIGHEST\", got {attribute}"))
}

fn layout_attribute(attribute: Attribute) -> Result<Layout, AttributeError> {
    let text = crate::ir::string_attribute(attribute)
        .ok_or_else(|| format!("attribute 'layout' must be a string, got {attribute}"))?;
    Layout::parse(&text).ok_or_else(|| format!("attribute 'layout' must be a permutation of \"BTNH\", got \"{text}\""))
}

/// The operand indices of each segment, from `operandSegmentSizes` when the op has one,
/// else every operand in its own segment.
fn operand_segments(op: &OperationRef, segment_count: usize) -> Vec<Option<usize>> {
    let sizes: Vec<i32> = match op.attribute("operandSegmentSizes") {
        Ok(attribute) => match DenseI32ArrayAttribute::try_from(attribute) {
            Ok(array) => (0..array.len()).filter_map(|i| array.element(i).ok()).collect(),
            Err(_) => return vec![None; segment_count],
        },
        Err(_) => (0..segment_count).map(|i| i32::from(i < op.operand_count())).collect(),
    };
    let mut next = 0;
    sizes
        .iter()
        .map(|&size| {
            let index = (size == 1).then_some(next);
            next += size.max(0) as usize;
            index
        })
        .collect()
}

macro_rules! op_view {
    ($view:ident, $name:literal) => {
        #[derive(Clone, Copy, Debug)]
        pub struct $view<'c, 'a> {
            op: OperationRef<'c, 'a>,
        }

        impl<'c, 'a> $view<'c, 'a> {
            pub const NAME: &'static str = $name;

            pub fn from_operation(op: OperationRef<'c, 'a>) -> Option<Self> {
                (op.name().as_string_ref().as_str() == Ok($name)).then_some(Self { op })
            }

            pub fn operation(&self) -> OperationRef<'c, 'a> {
                self.op
            }

            fn operand_in_segment(&self, segment: usize) -> Option<Value<'c, 'a>> {
                let index = operand_segments(&self.op, Self::SEGMENTS.len()).get(segment).copied().flatten()?;
                self.op.operand(index).ok()
            }

            pub fn layout(&self) -> Result<Layout, AttributeError> {
                layout_attribute(attribute(&self.op, "layout")?)
            }

            pub fn scale(&self) -> Result<f64, AttributeError> {
                float_attribute(attribute(&self.op, "scale")?, "scale")
            }
        }
    };
}

op_view!(AttentionOp, "flywheel.attention");
op_view!(GatedDeltaOp, "flywheel.gated_delta");

impl<'c, 'a> AttentionOp<'c, 'a> {
    /// The operand segments, in order, as the IRDL definition declares them.
    pub const SEGMENTS: [&'static str; 7] = ["q", "k", "v", "mask", "bias", "q_segment_ids", "kv_segment_ids"];

    pub fn q(&self) -> Option<Value<'c, 'a>> {
        self.operand_in_segment(0)
    }
    pub fn k(&self) -> Option<Value<'c, 'a>> {
        self.operand_in_segment(1)
    }
    pub fn v(&self) -> Option<Value<'c, 'a>> {
        self.operand_in_segment(2)
    }
    pub fn mask(&self) -> Option<Value<'c, 'a>> {
        self.operand_in_segment(3)
    }
    pub fn bias(&self) -> Option<Value<'c, 'a>> {
        self.operand_in_segment(4)
    }
    pub fn q_segment_ids(&self) -> Option<Value<'c, 'a>> {
        self.operand_in_segment(5)
    }
    pub fn kv_segment_ids(&self) -> Option<Value<'c, 'a>> {
        self.operand_in_segment(6)
    }

    pub fn causal(&self) -> Result<bool, AttributeError> {
        bool_attribute(attribute(&self.op, "causal")?, "causal")
    }
    pub fn q_heads(&self) -> Result<i64, AttributeError> {
        integer_attribute(attribute(&self.op, "q_heads")?, "q_heads")
    }
    pub fn kv_heads(&self) -> Result<i64, AttributeError> {
        integer_attribute(attribute(&self.op, "kv_heads")?, "kv_heads")
    }

    /// `(left, right)`: query i may attend keys i - left ..= i + right. Each bound is
    /// at most the longest extent of q and k: a wider one masks nothing more, and the
    /// kernels and the reference lowering compute positions in 32 bits.
    pub fn window(&self) -> Result<Option<(i64, i64)>, AttributeError> {
        let Some(attribute) = optional_attribute(&self.op, "window") else {
            return Ok(None);
        };
        let array = DenseI64ArrayAttribute::try_from(attribute).ok();
        let longest = [self.q(), self.k()]
            .into_iter()
            .flatten()
            .filter_map(crate::tensor::TensorInfo::of_value)
            .flat_map(|info| info.shape.into_iter().flatten())
            .max()
            .unwrap_or(i64::MAX);
        match array.map(|a| (a.len(), a.element(0), a.element(1))) {
            Some((2, Ok(left), Ok(right))) => Ok(Some((left.min(longest), right.min(longest)))),
            _ => Err(format!("attribute 'window' must be array<i64: left, right>, got {attribute}")),
        }
    }

    pub fn logit_soft_cap(&self) -> Result<Option<f64>, AttributeError> {
        optional_attribute(&self.op, "logit_soft_cap")
            .map(|attribute| float_attribute(attribute, "logit_soft_cap"))
            .transpose()
    }
}

impl<'c, 'a> GatedDeltaOp<'c, 'a> {
    pub const SEGMENTS: [&'static str; 6] = ["q", "k", "v", "g", "beta", "initial_state"];

    pub fn q(&self) -> Option<Value<'c, 'a>> {
        self.operand_in_segment(0)
    }
    pub fn k(&self) -> Option<Value<'c, 'a>> {
        self.operand_in_segment(1)
    }
    pub fn v(&self) -> Option<Value<'c, 'a>> {
        self.operand_in_segment(2)
    }
    pub fn g(&self) -> Option<Value<'c, 'a>> {
        self.operand_in_segment(3)
    }
    pub fn beta(&self) -> Option<Value<'c, 'a>> {
        self.operand_in_segment(4)
    }
    pub fn initial_state(&self) -> Option<Value<'c, 'a>> {
        self.operand_in_segment(5)
    }

    pub fn chunk_size(&self) -> Result<i64, AttributeError> {
        integer_attribute(attribute(&self.op, "chunk_size")?, "chunk_size")
    }

    /// The precision the source's products asked for (`"DEFAULT"`, `"HIGH"` or
    /// `"HIGHEST"`, as StableHLO spells it); `None` when the op does not say, which means
    /// f32 throughout, as `HIGHEST`.
    pub fn precision(&self) -> Result<Option<Precision>, AttributeError> {
        precision_attribute(&self.op, "precision")
    }

    /// The precision the source's readout of the state with q asked for:
    /// `readout_precision` where the op says it apart, else `precision`.
    pub fn readout_precision(&self) -> Result<Option<Precision>, AttributeError> {
        Ok(precision_attribute(&self.op, "readout_precision")?.or(self.precision()?))
    }
}
