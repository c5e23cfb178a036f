//! Shapes and element types of tensor values, read once so checks stay short.

use melior::ir::{
    r#type::{IntegerType, RankedTensorType, ShapedTypeLike},
    Type, TypeLike, Value, ValueLike,
};

/// The static facts about a ranked tensor: dimension sizes (`None` when dynamic) and
/// element type.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TensorInfo<'c> {
    pub shape: Vec<Option<i64>>,
    pub element: Type<'c>,
}

impl<'c> TensorInfo<'c> {
    pub fn of_type(r#type: Type<'c>) -> Option<Self> {
        let tensor = RankedTensorType::try_from(r#type).ok()?;
        let raw = tensor.to_raw();
        // Read straight from the C API: melior's checked `dim_size` costs most of the time
        // the raisers spend reading shapes.
        // SAFETY: a live ranked tensor type and dimensions below its rank.
        let shape = (0..tensor.rank() as isize)
            .map(|dim| {
                let size = unsafe { mlir_sys::mlirShapedTypeGetDimSize(raw, dim) };
                (!unsafe { mlir_sys::mlirShapedTypeIsDynamicSize(size) }).then_some(size)
            })
            .collect();
        Some(TensorInfo { shape, element: tensor.element() })
    }

    pub fn of_value(value: Value<'c, '_>) -> Option<Self> {
        Self::of_type(value.r#type())
    }

    pub fn rank(&self) -> usize {
        self.shape.len()
    }

    pub fn is_float(&self) -> bool {
        self.element.is_float()
    }

    pub fn is_integer(&self) -> bool {
        self.element.is_integer()
    }

    pub fn is_bool(&self) -> bool {
        is_i1(self.element)
    }

    /// The element type spelled as MLIR prints it (`f32`, `bf16`, `i1`): the common ones
    /// named without printing the type, which the raisers would do for every op they read.
    pub fn element_name(&self) -> String {
        let element = self.element;
        let name = if element.is_f32() {
            "f32"
        } else if element.is_bf16() {
            "bf16"
        } else if element.is_f16() {
            "f16"
        } else if element.is_f64() {
            "f64"
        } else {
            return match IntegerType::try_from(element) {
                Ok(integer) if integer.is_signless() => format!("i{}", integer.width()),
                _ => element.to_string(),
            };
        };
        name.to_owned()
    }
}

/// Whether a type is the 1-bit integer MLIR uses for booleans.
pub fn is_i1(r#type: Type) -> bool {
    IntegerType::try_from(r#type).is_ok_and(|integer| integer.width() == 1)
}

/// Two dimension sizes agree unless both are static and differ.
pub fn dims_agree(a: Option<i64>, b: Option<i64>) -> bool {
    match (a, b) {
        (Some(a), Some(b)) => a == b,
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::TensorInfo;
    use melior::ir::Type;

    #[test]
    fn element_names_are_the_printed_types() {
        let context = crate::create_context();
        for element in ["f32", "bf16", "f16", "f64", "i1", "i32", "i64", "ui32", "si8", "f8E4M3FN", "complex<f32>"] {
            let r#type = Type::parse(&context, &format!("tensor<2x{element}>")).expect("parses");
            assert_eq!(TensorInfo::of_type(r#type).expect("a tensor").element_name(), element);
        }
    }
}
