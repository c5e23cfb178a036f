//! Typed pass options, parsed from MLIR's `{key=value key2=value2}` syntax.
//!
//! A pass declares its options once, as a struct through [`pass_options!`]: each field
//! with its flag, default and help. The declaration gives both the option table that
//! `--list-passes`, `--help` and docs/passes.md print, and a parser into the struct, so
//! a pass reads its options as fields (no lookups by name). Choices are enums declared
//! through [`choice!`].

/// The type an option's value must have.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OptionKind {
    Bool,
    Int,
    Float,
    Choice(&'static [&'static str]),
}

impl OptionKind {
    /// How help text names the kind.
    pub fn name(self) -> String {
        match self {
            OptionKind::Bool => "bool".into(),
            OptionKind::Int => "integer".into(),
            OptionKind::Float => "float".into(),
            OptionKind::Choice(choices) => choices.join("|"),
        }
    }
}

/// One declared option of a pass.
#[derive(Clone, Copy, Debug)]
pub struct OptionSpec {
    pub name: &'static str,
    pub kind: OptionKind,
    pub default: &'static str,
    pub help: &'static str,
}

/// A type an option's value can have.
pub trait OptionValue: Sized {
    const KIND: OptionKind;
    fn parse(text: &str) -> Option<Self>;
}

impl OptionValue for bool {
    const KIND: OptionKind = OptionKind::Bool;
    fn parse(text: &str) -> Option<Self> {
        match text {
            "true" | "1" => Some(true),
            "false" | "0" => Some(false),
            _ => None,
        }
    }
}

impl OptionValue for i64 {
    const KIND: OptionKind = OptionKind::Int;
    fn parse(text: &str) -> Option<Self> {
        text.parse().ok()
    }
}

impl OptionValue for f64 {
    const KIND: OptionKind = OptionKind::Float;
    fn parse(text: &str) -> Option<Self> {
        text.parse().ok()
    }
}

/// A pass's options as a struct: its option table and a parser into it.
pub trait Options: Sized {
    const SPECS: &'static [OptionSpec];
    fn parse(text: &str) -> Result<Self, String>;
}

/// The value text of each of `specs` in `text` (`key=value` pairs separated by spaces; a
/// bare `key` means `key=true`), defaults filled in, in the order of `specs`.
pub fn values<'t>(specs: &[OptionSpec], text: &'t str) -> Result<Vec<&'t str>, String> {
    let mut values: Vec<&'t str> = specs.iter().map(|spec| spec.default).collect();
    for item in text.split_whitespace() {
        let (key, value) = item.split_once('=').unwrap_or((item, "true"));
        let index = specs.iter().position(|spec| spec.name == key).ok_or_else(|| {
            let known: Vec<&str> = specs.iter().map(|spec| spec.name).collect();
            if known.is_empty() {
                format!("unknown option '{key}' (this pass has no options)")
            } else {
                format!("unknown option '{key}' (known: {})", known.join(", "))
            }
        })?;
        values[index] = value;
    }
    Ok(values)
}

/// Parses one option's value text as its type.
pub fn value<T: OptionValue>(spec: &OptionSpec, text: &str) -> Result<T, String> {
    T::parse(text).ok_or_else(|| format!("invalid value '{text}' for option '{}' ({})", spec.name, spec.kind.name()))
}

/// Declares a pass's options as a struct implementing [`Options`]:
///
/// ```ignore
/// pass_options! {
///     pub struct TileOptions {
///         /// Queries per grid step.
///         block_q: i64 = ("block-q", "1024"),
///     }
/// }
/// ```
#[macro_export]
macro_rules! pass_options {
    ($(#[$meta:meta])* $vis:vis struct $name:ident {
        $($(#[doc = $help:literal])+ $field:ident: $type:ty = ($flag:literal, $default:literal)),* $(,)?
    }) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq)]
        $vis struct $name {
            $($(#[doc = $help])+ pub $field: $type,)*
        }

        impl $crate::options::Options for $name {
            const SPECS: &'static [$crate::options::OptionSpec] = &[$($crate::options::OptionSpec {
                name: $flag,
                kind: <$type as $crate::options::OptionValue>::KIND,
                default: $default,
                help: concat!($($help),+),
            }),*];

            #[allow(unused_variables, unused_mut)]
            fn parse(text: &str) -> Result<Self, String> {
                let values = $crate::options::values(Self::SPECS, text)?;
                let mut index = 0..;
                Ok($name {$($field: {
                    let i = index.next().unwrap_or_default();
                    $crate::options::value(&Self::SPECS[i], values[i])?
                },)*})
            }
        }
    };
}

/// Declares an enum whose variants an option names, implementing [`OptionValue`].
#[macro_export]
macro_rules! choice {
    ($(#[$meta:meta])* $vis:vis enum $name:ident {
        $($(#[$variant_meta:meta])* $variant:ident = $text:literal),+ $(,)?
    }) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        $vis enum $name {
            $($(#[$variant_meta])* $variant,)+
        }

        impl $name {
            /// The names options give the variants, in declaration order.
            pub const NAMES: &'static [&'static str] = &[$($text),+];

            /// The name an option gives this variant.
            pub fn name(self) -> &'static str {
                match self {
                    $($name::$variant => $text,)+
                }
            }
        }

        impl $crate::options::OptionValue for $name {
            const KIND: $crate::options::OptionKind = $crate::options::OptionKind::Choice(Self::NAMES);
            fn parse(text: &str) -> Option<Self> {
                match text {
                    $($text => Some($name::$variant),)+
                    _ => None,
                }
            }
        }
    };
}

crate::pass_options! {
    /// The options of a pass that has none.
    pub struct NoOptions {}
}

#[cfg(test)]
mod tests {
    use super::*;

    crate::choice! {
        enum Target {
            V5e = "v5e",
            V6e = "v6e",
        }
    }

    crate::pass_options! {
        struct Example {
            /// Queries.
            block_q: i64 = ("block-q", "512"),
            /// Exact.
            exact: bool = ("exact", "false"),
            /// The target.
            target: Target = ("target", "v6e"),
            /// A limit.
            limit: f64 = ("limit", "64"),
        }
    }

    #[test]
    fn defaults_and_overrides() {
        let options = Example::parse("").unwrap();
        assert_eq!(options, Example { block_q: 512, exact: false, target: Target::V6e, limit: 64.0 });
        let options = Example::parse("block-q=256  exact target=v5e limit=1.5").unwrap();
        assert_eq!(options, Example { block_q: 256, exact: true, target: Target::V5e, limit: 1.5 });
        assert_eq!(Example::SPECS[2].kind, OptionKind::Choice(&["v5e", "v6e"]));
        assert_eq!(Example::SPECS[0].help, " Queries.");
        assert_eq!(Target::V5e.name(), "v5e");
    }

    #[test]
    fn errors_name_the_option() {
        let unknown = Example::parse("block-k=1").unwrap_err();
        assert!(unknown.contains("unknown option 'block-k'") && unknown.contains("block-q"), "{unknown}");
        let bad = Example::parse("block-q=big").unwrap_err();
        assert!(bad.contains("'block-q'") && bad.contains("integer"), "{bad}");
        assert!(Example::parse("target=v7").unwrap_err().contains("v5e|v6e"));
        assert!(Example::parse("exact=yes").is_err());
        assert!(values(&[], "x=1").unwrap_err().contains("no options"));
    }
}
