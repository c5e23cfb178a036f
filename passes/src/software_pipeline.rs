//! `flywheel-pipeline`: software-pipelines the key-block bodies of each attention kernel
//! (FlyWheel tile IR). `flywheel-tile{key-splits=N}` writes a key block as N sub-blocks in
//! program order — sub-block c's scores (K load, QKᵀ, scale, masks), then its softmax
//! update (max, exp, sum, rescale, PV) — so the MXU and the VPU/EUP take turns: libtpu's
//! bundle dump of such a step shows its matmul, max, exp and sum phases back to back.
//! This pass issues each sub-block's scores ahead of earlier updates, in three steps
//! (like Triton's pipeliner; `steps=` stops after any of them, to test each alone):
//! - annotate: each op of a body gets `flywheel.unit` (mxu, eup, xlu, vpu, load, store,
//!   scalar), `flywheel.latency` (its issue cycles on that unit, from the vector shapes at
//!   v6e's rates: 2 MXUs of 16 x 256 x 256 multiply-adds per 8 cycles; one vreg — 8 x 128
//!   32-bit or 16 x 128 bf16 values — per cycle elsewhere) and `flywheel.position`.
//! - schedule: sub-block c's score ops go before the update of sub-block c - d, d the
//!   fewest updates whose non-MXU latency covers c's QKᵀ (at most c): recorded as
//!   `flywheel.issue_before = <position>`.
//! - expand: moves the scheduled ops (in order) and erases the annotations.
//!
//! Double-buffering of the K/V windows is Mosaic's: it prefetches the next grid step's
//! blocks while this one computes.

use crate::{
    options::{OptionKind, OptionSpec, PassOptions},
    registry::{external_pass, Anchor, PassId, PassInfo},
    tile_ir::{block_ops, kernel_call_locations, kernel_functions, mutable, ops_named, set_attribute, users as value_users},
};
use flywheel_dialect::diagnostics::emit_remark;
use melior::{
    ir::{
        attribute::IntegerAttribute,
        operation::{OperationLike, OperationMutLike, OperationRef},
        BlockRef, Value, ValueLike,
    },
    pass::Pass,
};
use std::collections::{BTreeMap, BTreeSet, HashMap};

static PASS_ID: PassId = PassId;

/// The annotations, all erased by the expand step.
pub const UNIT: &str = "flywheel.unit";
pub const LATENCY: &str = "flywheel.latency";
pub const POSITION: &str = "flywheel.position";
pub const ISSUE_BEFORE: &str = "flywheel.issue_before";

const OPTIONS: &[OptionSpec] = &[
    OptionSpec { name: "steps", kind: OptionKind::Choice(&["expand", "schedule", "annotate"]), default: "expand", help: "Stop after this step (annotate: units and latencies; schedule: issue points; expand: the reordered body)" },
    OptionSpec { name: "remarks", kind: OptionKind::Bool, default: "false", help: "Remark on the schedule of each kernel" },
];

pub const PASS: PassInfo = PassInfo {
    name: "flywheel-pipeline",
    summary: "Software-pipeline attention kernels' key-block bodies: sub-block QKᵀ matmuls issued ahead of earlier softmax updates",
    options: OPTIONS,
    create,
};

#[derive(Clone, Copy, PartialEq, PartialOrd)]
enum Step {
    Annotate,
    Schedule,
    Expand,
}

fn create(options: &PassOptions) -> Pass {
    let last = match options.choice("steps") {
        "annotate" => Step::Annotate,
        "schedule" => Step::Schedule,
        _ => Step::Expand,
    };
    let remarks = options.bool("remarks");
    external_pass(&PASS, &PASS_ID, Anchor::Any, move |op: OperationRef| pipeline(op, last, remarks))
}

/// Pipelines every attention kernel in the kernel modules directly in `root`, up to step
/// `last`.
fn pipeline(root: OperationRef, last: Step, remarks: bool) -> bool {
    let calls = kernel_call_locations(root);
    for (symbol, kernel) in kernel_functions(root, crate::mosaic_attention::KERNEL_NAME) {
        let mut notes = Vec::new();
        for body in key_block_bodies(kernel) {
            annotate(body);
            if last >= Step::Schedule {
                notes.push(schedule(body));
            }
            if last >= Step::Expand {
                expand(body);
            }
        }
        if remarks {
            let location = calls.get(&symbol).copied().unwrap_or_else(|| kernel.location());
            let summary = if notes.is_empty() { "nothing scheduled".to_owned() } else { notes.join("; ") };
            emit_remark(location, &format!("@{symbol}: {summary}"));
        }
    }
    true
}

/// The blocks holding a key block's sub-blocks: those with a score matmul (QKᵀ, or K·Qᵀ
/// in the transposed orientation: K is the transposed right operand either way).
fn key_block_bodies<'c, 'a>(kernel: OperationRef<'c, 'a>) -> Vec<BlockRef<'c, 'a>> {
    let mut bodies: Vec<BlockRef> = Vec::new();
    for matmul in ops_named(kernel, "flywheel.matmul").into_iter().filter(|op| is_score_matmul(*op)) {
        let block = matmul.block().expect("in a block");
        if !bodies.contains(&block) {
            bodies.push(block);
        }
    }
    bodies
}

fn name(op: OperationRef) -> String {
    op.name().as_string_ref().as_str().unwrap_or("").to_owned()
}

fn is_score_matmul(op: OperationRef) -> bool {
    name(op) == "flywheel.matmul" && op.attribute("transpose_rhs").ok().and_then(|a| IntegerAttribute::try_from(a).ok()).is_some_and(|flag| flag.value() != 0)
}

/// The dimensions of a vector type written `vector<AxBxT>` (empty for other types).
fn vector_dims(text: &str) -> Vec<i64> {
    let inner = text.strip_prefix("vector<").and_then(|t| t.strip_suffix('>')).unwrap_or("");
    inner.split('x').map_while(|d| d.parse().ok()).collect()
}

/// Vregs a vector type fills: 8 x 128 values of 32 bits (masks too), 16 x 128 of 16.
fn vregs(text: &str) -> Option<i64> {
    let dims = vector_dims(text);
    if dims.is_empty() {
        return None;
    }
    let per_vreg = if ["xbf16>", "xf16>", "xi16>"].iter().any(|e| text.ends_with(e)) { 2048 } else { 1024 };
    Some(ceil_div(dims.iter().product(), per_vreg))
}

fn ceil_div(a: i64, b: i64) -> i64 {
    (a + b - 1) / b
}

/// The unit an op issues on and its issue cycles there.
fn cost(op: OperationRef) -> (&'static str, i64) {
    let result = op.result(0).ok().and_then(|r| vregs(&r.r#type().to_string()));
    let widest = op.operands().chain(op.results().map(Value::from)).filter_map(|v| vregs(&v.r#type().to_string())).max();
    match name(op).as_str() {
        "flywheel.matmul" => {
            // [M, K] x [K, N] (or [N, K] transposed): M x N x K multiply-adds, 2 x 16 x 256 x 256
            // per 8 cycles.
            let dims = |v: Option<Value>| v.map(|v| vector_dims(&v.r#type().to_string())).unwrap_or_default();
            let (lhs, product) = (dims(op.operand(0).ok()), dims(op.result(0).ok().map(Value::from)));
            let (m, k, n) = (lhs.first().copied().unwrap_or(0), lhs.get(1).copied().unwrap_or(0), product.get(1).copied().unwrap_or(0));
            ("mxu", ceil_div(m * n * k, 2 * 16 * 256 * 256 / 8))
        }
        "math.exp" | "math.exp2" | "math.tanh" => ("eup", widest.unwrap_or(1)),
        "vector.multi_reduction" => ("xlu", widest.unwrap_or(1)),
        "vector.load" => ("load", widest.unwrap_or(1)),
        "tpu.vector_store" | "vector.store" => ("store", widest.unwrap_or(1)),
        _ if result.is_some() => ("vpu", widest.unwrap_or(1)),
        _ => ("scalar", 1),
    }
}

fn annotate(body: BlockRef) {
    for (position, op) in block_ops(body).into_iter().enumerate() {
        let (unit, latency) = cost(op);
        set_attribute(op, UNIT, &format!("\"{unit}\""));
        set_attribute(op, LATENCY, &format!("{latency} : i64"));
        set_attribute(op, POSITION, &format!("{position} : i64"));
    }
}

fn integer(op: OperationRef, attribute: &str) -> i64 {
    op.attribute(attribute).ok().and_then(|a| IntegerAttribute::try_from(a).ok()).map_or(0, |a| a.value())
}

/// One sub-block of the body: its score matmul's latency, the ops computing its scores
/// (positions), and where its softmax update starts.
struct SubBlock {
    matmul_latency: i64,
    scores: BTreeSet<usize>,
    update_start: usize,
}

/// Records the issue point of every sub-block's score ops; returns a note.
fn schedule(body: BlockRef) -> String {
    let ops = block_ops(body);
    let position_of: HashMap<_, usize> = ops.iter().enumerate().map(|(i, op)| (op.to_raw().ptr, i)).collect();
    let producer = |value: Value| -> Option<usize> {
        // SAFETY: an op result's owner is a live op.
        let owner = unsafe { mlir_sys::mlirValueIsAOpResult(value.to_raw()) }.then(|| unsafe { mlir_sys::mlirOpResultGetOwner(value.to_raw()) })?;
        position_of.get(&owner.ptr).copied()
    };
    // The body's ops that use a result of the op at `position` (directly or in a region).
    let users = |position: usize| -> Vec<usize> {
        ops[position]
            .results()
            .flat_map(|result| value_users(Value::from(result)))
            .filter_map(|(user, _)| {
                let mut op = user;
                while op.block() != Some(body) {
                    op = op.parent_operation()?;
                }
                position_of.get(&op.to_raw().ptr).copied()
            })
            .collect()
    };
    let backward = |root: usize| -> BTreeSet<usize> {
        let mut seen = BTreeSet::from([root]);
        let mut stack = vec![root];
        while let Some(position) = stack.pop() {
            for operand in ops[position].operands() {
                if let Some(definer) = producer(operand) {
                    if seen.insert(definer) {
                        stack.push(definer);
                    }
                }
            }
        }
        seen
    };
    let mut sub_blocks = Vec::new();
    for (position, op) in ops.iter().enumerate().filter(|(_, op)| is_score_matmul(**op)) {
        // The scores end where the first reduction (the row max) reads them.
        let mut forward = BTreeSet::from([position]);
        let mut reduction = None;
        for index in position..ops.len() {
            if !forward.contains(&index) {
                continue;
            }
            if name(ops[index]) == "vector.multi_reduction" {
                reduction = Some(index);
                break;
            }
            forward.extend(users(index));
        }
        let Some(reduction) = reduction else { return "a score matmul with no row max: nothing scheduled".to_owned() };
        let scores = ops[reduction].operand(0).ok().and_then(producer).map(backward).unwrap_or_default();
        // The update starts with the constants written just before its row max (its
        // initial value).
        let mut update_start = reduction;
        while update_start > 0 && name(ops[update_start - 1]) == "arith.constant" && !scores.contains(&(update_start - 1)) {
            update_start -= 1;
        }
        sub_blocks.push(SubBlock { matmul_latency: integer(*op, LATENCY), scores, update_start });
    }
    // A sub-block's update: from its row max to the first op of the next sub-block's scores.
    let update_latency = |c: usize| -> i64 {
        let end = sub_blocks.get(c + 1).map_or(ops.len(), |next: &SubBlock| next.scores.range(sub_blocks[c].update_start..).next().copied().unwrap_or(ops.len()));
        ops[sub_blocks[c].update_start..end].iter().filter(|op| unit(**op) != "mxu").map(|op| integer(*op, LATENCY)).sum()
    };
    let mut distances = Vec::new();
    for c in 1..sub_blocks.len() {
        let mut distance = 1;
        let mut covered = update_latency(c - 1);
        while covered < sub_blocks[c].matmul_latency && distance < c {
            distance += 1;
            covered += update_latency(c - distance);
        }
        let anchor = sub_blocks[c - distance].update_start;
        for &position in sub_blocks[c].scores.range(anchor + 1..) {
            set_attribute(ops[position], ISSUE_BEFORE, &format!("{anchor} : i64"));
        }
        distances.push(distance.to_string());
    }
    if distances.is_empty() {
        return "one sub-block: nothing to overlap".to_owned();
    }
    format!("{} sub-blocks, scores issued {} update(s) ahead", sub_blocks.len(), distances.join("/"))
}

fn unit(op: OperationRef) -> String {
    op.attribute(UNIT).map(|a| a.to_string().trim_matches('"').to_owned()).unwrap_or_default()
}

/// Moves each op with an issue point before the op annotated with that position, in
/// position order, and erases the annotations.
fn expand(body: BlockRef) {
    let ops = block_ops(body);
    let at_position: BTreeMap<i64, OperationRef> = ops.iter().filter(|op| op.attribute(POSITION).is_ok()).map(|op| (integer(*op, POSITION), *op)).collect();
    for op in at_position.values() {
        if op.attribute(ISSUE_BEFORE).is_err() {
            continue;
        }
        let anchor = at_position.get(&integer(*op, ISSUE_BEFORE)).expect("the schedule names an annotated op");
        // SAFETY: both ops are live in the same block.
        unsafe { mlir_sys::mlirOperationMoveBefore(op.to_raw(), anchor.to_raw()) };
    }
    for op in ops {
        for attribute in [UNIT, LATENCY, POSITION, ISSUE_BEFORE] {
            let _ = mutable(op).remove_attribute(attribute);
        }
    }
}
