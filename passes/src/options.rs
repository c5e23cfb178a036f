//! Pass options: declared per pass, parsed from MLIR's `{key=value key2=value2}` syntax.

use crate::target::Generation;
use std::collections::BTreeMap;

/// The type an option's value must have.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OptionKind {
    Bool,
    Int,
    Float,
    Choice(&'static [&'static str]),
}

/// One declared option of a pass.
#[derive(Clone, Copy, Debug)]
pub struct OptionSpec {
    pub name: &'static str,
    pub kind: OptionKind,
    pub default: &'static str,
    pub help: &'static str,
}

impl OptionSpec {
    fn check(&self, value: &str) -> Result<(), String> {
        let ok = match self.kind {
            OptionKind::Bool => matches!(value, "true" | "false" | "1" | "0"),
            OptionKind::Int => value.parse::<i64>().is_ok(),
            OptionKind::Float => value.parse::<f64>().is_ok(),
            OptionKind::Choice(choices) => choices.contains(&value),
        };
        if ok {
            Ok(())
        } else {
            Err(format!("invalid value '{value}' for option '{}' ({})", self.name, self.kind_name()))
        }
    }

    pub fn kind_name(&self) -> String {
        match self.kind {
            OptionKind::Bool => "bool".into(),
            OptionKind::Int => "integer".into(),
            OptionKind::Float => "float".into(),
            OptionKind::Choice(choices) => choices.join("|"),
        }
    }
}

/// The option values of one pass instance, defaults filled in.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PassOptions {
    values: BTreeMap<&'static str, String>,
}

impl PassOptions {
    /// Parses `key=value` pairs separated by spaces against the declared options.
    pub fn parse(specs: &[OptionSpec], text: &str) -> Result<Self, String> {
        let mut values: BTreeMap<&'static str, String> =
            specs.iter().map(|spec| (spec.name, spec.default.to_owned())).collect();
        for item in text.split_whitespace() {
            let (key, value) = item.split_once('=').unwrap_or((item, "true"));
            let spec = specs.iter().find(|spec| spec.name == key).ok_or_else(|| {
                let known: Vec<&str> = specs.iter().map(|spec| spec.name).collect();
                if known.is_empty() {
                    format!("unknown option '{key}' (this pass has no options)")
                } else {
                    format!("unknown option '{key}' (known: {})", known.join(", "))
                }
            })?;
            spec.check(value)?;
            values.insert(spec.name, value.to_owned());
        }
        Ok(PassOptions { values })
    }

    fn raw(&self, name: &str) -> &str {
        self.values.get(name).unwrap_or_else(|| panic!("option '{name}' is declared"))
    }

    pub fn bool(&self, name: &str) -> bool {
        matches!(self.raw(name), "true" | "1")
    }

    pub fn int(&self, name: &str) -> i64 {
        self.raw(name).parse().expect("checked when parsed")
    }

    pub fn float(&self, name: &str) -> f64 {
        self.raw(name).parse().expect("checked when parsed")
    }

    pub fn choice(&self, name: &str) -> &str {
        self.raw(name)
    }

    /// The generation a choice of TARGETS names.
    pub fn generation(&self, name: &str) -> Generation {
        Generation::named(self.raw(name)).unwrap_or(Generation::V6e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SPECS: &[OptionSpec] = &[
        OptionSpec { name: "block-q", kind: OptionKind::Int, default: "512", help: "" },
        OptionSpec { name: "exact", kind: OptionKind::Bool, default: "false", help: "" },
        OptionSpec { name: "target", kind: OptionKind::Choice(&["v5e", "v6e"]), default: "v6e", help: "" },
    ];

    #[test]
    fn defaults_and_overrides() {
        let options = PassOptions::parse(SPECS, "").unwrap();
        assert_eq!((options.int("block-q"), options.bool("exact"), options.choice("target")), (512, false, "v6e"));
        let options = PassOptions::parse(SPECS, "block-q=256  exact target=v5e").unwrap();
        assert_eq!((options.int("block-q"), options.bool("exact"), options.choice("target")), (256, true, "v5e"));
    }

    #[test]
    fn errors_name_the_option() {
        let unknown = PassOptions::parse(SPECS, "block-k=1").unwrap_err();
        assert!(unknown.contains("unknown option 'block-k'") && unknown.contains("block-q"), "{unknown}");
        let bad = PassOptions::parse(SPECS, "block-q=big").unwrap_err();
        assert!(bad.contains("'block-q'") && bad.contains("integer"), "{bad}");
        assert!(PassOptions::parse(SPECS, "target=v7").is_err());
        assert!(PassOptions::parse(&[], "x=1").unwrap_err().contains("no options"));
    }
}
