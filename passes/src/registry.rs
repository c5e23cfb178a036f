//! The list of FlyWheel passes, by the name pipelines and `--flag`s use.

use crate::options::{OptionSpec, PassOptions};
use melior::pass::Pass;

/// A FlyWheel pass as the tools see it.
pub struct PassInfo {
    /// The pipeline name and flag (`flywheel-verify` -> `--flywheel-verify`).
    pub name: &'static str,
    pub summary: &'static str,
    pub options: &'static [OptionSpec],
    /// Makes a pass instance from parsed options.
    pub create: fn(&PassOptions) -> Pass,
}

impl PassInfo {
    /// Parses `options` (MLIR's `key=value ...` syntax) and creates the pass.
    pub fn instantiate(&self, options: &str) -> Result<Pass, String> {
        let options = PassOptions::parse(self.options, options)
            .map_err(|message| format!("pass '{}': {message}", self.name))?;
        Ok((self.create)(&options))
    }
}

/// Every FlyWheel pass, in pipeline order.
pub fn passes() -> &'static [PassInfo] {
    static PASSES: &[PassInfo] = &[crate::verify::PASS, crate::raise_attention::PASS, crate::lower_to_stablehlo::PASS];
    PASSES
}

pub fn find_pass(name: &str) -> Option<&'static PassInfo> {
    passes().iter().find(|pass| pass.name == name)
}
