//! `flywheel-verify`: checks every `flywheel` op with the dialect's semantic verifier
//! (shapes, head counts, dtypes, optional attributes), reporting each failure at its op.
//! MLIR's own verifier covers the IRDL structure; run this after passes that build
//! FlyWheel ops, or to validate hand-written IR.

use crate::{
    options::PassOptions,
    registry::{run_guarded, PassInfo},
};
use flywheel_dialect::verify::verify;
use melior::{
    ir::{operation::OperationRef, r#type::TypeId},
    pass::{create_external, ExternalPass, Pass},
};

#[repr(align(8))]
struct PassId;
static PASS_ID: PassId = PassId;

pub const PASS: PassInfo = PassInfo {
    name: "flywheel-verify",
    summary: "Check flywheel ops against their documented semantics (shapes, heads, dtypes)",
    options: &[],
    create,
};

fn create(_options: &PassOptions) -> Pass {
    create_external(
        |op: OperationRef, pass: ExternalPass| run_guarded(PASS.name, op, pass, || verify(op)),
        TypeId::create(&PASS_ID),
        "FlyWheelVerify",
        PASS.name,
        PASS.summary,
        "",
        &[],
    )
}
