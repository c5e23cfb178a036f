//! `flywheel-verify` (see [`PASS`]).

use crate::{
    options::{NoOptions, Options},
    pass::{external_pass, Anchor, PassId, PassInfo},
};
use flywheel_dialect::verify::verify;
use melior::{ir::operation::OperationRef, pass::Pass};

static PASS_ID: PassId = PassId;

pub const PASS: PassInfo = PassInfo {
    name: "flywheel-verify",
    summary: "Check flywheel ops against their documented semantics (shapes, heads, dtypes)",
    description: "Checks every `flywheel` op with the dialect's semantic verifier (shapes, head counts, dtypes, \
optional attributes), reporting each failure at its op. MLIR's own verifier covers the IRDL structure; run this \
after passes that build FlyWheel ops, or to validate hand-written IR.",
    options: NoOptions::SPECS,
    create: |text| Ok(create(NoOptions::parse(text)?)),
};

fn create(_: NoOptions) -> Pass {
    external_pass(&PASS, &PASS_ID, Anchor::Any, |op: OperationRef| verify(op))
}
