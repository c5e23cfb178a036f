//! The one list of FlyWheel passes and pipelines, by the names pipelines and `--flag`s
//! use. Only the drivers (`flywheel-opt`, pipeline parsing) read it.

use crate::{
    options::OptionSpec,
    pass::{PassInfo, PipelineInfo},
};

/// Every named pipeline.
pub fn pipelines() -> &'static [PipelineInfo] {
    static PIPELINES: &[PipelineInfo] = &[crate::pipelines::tpu::PIPELINE];
    PIPELINES
}

pub fn find_pipeline(name: &str) -> Option<&'static PipelineInfo> {
    pipelines().iter().find(|pipeline| pipeline.name == name)
}

/// Every FlyWheel pass, in pipeline order.
pub fn passes() -> &'static [PassInfo] {
    static PASSES: &[PassInfo] = &[
        crate::raise::normalize::PASS,
        crate::raise::attention::PASS,
        crate::raise::gated_delta::PASS,
        crate::prepare::verify::PASS,
        crate::prepare::shard::PASS,
        crate::prepare::layout::PASS,
        crate::tile::PASS,
        crate::transforms::exp_softmax::PASS,
        crate::transforms::software_pipeline::PASS,
        crate::transforms::tri_inverse::PASS,
        crate::lower::to_mosaic::PASS,
        crate::lower::to_stablehlo::PASS,
        crate::lower::tpu_precision::PASS,
    ];
    PASSES
}

pub fn find_pass(name: &str) -> Option<&'static PassInfo> {
    passes().iter().find(|pass| pass.name == name)
}

/// What `flywheel-opt --list-passes` (and `--help`) prints: every pass and pipeline with
/// its summary and options.
pub fn listing() -> String {
    let mut text = String::from("FlyWheel passes (use in --pass-pipeline or as --NAME[=OPTIONS]):\n");
    for pass in passes() {
        list_entry(&mut text, pass.name, pass.summary, pass.options);
    }
    text.push_str("FlyWheel pipelines (the same ways):\n");
    for pipeline in pipelines() {
        list_entry(&mut text, pipeline.name, pipeline.summary, pipeline.options);
    }
    text.push_str("Upstream MLIR passes (canonicalize, cse, ...) are accepted by name as well.\n");
    text
}

fn list_entry(text: &mut String, name: &str, summary: &str, options: &[OptionSpec]) {
    text.push_str(&format!("  {name:<28} {summary}\n"));
    for option in options {
        let (name, kind, help, default) = (option.name, option.kind.name(), option.help.trim(), option.default);
        text.push_str(&format!("      {name}=<{kind}>  {help} (default: {default})\n"));
    }
}

/// docs/passes.md: every pass and pipeline with its summary, description and options.
pub fn markdown() -> String {
    let mut text = String::from(
        "# Passes\n\n<!-- Generated from the pass declarations by `flywheel-opt --pass-docs`; do not edit. -->\n\n\
         Every pass is a `flywheel-opt` flag (`--NAME` or `--NAME=key=value ...`) and a name in \
         `--pass-pipeline='builtin.module(NAME{key=value ...})'`. Pipelines are used the same ways.\n",
    );
    for pass in passes() {
        markdown_entry(&mut text, pass.name, pass.summary, pass.description, pass.options);
    }
    text.push_str("\n# Pipelines\n");
    for pipeline in pipelines() {
        markdown_entry(&mut text, pipeline.name, pipeline.summary, pipeline.description, pipeline.options);
    }
    text
}

fn markdown_entry(text: &mut String, name: &str, summary: &str, description: &str, options: &[OptionSpec]) {
    text.push_str(&format!("\n## `{name}`\n\n{summary}.\n\n{description}\n"));
    if options.is_empty() {
        return;
    }
    text.push_str("\n| option | type | default | |\n| --- | --- | --- | --- |\n");
    for option in options {
        let kind = option.kind.name().replace('|', " \\| ");
        let help = option.help.trim().replace('|', "\\|");
        text.push_str(&format!("| `{}` | {kind} | `{}` | {help} |\n", option.name, option.default));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::options::OptionKind;

    #[test]
    fn every_declaration_is_complete_and_its_defaults_parse() {
        for pass in passes() {
            assert!(!pass.summary.is_empty() && !pass.description.is_empty(), "{}", pass.name);
            assert!(pass.instantiate("").is_ok(), "{}", pass.name);
            let unknown = pass.instantiate("no-such-option=1").err().unwrap_or_default();
            assert!(unknown.contains("unknown option"), "{}", pass.name);
        }
        for pipeline in pipelines() {
            assert!(pipeline.expand_with("").is_ok(), "{}", pipeline.name);
        }
        let choices = passes().iter().flat_map(|pass| pass.options).filter(|o| matches!(o.kind, OptionKind::Choice(_)));
        assert!(choices.count() > 5);
    }
}
