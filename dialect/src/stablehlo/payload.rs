//! Parsing and printing of StableHLO's dialect attribute payloads, which upstream MLIR
//! keeps as opaque text (`#stablehlo.dot<...>`, `#stablehlo<comparison_direction LT>`).

use std::fmt;
use thiserror::Error;

#[derive(Debug, Error, PartialEq, Eq)]
pub enum PayloadError {
    #[error("expected {expected} in `{text}`")]
    Expected { expected: &'static str, text: String },
    #[error("unknown {kind} `{value}`")]
    Unknown { kind: &'static str, value: String },
}

fn expected(expected: &'static str, text: &str) -> PayloadError {
    PayloadError::Expected { expected, text: text.to_owned() }
}

/// A field value in a struct-like payload.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FieldValue {
    Integers(Vec<i64>),
    Word(String),
}

/// `name<key = value, ...>` (the data of `#stablehlo.name<...>`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StructPayload {
    pub name: String,
    pub fields: Vec<(String, FieldValue)>,
}

impl StructPayload {
    pub fn parse(text: &str) -> Result<Self, PayloadError> {
        let text = text.trim();
        let open = text.find('<').ok_or_else(|| expected("`<`", text))?;
        let body = text[open + 1..].strip_suffix('>').ok_or_else(|| expected("a closing `>`", text))?;
        let mut fields = Vec::new();
        for field in split_top_level(body) {
            let (key, value) = field.split_once('=').ok_or_else(|| expected("`key = value`", field))?;
            let value = value.trim();
            let value = if let Some(list) = value.strip_prefix('[') {
                let list = list.strip_suffix(']').ok_or_else(|| expected("a closing `]`", value))?;
                let integers = list
                    .split(',')
                    .map(str::trim)
                    .filter(|item| !item.is_empty())
                    .map(|item| item.parse().map_err(|_| expected("an integer", item)))
                    .collect::<Result<_, _>>()?;
                FieldValue::Integers(integers)
            } else {
                FieldValue::Word(value.to_owned())
            };
            fields.push((key.trim().to_owned(), value));
        }
        Ok(StructPayload { name: text[..open].trim().to_owned(), fields })
    }

    pub fn integers(&self, key: &str) -> Vec<i64> {
        self.fields
            .iter()
            .find_map(|(k, v)| match v {
                FieldValue::Integers(list) if k == key => Some(list.clone()),
                _ => None,
            })
            .unwrap_or_default()
    }
}

/// Splits on commas outside brackets.
fn split_top_level(text: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0i32, 0);
    for (i, c) in text.char_indices() {
        match c {
            '[' | '<' | '(' => depth += 1,
            ']' | '>' | ')' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(text[start..i].trim());
                start = i + 1;
            }
            _ => {}
        }
    }
    let last = text[start..].trim();
    if !last.is_empty() {
        parts.push(last);
    }
    parts
}

/// `#stablehlo.dot<...>`: which dimensions of a `dot_general` are batch and contracting.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DotDimensionNumbers {
    pub lhs_batching: Vec<i64>,
    pub rhs_batching: Vec<i64>,
    pub lhs_contracting: Vec<i64>,
    pub rhs_contracting: Vec<i64>,
}

impl DotDimensionNumbers {
    /// Parses the opaque data `dot<...>`.
    pub fn parse(data: &str) -> Result<Self, PayloadError> {
        let payload = StructPayload::parse(data)?;
        if payload.name != "dot" {
            return Err(expected("`dot<...>`", data));
        }
        Ok(DotDimensionNumbers {
            lhs_batching: payload.integers("lhs_batching_dimensions"),
            rhs_batching: payload.integers("rhs_batching_dimensions"),
            lhs_contracting: payload.integers("lhs_contracting_dimensions"),
            rhs_contracting: payload.integers("rhs_contracting_dimensions"),
        })
    }
}

impl fmt::Display for DotDimensionNumbers {
    /// The attribute as StableHLO prints it: empty lists are left out.
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        let fields = [
            ("lhs_batching_dimensions", &self.lhs_batching),
            ("rhs_batching_dimensions", &self.rhs_batching),
            ("lhs_contracting_dimensions", &self.lhs_contracting),
            ("rhs_contracting_dimensions", &self.rhs_contracting),
        ];
        let text: Vec<String> = fields
            .iter()
            .filter(|(_, dims)| !dims.is_empty())
            .map(|(name, dims)| {
                let dims: Vec<String> = dims.iter().map(i64::to_string).collect();
                format!("{name} = [{}]", dims.join(", "))
            })
            .collect();
        write!(f, "#stablehlo.dot<{}>", text.join(", "))
    }
}

/// `#stablehlo.scatter<...>`: how a `scatter`'s indices and updates address its operand.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ScatterDimensionNumbers {
    pub update_window_dims: Vec<i64>,
    pub inserted_window_dims: Vec<i64>,
    pub input_batching_dims: Vec<i64>,
    pub scatter_indices_batching_dims: Vec<i64>,
    pub scatter_dims_to_operand_dims: Vec<i64>,
    pub index_vector_dim: i64,
}

impl ScatterDimensionNumbers {
    /// Parses the opaque data `scatter<...>` (a field left out is empty, or 0).
    pub fn parse(data: &str) -> Result<Self, PayloadError> {
        let payload = StructPayload::parse(data)?;
        if payload.name != "scatter" {
            return Err(expected("`scatter<...>`", data));
        }
        let index_vector_dim = match payload.fields.iter().find(|(key, _)| key == "index_vector_dim") {
            Some((_, FieldValue::Word(word))) => word.parse().map_err(|_| expected("an integer", word))?,
            Some(_) => return Err(expected("an integer index_vector_dim", data)),
            None => 0,
        };
        Ok(ScatterDimensionNumbers {
            update_window_dims: payload.integers("update_window_dims"),
            inserted_window_dims: payload.integers("inserted_window_dims"),
            input_batching_dims: payload.integers("input_batching_dims"),
            scatter_indices_batching_dims: payload.integers("scatter_indices_batching_dims"),
            scatter_dims_to_operand_dims: payload.integers("scatter_dims_to_operand_dims"),
            index_vector_dim,
        })
    }
}

/// Defines an enum payload `#stablehlo<kind VALUE>` with its spellings.
macro_rules! enum_payload {
    ($(#[$doc:meta])* $name:ident, $kind:literal, { $($variant:ident = $spelling:literal),+ $(,)? }) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub enum $name { $($variant),+ }

        impl $name {
            pub const KIND: &'static str = $kind;

            /// Parses the opaque data `kind VALUE`.
            pub fn parse(data: &str) -> Result<Self, PayloadError> {
                let value = data
                    .trim()
                    .strip_prefix($kind)
                    .ok_or_else(|| expected(concat!("`", $kind, " ...`"), data))?
                    .trim();
                match value {
                    $($spelling => Ok($name::$variant),)+
                    _ => Err(PayloadError::Unknown { kind: $kind, value: value.to_owned() }),
                }
            }

            pub fn spelling(self) -> &'static str {
                match self { $($name::$variant => $spelling),+ }
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
                write!(f, "#stablehlo<{} {}>", $kind, self.spelling())
            }
        }
    };
}

enum_payload!(
    /// The relation a `compare` tests.
    ComparisonDirection, "comparison_direction",
    { Eq = "EQ", Ne = "NE", Ge = "GE", Gt = "GT", Le = "LE", Lt = "LT" }
);

impl ComparisonDirection {
    /// The relation that holds exactly where this one does not (for ordered operands).
    pub fn negated(self) -> Self {
        use ComparisonDirection::*;
        match self {
            Eq => Ne,
            Ne => Eq,
            Ge => Lt,
            Gt => Le,
            Le => Gt,
            Lt => Ge,
        }
    }

    /// The relation with the operands swapped: `a < b` is `b > a`.
    pub fn swapped(self) -> Self {
        use ComparisonDirection::*;
        match self {
            Ge => Le,
            Gt => Lt,
            Le => Ge,
            Lt => Gt,
            same => same,
        }
    }

    /// Whether `a` relates to `b` so.
    pub fn holds(self, a: f64, b: f64) -> bool {
        use ComparisonDirection::*;
        match self {
            Eq => a == b,
            Ne => a != b,
            Ge => a >= b,
            Gt => a > b,
            Le => a <= b,
            Lt => a < b,
        }
    }
}

enum_payload!(
    /// How a `compare` orders its operands.
    ComparisonType, "comparison_type",
    { NoType = "NOTYPE", Float = "FLOAT", TotalOrder = "TOTALORDER", Signed = "SIGNED", Unsigned = "UNSIGNED" }
);

enum_payload!(
    /// A `dot_general` operand's precision.
    Precision, "precision",
    { Default = "DEFAULT", High = "HIGH", Highest = "HIGHEST" }
);

impl Precision {
    /// The bf16 passes of the MXU a TPU spends on an f32 product at this precision: one
    /// pass rounds each operand to bf16; HIGH and HIGHEST are within f32 rounding of
    /// the exact product.
    pub fn passes(self) -> u32 {
        match self {
            Precision::Default => 1,
            Precision::High => 3,
            Precision::Highest => 6,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dot_dimension_numbers_round_trip() {
        let data = "dot<lhs_batching_dimensions = [0, 2], rhs_batching_dimensions = [0, 2], \
                    lhs_contracting_dimensions = [3], rhs_contracting_dimensions = [3]>";
        let dims = DotDimensionNumbers::parse(data).unwrap();
        assert_eq!(dims.lhs_batching, vec![0, 2]);
        assert_eq!(dims.rhs_contracting, vec![3]);
        assert_eq!(dims.to_string(), format!("#stablehlo.{data}"));
    }

    #[test]
    fn dot_dimension_numbers_without_contraction() {
        let dims =
            DotDimensionNumbers::parse("dot<lhs_batching_dimensions = [0, 1], rhs_batching_dimensions = [0, 1]>")
                .unwrap();
        assert!(dims.lhs_contracting.is_empty());
        assert_eq!(
            dims.to_string(),
            "#stablehlo.dot<lhs_batching_dimensions = [0, 1], rhs_batching_dimensions = [0, 1]>"
        );
    }

    #[test]
    fn scatter_dimension_numbers() {
        let data = "scatter<update_window_dims = [0, 1, 2], inserted_window_dims = [2], \
                    scatter_dims_to_operand_dims = [2], index_vector_dim = 1>";
        let dims = ScatterDimensionNumbers::parse(data).unwrap();
        assert_eq!(dims.update_window_dims, vec![0, 1, 2]);
        assert_eq!((dims.inserted_window_dims, dims.scatter_dims_to_operand_dims), (vec![2], vec![2]));
        assert_eq!(dims.index_vector_dim, 1);
        assert!(dims.input_batching_dims.is_empty());
        let defaults = ScatterDimensionNumbers::parse("scatter<inserted_window_dims = [0]>").unwrap();
        assert_eq!(defaults.index_vector_dim, 0);
        assert!(ScatterDimensionNumbers::parse("scatter<index_vector_dim = x>").is_err());
        assert!(ScatterDimensionNumbers::parse("gather<>").is_err());
    }

    #[test]
    fn malformed_dot_payloads_are_errors() {
        assert!(DotDimensionNumbers::parse("dot<lhs_batching_dimensions = [0, x]>").is_err());
        assert!(DotDimensionNumbers::parse("dot<lhs_batching_dimensions = [0]").is_err());
        assert!(DotDimensionNumbers::parse("conv<>").is_err());
    }

    #[test]
    fn enum_payloads() {
        assert_eq!(ComparisonDirection::parse("comparison_direction LT"), Ok(ComparisonDirection::Lt));
        assert_eq!(ComparisonType::parse("comparison_type SIGNED"), Ok(ComparisonType::Signed));
        assert_eq!(Precision::parse("precision DEFAULT").unwrap().to_string(), "#stablehlo<precision DEFAULT>");
        assert!(ComparisonDirection::parse("comparison_direction XX").is_err());
        assert!(ComparisonDirection::parse("precision LT").is_err());
    }
}
