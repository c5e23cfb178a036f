//! `flywheel-pipeline` (see [`PASS`]): software-pipelines the key-block bodies of each
//! attention kernel (FlyWheel tile IR). `flywheel-tile{key-splits=N}` writes a key block as N sub-blocks in
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
//!
//! Gated DeltaNet kernels (`flywheel-tile{gdn-chunks-per-step=N}` writes a grid step as
//! N chunks in order, each its chunk-parallel work — gates, decay, K·Kᵀ, the inverse, U
//! and W — then its state update) get the same three steps:
//! - annotate: each op of the step gets `flywheel.chunk` (a chunk starts with the first
//!   load of an input after the previous chunk wrote an output, a memref the step writes
//!   and never reads), `flywheel.stage` (`"state"` if it uses the carried state — a load
//!   from a memref the step both reads and writes, or a result of such an op; `"serial"`
//!   if it writes memory otherwise; else `"parallel"`) and `flywheel.position`.
//! - schedule: chunk c's parallel ops go before the state update of chunk
//!   max(c - `gdn-lookahead`, 0) (default 1: chunk c + 1's parallel work is issued before
//!   chunk c's state update), which starts at the chunk's first op combining the state
//!   with the chunk's parallel work (W S); each op only where all its operands are
//!   defined.
//! - expand: as for attention.
//!
//! The chunk-parallel work then overlaps the serial chain of state products.

use crate::{
    options::Options,
    pass::{external_pass, Anchor, PassId, PassInfo},
};
use flywheel_dialect::diagnostics::{emit_error, emit_remark};
use flywheel_kernels::tile_ir::{
    block_ops, kernel_call_locations, kernel_functions, mutable, nested_ops, op_name, ops_named, set_attribute,
    users as value_users,
};
use melior::{
    ir::{
        attribute::IntegerAttribute,
        operation::{OperationLike, OperationMutLike, OperationRef},
        BlockRef, RegionLike, Value, ValueLike,
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
pub const CHUNK: &str = "flywheel.chunk";
pub const STAGE: &str = "flywheel.stage";

crate::pass_options! {
    pub struct PipelineOptions {
        /// Stop after this step (annotate: units and latencies, or a GDN step's chunks and stages; schedule: issue
        /// points; expand: the reordered body)
        steps: Step = ("steps", "expand"),
        /// Gated DeltaNet: how many chunks ahead each chunk's parallel work is issued, before the state update of the
        /// chunk that many earlier (0: program order)
        gdn_lookahead: i64 = ("gdn-lookahead", "1"),
        /// Remark on the schedule of each kernel
        remarks: bool = ("remarks", "false"),
    }
}

pub const PASS: PassInfo = PassInfo {
    name: "flywheel-pipeline",
    summary: "Software-pipeline kernels: attention's sub-block QKᵀ matmuls issued ahead of earlier softmax updates, Gated DeltaNet's chunk-parallel work ahead of earlier state updates",
    options: PipelineOptions::SPECS,
    description: "Software-pipelines kernels in three steps, like Triton's pipeliner (`steps=` stops after any, \
to test each alone): annotate each op with its unit and latency (or a Gated DeltaNet step's chunk and stage), \
schedule issue points, and expand (move the ops, erase the annotations). In attention kernels whose key blocks \
`flywheel-tile` wrote as sub-blocks, each sub-block's scores (K load, QKᵀ, scale, masks) are issued ahead of earlier \
softmax updates, so the MXU works while the VPU and EUP do; in Gated DeltaNet kernels running several chunks a grid \
step, each chunk's parallel work (gates, decay, K·Kᵀ, the inverse, U and W) is issued before earlier chunks' state \
updates, off the serial chain of state products.",
    create: |text| Ok(create(PipelineOptions::parse(text)?)),
};

crate::choice! {
    /// The step the pass stops after, in order.
    #[derive(PartialOrd)]
    pub enum Step {
        Annotate = "annotate",
        Schedule = "schedule",
        Expand = "expand",
    }
}

fn create(options: PipelineOptions) -> Pass {
    let PipelineOptions { steps: last, gdn_lookahead: lookahead, remarks } = options;
    external_pass(&PASS, &PASS_ID, Anchor::Any, move |op: OperationRef| {
        if lookahead < 0 {
            emit_error(op.location(), &format!("flywheel-pipeline: gdn-lookahead must be at least 0, not {lookahead}"));
            return false;
        }
        pipeline(op, last, remarks) && pipeline_chunks(op, last, lookahead as usize, remarks)
    })
}

/// Pipelines every attention kernel in the kernel modules directly in `root`, up to step
/// `last`.
fn pipeline(root: OperationRef, last: Step, remarks: bool) -> bool {
    let calls = kernel_call_locations(root);
    for (symbol, kernel) in kernel_functions(root, flywheel_kernels::attention::KERNEL_NAME) {
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

/// Pipelines the chunks of every Gated DeltaNet kernel in the kernel modules directly in
/// `root`, up to step `last`.
fn pipeline_chunks(root: OperationRef, last: Step, lookahead: usize, remarks: bool) -> bool {
    let calls = kernel_call_locations(root);
    for (symbol, kernel) in kernel_functions(root, flywheel_kernels::gated_delta::KERNEL_NAME) {
        let Some(body) = kernel.region(0).ok().and_then(|region| region.first_block()) else { continue };
        annotate_chunks(body);
        let mut note = "annotated".to_owned();
        if last >= Step::Schedule {
            note = schedule_chunks(body, lookahead);
        }
        if last >= Step::Expand {
            expand(body);
        }
        if remarks {
            let location = calls.get(&symbol).copied().unwrap_or_else(|| kernel.location());
            emit_remark(location, &format!("@{symbol}: {note}"));
        }
    }
    true
}

fn is_store(op: OperationRef) -> bool {
    matches!(op_name(op).as_str(), "tpu.vector_store" | "vector.store")
}

/// The memref a load (operand 0) or store (operand 1) addresses.
fn addressed(op: OperationRef) -> Option<mlir_sys::MlirValue> {
    match op_name(op).as_str() {
        "vector.load" => op.operand(0).ok().map(|v| v.to_raw()),
        "tpu.vector_store" | "vector.store" => op.operand(1).ok().map(|v| v.to_raw()),
        _ => None,
    }
}

/// The values the ops of `nested` (an op and the ops in its regions) use.
fn used_values(nested: &[OperationRef]) -> Vec<mlir_sys::MlirValue> {
    nested.iter().flat_map(|inner| inner.operands().map(|v| v.to_raw()).collect::<Vec<_>>()).collect()
}

/// The position (by `position_of`) of the op defining `value`, if an op of the block does.
fn defining_position(position_of: &HashMap<*mut std::ffi::c_void, usize>, value: mlir_sys::MlirValue) -> Option<usize> {
    // SAFETY: an op result's owner is a live op.
    let owner =
        unsafe { mlir_sys::mlirValueIsAOpResult(value) }.then(|| unsafe { mlir_sys::mlirOpResultGetOwner(value) })?;
    position_of.get(&owner.ptr).copied()
}

/// Each op's position in `ops`, by its raw pointer.
fn positions(ops: &[OperationRef]) -> HashMap<*mut std::ffi::c_void, usize> {
    ops.iter().enumerate().map(|(i, op)| (op.to_raw().ptr, i)).collect()
}

/// The positions (by `position_of`) of the ops of `body` that use a result of `op`,
/// directly or from inside one of their regions.
fn users_in(body: BlockRef, position_of: &HashMap<*mut std::ffi::c_void, usize>, op: OperationRef) -> Vec<usize> {
    op.results()
        .flat_map(|result| value_users(Value::from(result)))
        .filter_map(|(user, _)| {
            let mut user = user;
            while user.block() != Some(body) {
                user = user.parent_operation()?;
            }
            position_of.get(&user.to_raw().ptr).copied()
        })
        .collect()
}

/// Annotates each op of a Gated DeltaNet step with its chunk, stage and position.
fn annotate_chunks(body: BlockRef) {
    let ops = block_ops(body);
    let (mut read, mut written) = (BTreeSet::new(), BTreeSet::new());
    for inner in ops.iter().flat_map(|op| nested_ops(*op)) {
        if let Some(memref) = addressed(inner) {
            if is_store(inner) { &mut written } else { &mut read }.insert(memref.ptr as usize);
        }
    }
    // Values that carry the state: loads from a memref the step reads and writes, and
    // every result computed from one.
    let mut carried: BTreeSet<usize> = BTreeSet::new();
    let (mut chunk, mut output_written, mut chunks) = (0, false, Vec::new());
    for (position, op) in ops.iter().enumerate() {
        // The next chunk starts with the first load of an input after an output write.
        let loads_input = addressed(*op).is_some_and(|m| !is_store(*op) && !written.contains(&(m.ptr as usize)));
        if loads_input && output_written {
            chunk += 1;
            output_written = false;
        }
        let nested = nested_ops(*op);
        let loads_state = nested.iter().any(|inner| {
            !is_store(*inner)
                && addressed(*inner)
                    .is_some_and(|m| written.contains(&(m.ptr as usize)) && read.contains(&(m.ptr as usize)))
        });
        let uses_state = loads_state || used_values(&nested).iter().any(|v| carried.contains(&(v.ptr as usize)));
        if uses_state {
            carried.extend(op.results().map(|r| Value::from(r).to_raw().ptr as usize));
        }
        let writes =
            nested.iter().filter(|inner| is_store(**inner)).filter_map(|inner| addressed(*inner)).collect::<Vec<_>>();
        let stage = if uses_state {
            "state"
        } else if writes.is_empty() {
            "parallel"
        } else {
            "serial"
        };
        chunks.push(chunk);
        set_attribute(*op, STAGE, &format!("\"{stage}\""));
        set_attribute(*op, POSITION, &format!("{position} : i64"));
        output_written |= writes.iter().any(|m| !read.contains(&(m.ptr as usize)));
    }
    // An op of no operands (a constant, an iota) belongs to the chunk of its first user:
    // the index constants of a chunk's first load come before it.
    let position_of = positions(&ops);
    for (position, op) in ops.iter().enumerate() {
        let chunk = match users_in(body, &position_of, *op).into_iter().min() {
            Some(user) if op.operand_count() == 0 && op.region_count() == 0 => chunks[user],
            _ => chunks[position],
        };
        set_attribute(*op, CHUNK, &format!("{chunk} : i64"));
    }
}

/// Records the issue point of every chunk's parallel ops: before the first state-using op
/// of the chunk `lookahead` earlier; returns a note.
fn schedule_chunks(body: BlockRef, lookahead: usize) -> String {
    let ops = block_ops(body);
    let stage =
        |op: OperationRef| op.attribute(STAGE).map(|a| a.to_string().trim_matches('"').to_owned()).unwrap_or_default();
    let chunk_of = |op: OperationRef| integer(op, CHUNK) as usize;
    let position_of = positions(&ops);
    let producers = |op: OperationRef| -> Vec<usize> {
        used_values(&nested_ops(op)).into_iter().filter_map(|v| defining_position(&position_of, v)).collect()
    };
    // Each chunk's state update starts at its first op that combines the state with a
    // vector of the chunk's parallel work (the product W S).
    let mut state_start: BTreeMap<usize, usize> = BTreeMap::new();
    for (position, op) in ops.iter().enumerate().filter(|(_, op)| stage(**op) == "state") {
        let combines = op.operands().any(|operand| {
            let parallel = defining_position(&position_of, operand.to_raw())
                .is_some_and(|producer| stage(ops[producer]) == "parallel");
            parallel && operand.r#type().to_string().starts_with("vector<")
        });
        if combines {
            state_start.entry(chunk_of(*op)).or_insert(position);
        }
    }
    // Where each op will be: its issue point if moved, else its position.
    let mut issue_at: Vec<usize> = (0..ops.len()).collect();
    let mut moved = 0;
    for (position, op) in ops.iter().enumerate() {
        let chunk = chunk_of(*op);
        if stage(*op) != "parallel" || op.result_count() == 0 || lookahead == 0 || chunk == 0 {
            continue;
        }
        let Some(&anchor) = state_start.get(&chunk.saturating_sub(lookahead)) else { continue };
        // Only where every operand from the step is defined before the issue point.
        let ready = producers(*op).into_iter().all(|producer| producer == position || issue_at[producer] <= anchor);
        if anchor < position && ready {
            issue_at[position] = anchor;
            set_attribute(*op, ISSUE_BEFORE, &format!("{anchor} : i64"));
            moved += 1;
        }
    }
    let chunks = ops.last().map_or(0, |op| chunk_of(*op) + 1);
    if moved == 0 {
        return format!("{chunks} chunk(s): nothing scheduled");
    }
    format!("{chunks} chunks, {moved} chunk-parallel ops issued {lookahead} chunk(s) ahead of the state updates")
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

fn is_score_matmul(op: OperationRef) -> bool {
    op_name(op) == "flywheel.matmul"
        && op
            .attribute("transpose_rhs")
            .ok()
            .and_then(|a| IntegerAttribute::try_from(a).ok())
            .is_some_and(|flag| flag.value() != 0)
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
    let widest =
        op.operands().chain(op.results().map(Value::from)).filter_map(|v| vregs(&v.r#type().to_string())).max();
    match op_name(op).as_str() {
        "flywheel.matmul" => {
            // [M, K] x [K, N] (or [N, K] transposed): M x N x K multiply-adds, 2 x 16 x 256 x 256
            // per 8 cycles.
            let dims = |v: Option<Value>| v.map(|v| vector_dims(&v.r#type().to_string())).unwrap_or_default();
            let (lhs, product) = (dims(op.operand(0).ok()), dims(op.result(0).ok().map(Value::from)));
            let (m, k, n) = (
                lhs.first().copied().unwrap_or(0),
                lhs.get(1).copied().unwrap_or(0),
                product.get(1).copied().unwrap_or(0),
            );
            ("mxu", ceil_div(m * n * k, 2 * 16 * 256 * 256 / 8))
        }
        "math.exp" | "math.exp2" | "math.log" | "math.log2" | "math.tanh" => ("eup", widest.unwrap_or(1)),
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
    let position_of = positions(&ops);
    let producer = |value: Value| defining_position(&position_of, value.to_raw());
    let users = |position: usize| users_in(body, &position_of, ops[position]);
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
        for (index, later) in ops.iter().enumerate().skip(position) {
            if !forward.contains(&index) {
                continue;
            }
            if op_name(*later) == "vector.multi_reduction" {
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
        while update_start > 0
            && op_name(ops[update_start - 1]) == "arith.constant"
            && !scores.contains(&(update_start - 1))
        {
            update_start -= 1;
        }
        sub_blocks.push(SubBlock { matmul_latency: integer(*op, LATENCY), scores, update_start });
    }
    // A sub-block's update: from its row max to the first op of the next sub-block's scores.
    let update_latency = |c: usize| -> i64 {
        let end = sub_blocks.get(c + 1).map_or(ops.len(), |next: &SubBlock| {
            next.scores.range(sub_blocks[c].update_start..).next().copied().unwrap_or(ops.len())
        });
        ops[sub_blocks[c].update_start..end]
            .iter()
            .filter(|op| unit(**op) != "mxu")
            .map(|op| integer(*op, LATENCY))
            .sum()
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
    let at_position: BTreeMap<i64, OperationRef> =
        ops.iter().filter(|op| op.attribute(POSITION).is_ok()).map(|op| (integer(*op, POSITION), *op)).collect();
    for op in at_position.values() {
        if op.attribute(ISSUE_BEFORE).is_err() {
            continue;
        }
        let anchor = at_position.get(&integer(*op, ISSUE_BEFORE)).expect("the schedule names an annotated op");
        // SAFETY: both ops are live in the same block.
        unsafe { mlir_sys::mlirOperationMoveBefore(op.to_raw(), anchor.to_raw()) };
    }
    for op in ops {
        for attribute in [UNIT, LATENCY, POSITION, ISSUE_BEFORE, CHUNK, STAGE] {
            let _ = mutable(op).remove_attribute(attribute);
        }
    }
}
