//! Building a pass manager from MLIR's textual pipeline syntax, with FlyWheel passes
//! (which MLIR's registry does not know) mixed with upstream ones:
//! `builtin.module(flywheel-verify, canonicalize, func.func(cse))`.
//!
//! melior's `parse_pass_pipeline` replaces a pass manager's contents, so each element is
//! added on its own: FlyWheel passes by the registry, nested pipelines by recursion, and
//! everything else through `mlirOpPassManagerAddPipeline`.

use crate::registry::{find_pass, find_pipeline};
use melior::{pass::OperationPassManager, utility::register_all_passes, StringRef};
use mlir_sys::{mlirOpPassManagerAddPipeline, MlirStringRef};
use std::ffi::c_void;

/// One element of a pipeline: a pass with its option text, or an op-anchored nest.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Element {
    Pass { name: String, options: String },
    Nest { op: String, elements: Vec<Element> },
}

impl Element {
    fn to_text(&self) -> String {
        match self {
            Element::Pass { name, options } if options.is_empty() => name.clone(),
            Element::Pass { name, options } => format!("{name}{{{options}}}"),
            Element::Nest { op, elements } => format!("{op}({})", elements_text(elements)),
        }
    }
}

fn elements_text(elements: &[Element]) -> String {
    elements.iter().map(Element::to_text).collect::<Vec<_>>().join(",")
}

/// Parses a comma-separated list of pipeline elements.
pub fn parse(text: &str) -> Result<Vec<Element>, String> {
    let mut parser = Parser { text, position: 0 };
    let elements = parser.elements()?;
    parser.skip_space();
    if parser.position != text.len() {
        return Err(parser.error("unexpected text"));
    }
    Ok(elements)
}

struct Parser<'t> {
    text: &'t str,
    position: usize,
}

impl Parser<'_> {
    fn rest(&self) -> &str {
        &self.text[self.position..]
    }

    fn skip_space(&mut self) {
        self.position = self.text.len() - self.rest().trim_start().len();
    }

    fn error(&self, message: &str) -> String {
        format!("invalid pass pipeline at column {}: {message} in '{}'", self.position + 1, self.text)
    }

    fn eat(&mut self, c: char) -> bool {
        self.skip_space();
        let found = self.rest().starts_with(c);
        if found {
            self.position += c.len_utf8();
        }
        found
    }

    fn elements(&mut self) -> Result<Vec<Element>, String> {
        let mut elements = Vec::new();
        self.skip_space();
        if self.rest().is_empty() || self.rest().starts_with(')') {
            return Ok(elements);
        }
        loop {
            elements.push(self.element()?);
            if !self.eat(',') {
                return Ok(elements);
            }
        }
    }

    fn element(&mut self) -> Result<Element, String> {
        self.skip_space();
        let length =
            self.rest().find(|c: char| !(c.is_alphanumeric() || "-_.".contains(c))).unwrap_or(self.rest().len());
        if length == 0 {
            return Err(self.error("expected a pass or operation name"));
        }
        let name = self.rest()[..length].to_owned();
        self.position += length;
        if self.eat('(') {
            let elements = self.elements()?;
            if !self.eat(')') {
                return Err(self.error("expected ')'"));
            }
            return Ok(Element::Nest { op: name, elements });
        }
        let options = if self.eat('{') { self.braced()? } else { String::new() };
        Ok(Element::Pass { name, options })
    }

    /// The text up to the matching `}` (options may nest braces).
    fn braced(&mut self) -> Result<String, String> {
        let mut depth = 1;
        for (offset, c) in self.rest().char_indices() {
            depth += match c {
                '{' => 1,
                '}' => -1,
                _ => 0,
            };
            if depth == 0 {
                let options = self.rest()[..offset].trim().to_owned();
                self.position += offset + 1;
                return Ok(options);
            }
        }
        Err(self.error("expected '}'"))
    }
}

/// Adds `elements` to `manager` in order.
pub fn add_elements(manager: OperationPassManager, elements: &[Element]) -> Result<(), String> {
    for element in elements {
        match element {
            Element::Nest { op, elements } => add_elements(manager.nested_under(op), elements)?,
            Element::Pass { name, options } => match (find_pass(name), find_pipeline(name)) {
                (Some(info), _) => manager.add_pass(info.instantiate(options)?),
                (None, Some(pipeline)) => add_elements(manager, &parse(&pipeline.expand_with(options)?)?)?,
                (None, None) => add_upstream(manager, &element.to_text())?,
            },
        }
    }
    Ok(())
}

/// Adds a full pipeline string anchored on `builtin.module` (the form of
/// `--pass-pipeline`) to a pass manager anchored on `builtin.module`.
pub fn add_module_pipeline(manager: OperationPassManager, text: &str) -> Result<(), String> {
    match parse(text)?.as_slice() {
        [Element::Nest { op, elements }] if op == "builtin.module" => add_elements(manager, elements),
        _ => Err(format!("the pass pipeline must have the form 'builtin.module(...)', got '{text}'")),
    }
}

fn add_upstream(manager: OperationPassManager, text: &str) -> Result<(), String> {
    register_all_passes();
    unsafe extern "C" fn collect(message: MlirStringRef, data: *mut c_void) {
        let buffer = unsafe { &mut *(data as *mut String) };
        if let Ok(text) = unsafe { StringRef::from_raw(message) }.as_str() {
            buffer.push_str(text);
        }
    }
    let mut message = String::new();
    let result = unsafe {
        mlirOpPassManagerAddPipeline(
            manager.to_raw(),
            StringRef::new(text).to_raw(),
            Some(collect),
            &mut message as *mut String as *mut c_void,
        )
    };
    if result.value == 0 {
        let message = message.trim();
        return Err(if message.is_empty() { format!("unknown pass or pipeline '{text}'") } else { message.to_owned() });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pass(name: &str, options: &str) -> Element {
        Element::Pass { name: name.into(), options: options.into() }
    }

    #[test]
    fn parses_nesting_and_options() {
        let parsed =
            parse("builtin.module(flywheel-verify, canonicalize{max-iterations=2 test-convergence}, func.func(cse))")
                .unwrap();
        let expected = vec![Element::Nest {
            op: "builtin.module".into(),
            elements: vec![
                pass("flywheel-verify", ""),
                pass("canonicalize", "max-iterations=2 test-convergence"),
                Element::Nest { op: "func.func".into(), elements: vec![pass("cse", "")] },
            ],
        }];
        assert_eq!(parsed, expected);
        assert_eq!(
            parsed[0].to_text(),
            "builtin.module(flywheel-verify,canonicalize{max-iterations=2 test-convergence},func.func(cse))"
        );
    }

    #[test]
    fn empty_nest_and_malformed_text() {
        assert_eq!(
            parse("builtin.module()").unwrap()[0],
            Element::Nest { op: "builtin.module".into(), elements: vec![] }
        );
        for bad in ["builtin.module(cse", "builtin.module(cse{a=1)", "builtin.module(,)", "cse) x"] {
            assert!(parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn every_named_pipeline_expands_to_a_pipeline_that_parses_and_builds() {
        for pipeline in crate::registry::pipelines() {
            for target in crate::target::Generation::NAMES {
                let text = pipeline.expand_with(&format!("target={target} remarks=true")).unwrap();
                let elements = parse(&text).unwrap();
                assert!(elements.len() > 5, "{text}");
                let context = flywheel_dialect::create_context();
                let manager = melior::pass::PassManager::new(&context);
                add_elements(manager.as_operation_pass_manager(), &elements).unwrap();
            }
        }
    }
}
