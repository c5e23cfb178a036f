//! `flywheel-pipeline`: software-pipelines each attention kernel's key loop, recorded on
//! the `flywheel.attention` as `flywheel.key_splits = N` for `flywheel-tile` to expand:
//! every key block runs as N sub-blocks, each its own online-softmax update, emitted in
//! pipelined order — sub-block c + 1's QKᵀ matmul is issued before sub-block c's softmax
//! and PV matmul — so that libtpu's bundle scheduler can overlap the MXU work of one
//! sub-block with the VPU/EUP work of the other (without it, libtpu's bundle dump shows a
//! grid step running its matmul, max, exp and sum phases one after another).
//! `flywheel-tile` lowers the count to the largest that leaves whole lane tiles
//! (128 keys) per sub-block, and says so in its remark.

use crate::{
    options::{OptionKind, OptionSpec, PassOptions},
    registry::{run_guarded, PassInfo},
    tile_ir::{attention_ops, set_attribute},
};
use flywheel_dialect::diagnostics::emit_remark;
use melior::{
    ir::{
        attribute::IntegerAttribute,
        operation::{OperationLike, OperationRef},
        r#type::TypeId,
    },
    pass::{create_external, ExternalPass, Pass},
};

#[repr(align(8))]
struct PassId;
static PASS_ID: PassId = PassId;

/// The attribute `flywheel-tile` reads.
pub const KEY_SPLITS: &str = "flywheel.key_splits";

const OPTIONS: &[OptionSpec] = &[
    OptionSpec { name: "key-splits", kind: OptionKind::Int, default: "2", help: "Sub-blocks per key block, each issued ahead of the previous one's softmax (1: no pipelining)" },
    OptionSpec { name: "remarks", kind: OptionKind::Bool, default: "false", help: "Remark on the schedule recorded for each attention" },
];

pub const PASS: PassInfo = PassInfo {
    name: "flywheel-pipeline",
    summary: "Software-pipeline attention kernels' key loops: sub-block QK matmuls issued ahead of the previous softmax",
    options: OPTIONS,
    create,
};

fn create(options: &PassOptions) -> Pass {
    let splits = options.int("key-splits");
    let remarks = options.bool("remarks");
    create_external(
        move |op: OperationRef, pass: ExternalPass| run_guarded(PASS.name, op, pass, || pipeline(op, splits, remarks)),
        TypeId::create(&PASS_ID),
        "FlyWheelPipeline",
        PASS.name,
        PASS.summary,
        "",
        &[],
    )
}

/// Records `splits` on every attention under `root`; an error (false) if it is not
/// positive.
pub fn pipeline(root: OperationRef, splits: i64, remarks: bool) -> bool {
    if splits < 1 {
        flywheel_dialect::diagnostics::emit_error(root.location(), &format!("flywheel-pipeline: key-splits must be at least 1, not {splits}"));
        return false;
    }
    for raw in attention_ops(root) {
        // SAFETY: the ops stay in place; only their attributes change.
        let op = unsafe { OperationRef::from_raw(raw) };
        set_attribute(op, KEY_SPLITS, &format!("{splits} : i64"));
        if remarks {
            emit_remark(op.location(), &format!("key loop pipelined in {splits} sub-block(s) per key block"));
        }
    }
    true
}

/// The sub-blocks recorded on an attention op (1 when absent), or why the attribute is not
/// understood.
pub fn recorded(op: OperationRef) -> Result<i64, String> {
    match op.attribute(KEY_SPLITS) {
        Err(_) => Ok(1),
        Ok(attribute) => match IntegerAttribute::try_from(attribute).map(|a| a.value()) {
            Ok(splits) if splits >= 1 => Ok(splits),
            _ => Err(format!("{KEY_SPLITS} is {attribute}, not a positive integer")),
        },
    }
}
