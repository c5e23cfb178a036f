//! Shapes and element types of tensor values, read once so checks stay short.

use melior::ir::{
    r#type::{DimSize, IntegerType, RankedTensorType, ShapedTypeLike},
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
        let shape = (0..tensor.rank())
            .map(|dim| match tensor.dim_size(dim) {
                Ok(DimSize::Static(size)) => i64::try_from(size).ok(),
                _ => None,
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

    /// The element type spelled as MLIR prints it (`f32`, `bf16`, `i1`).
    pub fn element_name(&self) -> String {
        self.element.to_string()
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
