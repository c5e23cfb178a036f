//! What a FlyWheel pass is to the tools (its name, summary and options, and how an
//! instance is made), and the glue that runs a pass body written in Rust inside MLIR's
//! pass manager.

use crate::options::OptionSpec;
use flywheel_dialect::diagnostics::emit_error;
use melior::{
    ir::{
        operation::{OperationLike, OperationRef},
        r#type::TypeId,
    },
    pass::{create_external, ExternalPass, Pass},
};

/// A FlyWheel pass as the tools see it, declared once in its module: `--list-passes`,
/// `--help` and docs/passes.md are printed from this.
pub struct PassInfo {
    /// The pipeline name and flag (`flywheel-verify` -> `--flywheel-verify`).
    pub name: &'static str,
    /// One line: what the pass does.
    pub summary: &'static str,
    /// What it matches, what it rewrites into, and what it leaves alone.
    pub description: &'static str,
    pub options: &'static [OptionSpec],
    /// Makes a pass instance from option text (MLIR's `key=value ...`), or says why the
    /// text is wrong.
    pub create: fn(&str) -> Result<Pass, String>,
}

impl PassInfo {
    /// Parses `options` and creates the pass.
    pub fn instantiate(&self, options: &str) -> Result<Pass, String> {
        (self.create)(options).map_err(|message| format!("pass '{}': {message}", self.name))
    }
}

/// A named pipeline of passes, usable wherever a pass is (`--flywheel-tpu=target=v6e`
/// or inside `--pass-pipeline`).
pub struct PipelineInfo {
    pub name: &'static str,
    pub summary: &'static str,
    pub description: &'static str,
    pub options: &'static [OptionSpec],
    /// The pipeline's elements for option text, as `--pass-pipeline` text without the
    /// anchor, or why the text is wrong.
    pub expand: fn(&str) -> Result<String, String>,
}

impl PipelineInfo {
    /// Parses `options` and expands the pipeline.
    pub fn expand_with(&self, options: &str) -> Result<String, String> {
        (self.expand)(options).map_err(|message| format!("pipeline '{}': {message}", self.name))
    }
}

/// A pass's identity for MLIR: the address of its own static (one per pass file).
#[repr(align(8))]
pub struct PassId;

/// The ops a pass is scheduled on.
pub enum Anchor {
    Any,
    Module,
}

/// An MLIR pass for `info` running `body` on each op it is scheduled on; `body` returning
/// false, or panicking, fails the pass (see `run_guarded`).
pub fn external_pass(
    info: &PassInfo,
    id: &'static PassId,
    anchor: Anchor,
    body: impl Fn(OperationRef) -> bool + Clone,
) -> Pass {
    let name = info.name;
    let anchor = match anchor {
        Anchor::Any => "",
        Anchor::Module => "builtin.module",
    };
    create_external(
        move |op: OperationRef, pass: ExternalPass| run_guarded(name, op, pass, || body(op)),
        TypeId::create(id),
        name,
        name,
        info.summary,
        anchor,
        &[],
    )
}

/// Runs a pass body on `op`, failing the pass if it reports failure or panics. A panic
/// (a bug) becomes an error at the op instead of aborting the process from inside MLIR's
/// pass manager, which cannot unwind.
pub fn run_guarded(name: &str, op: OperationRef, pass: ExternalPass, body: impl FnOnce() -> bool) {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(body)) {
        Ok(true) => {}
        Ok(false) => pass.signal_failure(),
        Err(_) => {
            emit_error(
                op.location(),
                &format!("internal error in {name} (the panic message is above); please report it"),
            );
            pass.signal_failure();
        }
    }
}
