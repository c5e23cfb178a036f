//! Typed views of the StableHLO ops FlyWheel reads and writes. StableHLO is not part of
//! upstream MLIR, so its ops are unregistered and its dialect attributes are opaque: these
//! views give named accessors and parsed payloads so that passes never match raw strings.

mod payload;

pub use payload::{
    ComparisonDirection, ComparisonType, DotDimensionNumbers, FieldValue, PayloadError, Precision,
    ScatterDimensionNumbers, StructPayload,
};

use crate::tensor::is_i1;
use melior::{
    ir::{
        attribute::{ArrayAttribute, DenseI64ArrayAttribute, FloatAttribute, IntegerAttribute},
        operation::{OperationBuilder, OperationLike, OperationMutLike, OperationRef},
        Attribute, AttributeLike, BlockLike, Location, Operation, RegionLike, Type, Value,
    },
    StringRef,
};
use mlir_sys::{
    mlirAttributeIsADenseElements, mlirAttributeIsAOpaque, mlirDenseElementsAttrGetSplatValue,
    mlirDenseElementsAttrIsSplat, mlirOpaqueAttrGetData, mlirOpaqueAttrGetDialectNamespace,
};
use thiserror::Error;

#[derive(Debug, Error, PartialEq, Eq)]
pub enum ViewError {
    #[error("'{op}' has no attribute '{name}'")]
    MissingAttribute { op: String, name: String },
    #[error("'{op}' attribute '{name}' is not {expected}: {found}")]
    WrongAttribute { op: String, name: String, expected: &'static str, found: String },
    #[error("'{op}' attribute '{name}': {source}")]
    Payload { op: String, name: String, source: PayloadError },
    #[error("'{op}' attribute '{name}' {problem}")]
    OutOfRange { op: String, name: String, problem: String },
}

/// The `(dialect namespace, data)` of an opaque attribute such as `#stablehlo<...>`.
pub fn opaque_attribute(attribute: Attribute) -> Option<(String, String)> {
    let raw = attribute.to_raw();
    if !unsafe { mlirAttributeIsAOpaque(raw) } {
        return None;
    }
    let read = |string| unsafe { StringRef::from_raw(string) }.as_str().ok().map(str::to_owned);
    let namespace = read(unsafe { mlirOpaqueAttrGetDialectNamespace(raw) })?;
    let data = read(unsafe { mlirOpaqueAttrGetData(raw) })?;
    Some((namespace, data))
}

/// The value of a splat dense constant (`dense<1.25> : tensor<...>`), as f64.
pub fn splat_value(attribute: Attribute) -> Option<f64> {
    let raw = attribute.to_raw();
    let is_splat = unsafe { mlirAttributeIsADenseElements(raw) && mlirDenseElementsAttrIsSplat(raw) };
    if !is_splat {
        return None;
    }
    let element = unsafe { Attribute::from_raw(mlirDenseElementsAttrGetSplatValue(raw)) };
    if let Ok(float) = FloatAttribute::try_from(element) {
        return Some(float.value());
    }
    let integer = IntegerAttribute::try_from(element).ok()?;
    Some(if is_i1(element.r#type()) { (integer.value() != 0) as i64 as f64 } else { integer.value() as f64 })
}

/// Builds a StableHLO op in the form JAX prints: operands, result types, and its
/// attributes stored as properties (`<{...}>`), which XLA reads back.
pub fn build<'c>(
    name: &str,
    location: Location<'c>,
    operands: &[Value<'c, '_>],
    result_types: &[Type<'c>],
    properties: &[(&str, Attribute<'c>)],
) -> Operation<'c> {
    let mut op = OperationBuilder::new(name, location)
        .add_operands(operands)
        .add_results(result_types)
        .build()
        .expect("an unregistered op builds");
    for (key, value) in properties {
        op.set_inherent_attribute(key, *value);
    }
    op
}

fn op_name(op: &OperationRef) -> String {
    op.name().as_string_ref().as_str().unwrap_or("?").to_owned()
}

fn wrong(op: &OperationRef, name: &str, expected: &'static str, found: Attribute) -> ViewError {
    ViewError::WrongAttribute { op: op_name(op), name: name.into(), expected, found: found.to_string() }
}

/// The rank of a ranked tensor value.
fn rank(value: Value) -> Option<usize> {
    crate::tensor::TensorInfo::of_value(value).map(|info| info.shape.len())
}

/// Checks that `dims` are distinct axes of a tensor of `rank` (`None`: unranked, unchecked).
fn axes_of(op: &OperationRef, name: &str, dims: &[i64], rank: Option<usize>) -> Result<(), ViewError> {
    let out_of_range = |problem: String| ViewError::OutOfRange { op: op_name(op), name: name.into(), problem };
    let Some(rank) = rank else { return Ok(()) };
    if let Some(&bad) = dims.iter().find(|&&d| d < 0 || d as usize >= rank) {
        return Err(out_of_range(format!("names axis {bad} of a rank-{rank} tensor")));
    }
    if (1..dims.len()).any(|i| dims[..i].contains(&dims[i])) {
        return Err(out_of_range(format!("names an axis twice: {dims:?}")));
    }
    Ok(())
}

fn attribute<'c>(op: &OperationRef<'c, '_>, name: &str) -> Result<Attribute<'c>, ViewError> {
    op.attribute(name).map_err(|_| ViewError::MissingAttribute { op: op_name(op), name: name.into() })
}

fn i64_array(op: &OperationRef, name: &str) -> Result<Vec<i64>, ViewError> {
    let attribute = attribute(op, name)?;
    let array = DenseI64ArrayAttribute::try_from(attribute).map_err(|_| wrong(op, name, "array<i64>", attribute))?;
    Ok((0..array.len()).filter_map(|i| array.element(i).ok()).collect())
}

/// Parses the data of a `#stablehlo...` attribute with `parse`.
fn payload<T>(
    op: &OperationRef,
    name: &str,
    attribute: Attribute,
    parse: fn(&str) -> Result<T, PayloadError>,
) -> Result<T, ViewError> {
    match opaque_attribute(attribute) {
        Some((namespace, data)) if namespace == "stablehlo" => {
            parse(&data).map_err(|source| ViewError::Payload { op: op_name(op), name: name.into(), source })
        }
        _ => Err(wrong(op, name, "a #stablehlo attribute", attribute)),
    }
}

macro_rules! view {
    ($(#[$doc:meta])* $view:ident, $name:literal) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug)]
        pub struct $view<'c, 'a> {
            op: OperationRef<'c, 'a>,
        }

        impl<'c, 'a> $view<'c, 'a> {
            pub const NAME: &'static str = $name;

            pub fn from_operation(op: OperationRef<'c, 'a>) -> Option<Self> {
                (op.name().as_string_ref().as_str() == Ok($name)).then_some(Self { op })
            }

            /// The view of the op defining `value`, if it is this kind of op.
            pub fn defining(value: Value<'c, 'a>) -> Option<Self> {
                let result = crate::ir::op_result(value)?;
                Self::from_operation(result.owner())
            }

            pub fn operation(&self) -> OperationRef<'c, 'a> {
                self.op
            }

            pub fn operand(&self, index: usize) -> Value<'c, 'a> {
                self.op.operand(index).expect(concat!($name, " has this operand"))
            }

            pub fn result(&self) -> Value<'c, 'a> {
                self.op.result(0).expect(concat!($name, " has a result")).into()
            }
        }
    };
}

view!(
    /// `dot_general(lhs, rhs)`: a batched, contracted matrix product.
    DotGeneral, "stablehlo.dot_general"
);
view!(
    /// `reduce(inputs..., inits...)` over `dimensions`, with the reducer in its body.
    Reduce, "stablehlo.reduce"
);
view!(
    /// `scatter(operand, indices, updates)`, combining each addressed element with its
    /// update by the body.
    Scatter, "stablehlo.scatter"
);
view!(BroadcastInDim, "stablehlo.broadcast_in_dim");
view!(Compare, "stablehlo.compare");
view!(
    /// `select(pred, on_true, on_false)`.
    Select, "stablehlo.select"
);
view!(Iota, "stablehlo.iota");
view!(
    /// `slice(operand)` from `start_indices` to `limit_indices` by `strides`.
    Slice, "stablehlo.slice"
);
view!(Constant, "stablehlo.constant");
view!(Transpose, "stablehlo.transpose");
view!(Reshape, "stablehlo.reshape");
view!(Convert, "stablehlo.convert");
view!(Exponential, "stablehlo.exponential");
view!(CustomCall, "stablehlo.custom_call");

impl<'c, 'a> DotGeneral<'c, 'a> {
    pub fn lhs(&self) -> Value<'c, 'a> {
        self.operand(0)
    }
    pub fn rhs(&self) -> Value<'c, 'a> {
        self.operand(1)
    }
    /// The dimension numbers, checked against the operands: every axis in range and named
    /// once per side, as many batch and contracting axes on both sides.
    pub fn dimension_numbers(&self) -> Result<DotDimensionNumbers, ViewError> {
        let name = "dot_dimension_numbers";
        let numbers = payload(&self.op, name, attribute(&self.op, name)?, DotDimensionNumbers::parse)?;
        let lhs = [numbers.lhs_batching.clone(), numbers.lhs_contracting.clone()].concat();
        let rhs = [numbers.rhs_batching.clone(), numbers.rhs_contracting.clone()].concat();
        if self.op.operand_count() != 2
            || numbers.lhs_batching.len() != numbers.rhs_batching.len()
            || numbers.lhs_contracting.len() != numbers.rhs_contracting.len()
        {
            return Err(ViewError::OutOfRange {
                op: op_name(&self.op),
                name: name.into(),
                problem: "does not pair the two operands' batch and contracting axes".into(),
            });
        }
        axes_of(&self.op, name, &lhs, rank(self.lhs()))?;
        axes_of(&self.op, name, &rhs, rank(self.rhs()))?;
        Ok(numbers)
    }
    /// The per-operand precisions; empty when the op does not say.
    pub fn precision(&self) -> Result<Vec<Precision>, ViewError> {
        let name = "precision_config";
        let Ok(attribute) = attribute(&self.op, name) else {
            return Ok(Vec::new());
        };
        let array = ArrayAttribute::try_from(attribute).map_err(|_| wrong(&self.op, name, "an array", attribute))?;
        (0..array.len())
            .map(|i| {
                let element = array.element(i).map_err(|_| wrong(&self.op, name, "an array", attribute))?;
                payload(&self.op, name, element, Precision::parse)
            })
            .collect()
    }

    /// The precision the product runs at: the most precise its operands ask (DEFAULT when
    /// the op does not say).
    pub fn product_precision(&self) -> Result<Precision, ViewError> {
        Ok(self.precision()?.into_iter().max_by_key(|p| p.passes()).unwrap_or(Precision::Default))
    }
}

impl<'c, 'a> Scatter<'c, 'a> {
    /// The dimension numbers of a one-operand scatter, its axes checked against the
    /// operand's and the updates' ranks.
    pub fn dimension_numbers(&self) -> Result<ScatterDimensionNumbers, ViewError> {
        let name = "scatter_dimension_numbers";
        let numbers = payload(&self.op, name, attribute(&self.op, name)?, ScatterDimensionNumbers::parse)?;
        let operand = self.op.operand(0).ok().and_then(rank);
        let updates = self.op.operand(self.op.operand_count().saturating_sub(1)).ok().and_then(rank);
        axes_of(&self.op, name, &numbers.inserted_window_dims, operand)?;
        axes_of(&self.op, name, &numbers.scatter_dims_to_operand_dims, operand)?;
        axes_of(&self.op, name, &numbers.update_window_dims, updates)?;
        Ok(numbers)
    }
    /// Whether the body keeps the update and drops the old element (`x.at[i].set(u)`).
    pub fn overwrites(&self) -> bool {
        let Some(block) = self.op.region(0).ok().and_then(|region| region.first_block()) else {
            return false;
        };
        let Some(ret) = block.first_operation() else { return false };
        self.op.operand_count() == 3
            && block.argument_count() == 2
            && ret.name().as_string_ref().as_str() == Ok("stablehlo.return")
            && ret.next_in_block().is_none()
            && ret.operand_count() == 1
            && ret.operand(0).ok() == block.argument(1).ok().map(Into::into)
    }
}

/// What a `reduce` combines its elements with, when its body is one binary op.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reducer {
    Add,
    Maximum,
    Minimum,
    Multiply,
}

impl<'c, 'a> Reduce<'c, 'a> {
    /// The number of reduced tensors (operands are the inputs, then as many inits).
    pub fn input_count(&self) -> usize {
        self.op.operand_count() / 2
    }
    pub fn input(&self, index: usize) -> Value<'c, 'a> {
        self.operand(index)
    }
    pub fn init(&self, index: usize) -> Value<'c, 'a> {
        self.operand(self.input_count() + index)
    }
    pub fn dimensions(&self) -> Result<Vec<i64>, ViewError> {
        let dimensions = i64_array(&self.op, "dimensions")?;
        let input_rank = self.op.operand(0).ok().and_then(rank);
        axes_of(&self.op, "dimensions", &dimensions, input_rank)?;
        Ok(dimensions)
    }
    /// The reducer, if the body is exactly `return(op(arg0, arg1))` of a single input.
    pub fn reducer(&self) -> Option<Reducer> {
        if self.input_count() != 1 {
            return None;
        }
        let block = self.op.region(0).ok()?.first_block()?;
        let combine = block.first_operation()?;
        let ret = combine.next_in_block()?;
        let is_return = ret.name().as_string_ref().as_str() == Ok("stablehlo.return")
            && ret.next_in_block().is_none()
            && ret.operand_count() == 1
            && ret.operand(0).ok()? == combine.result(0).ok()?.into();
        let reads_args = combine.operand_count() == 2
            && (0..2).all(|i| combine.operand(i).ok() == block.argument(i).ok().map(Into::into));
        if !is_return || !reads_args {
            return None;
        }
        match combine.name().as_string_ref().as_str().ok()? {
            "stablehlo.add" => Some(Reducer::Add),
            "stablehlo.maximum" => Some(Reducer::Maximum),
            "stablehlo.minimum" => Some(Reducer::Minimum),
            "stablehlo.multiply" => Some(Reducer::Multiply),
            _ => None,
        }
    }
}

impl<'c, 'a> BroadcastInDim<'c, 'a> {
    pub fn input(&self) -> Value<'c, 'a> {
        self.operand(0)
    }
    /// One distinct result axis per input axis, checked.
    pub fn broadcast_dimensions(&self) -> Result<Vec<i64>, ViewError> {
        let name = "broadcast_dimensions";
        let dimensions = i64_array(&self.op, name)?;
        if rank(self.input()).is_some_and(|input| input != dimensions.len()) {
            let problem = "does not name one axis per input axis".into();
            return Err(ViewError::OutOfRange { op: op_name(&self.op), name: name.into(), problem });
        }
        axes_of(&self.op, name, &dimensions, rank(self.result()))?;
        Ok(dimensions)
    }
}

impl<'c, 'a> Compare<'c, 'a> {
    pub fn lhs(&self) -> Value<'c, 'a> {
        self.operand(0)
    }
    pub fn rhs(&self) -> Value<'c, 'a> {
        self.operand(1)
    }
    pub fn direction(&self) -> Result<ComparisonDirection, ViewError> {
        let name = "comparison_direction";
        payload(&self.op, name, attribute(&self.op, name)?, ComparisonDirection::parse)
    }
    /// The comparison type, if the op states one.
    pub fn compare_type(&self) -> Result<Option<ComparisonType>, ViewError> {
        let name = "compare_type";
        match attribute(&self.op, name) {
            Ok(attribute) => payload(&self.op, name, attribute, ComparisonType::parse).map(Some),
            Err(_) => Ok(None),
        }
    }
}

impl<'c, 'a> Select<'c, 'a> {
    pub fn pred(&self) -> Value<'c, 'a> {
        self.operand(0)
    }
    pub fn on_true(&self) -> Value<'c, 'a> {
        self.operand(1)
    }
    pub fn on_false(&self) -> Value<'c, 'a> {
        self.operand(2)
    }
}

impl Iota<'_, '_> {
    pub fn iota_dimension(&self) -> Result<i64, ViewError> {
        let name = "iota_dimension";
        let attribute = attribute(&self.op, name)?;
        let dimension = IntegerAttribute::try_from(attribute)
            .map(|integer| integer.value())
            .map_err(|_| wrong(&self.op, name, "an integer", attribute))?;
        axes_of(&self.op, name, &[dimension], rank(self.result()))?;
        Ok(dimension)
    }
}

impl Slice<'_, '_> {
    pub fn start_indices(&self) -> Result<Vec<i64>, ViewError> {
        i64_array(&self.op, "start_indices")
    }
    pub fn limit_indices(&self) -> Result<Vec<i64>, ViewError> {
        i64_array(&self.op, "limit_indices")
    }
    pub fn strides(&self) -> Result<Vec<i64>, ViewError> {
        i64_array(&self.op, "strides")
    }
}

impl<'c> Constant<'c, '_> {
    pub fn value(&self) -> Result<Attribute<'c>, ViewError> {
        attribute(&self.op, "value")
    }
    /// The constant's value if every element is the same.
    pub fn splat(&self) -> Option<f64> {
        splat_value(self.value().ok()?)
    }
}

impl Transpose<'_, '_> {
    /// A permutation of the operand's axes, checked.
    pub fn permutation(&self) -> Result<Vec<i64>, ViewError> {
        let permutation = i64_array(&self.op, "permutation")?;
        let input_rank = rank(self.operand(0));
        if input_rank.is_some_and(|input| input != permutation.len()) {
            let problem = "is not a permutation of the operand's axes".into();
            return Err(ViewError::OutOfRange { op: op_name(&self.op), name: "permutation".into(), problem });
        }
        axes_of(&self.op, "permutation", &permutation, input_rank)?;
        Ok(permutation)
    }
}

impl CustomCall<'_, '_> {
    pub fn call_target_name(&self) -> Result<String, ViewError> {
        let name = "call_target_name";
        let attribute = attribute(&self.op, name)?;
        crate::ir::string_attribute(attribute).ok_or_else(|| wrong(&self.op, name, "a string", attribute))
    }
    /// `backend_config` as written: a string (JSON for Mosaic kernels) or a dictionary.
    pub fn backend_config(&self) -> Option<Attribute<'_>> {
        self.op.attribute("backend_config").ok()
    }
}
