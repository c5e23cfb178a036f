//! Tiling Gated DeltaNet: the kernel plan (value heads stacked per grid step, chunks in
//! order within a step) and the kernel op with its operands rearranged, gates summed per
//! chunk, and results laid out as the op's.

use super::{floating, in_layout, kernel_op, rearranged, replace_with_output, shape, whole_lanes};
use crate::{
    analysis::atoms::{Atoms, Axis},
    analysis::hlo::HloBuilder,
    prepare::layout::recorded_gated_delta,
    prepare::shard::kernel_placement,
    target::Generation,
};
use flywheel_dialect::{
    diagnostics::{emit_error, emit_remark},
    layout::Axis as Role,
    ops::GatedDeltaOp,
    stablehlo::Precision,
};
use flywheel_kernels::gated_delta::{self as gated_delta_kernel, GatedDeltaPlan};
use flywheel_kernels::tile_ir::gated_delta_ops;
use melior::ir::{
    operation::{OperationLike, OperationRef},
    Value, ValueLike,
};

/// How `flywheel-tile` builds Gated DeltaNet kernels.
#[derive(Clone, Copy, Debug)]
pub struct GatedDeltaOptions {
    /// Tokens per chunk (0: each op's own chunk_size).
    pub chunk: i64,
    /// Value heads per grid step, at most (0: as many as fill `stacked_rows`).
    pub heads: i64,
    /// The rows (chunk tokens x value heads) a grid step stacks when `heads` is 0.
    pub stacked_rows: i64,
    /// f32 products in three bf16 passes.
    pub bf16x3: bool,
    /// The products after the inverse that do not read V' (U, W, W S and Q S) in one bf16
    /// pass, whatever the op's precisions.
    pub single_pass_products: bool,
    /// Gates in base 2 and exp2 for their exponentials.
    pub exp2_gates: bool,
    /// Chunks per grid step, the state passed on in registers (0: the most, up to
    /// `most_chunks_per_step`, that divide the chunks).
    pub chunks_per_step: i64,
    /// The most chunks a grid step runs by default on the target.
    pub most_chunks_per_step: i64,
    /// Rows of the diagonal blocks the chunk-parallel tiles are worked on in (0: the
    /// step's whole stacked tile).
    pub block_rows: i64,
    /// Which of the kernel's windows are token-major where the op's layout has tokens
    /// before heads.
    pub token_major: TokenMajor,
}

crate::choice! {
    /// The Gated DeltaNet kernel's windows laid out token-major, [B, T', N x D].
    pub enum TokenMajor {
        /// The output's.
        Output = "output",
        /// q, k and v's too.
        All = "all",
        /// None: every window [B, N, T', D].
        None = "none",
    }
}

crate::choice! {
    /// How the Gated DeltaNet kernel multiplies f32 operands.
    pub enum GdnPrecision {
        Fp32 = "fp32",
        Bf16x3 = "bf16x3",
    }
}

/// The rows a Gated DeltaNet grid step stacks by default on `target`, the fastest
/// measured: sixteen heads of 64 on v6e, eight on tpu7x (where more overflowed its 64 MiB
/// of VMEM); v5e keeps 256, unmeasured (libtpu's static profile of the kernel aborts there).
pub(super) fn gated_delta_rows(target: Generation) -> i64 {
    match target {
        Generation::V5e => 256,
        Generation::V6e => 1024,
        Generation::Tpu7x => 512,
    }
}

/// The most chunks a Gated DeltaNet grid step runs by default on `target`: on tpu7x
/// (64 MiB of VMEM) eight heads of four chunks a step ran out of it at 32 value heads and
/// 2048 tokens; two chunks fit.
pub(super) fn gated_delta_chunks(target: Generation) -> i64 {
    match target {
        Generation::Tpu7x => 2,
        Generation::V5e | Generation::V6e => 4,
    }
}

/// Tiles every Gated DeltaNet op under `root` the chunked kernel serves; false on an
/// error.
pub(super) fn tile_gated_delta(root: OperationRef, options: GatedDeltaOptions, remarks: bool) -> bool {
    for raw in gated_delta_ops(root) {
        // SAFETY: each op is erased only after it is lowered, and none is visited twice.
        let op = unsafe { OperationRef::from_raw(raw) };
        let gated_delta = GatedDeltaOp::from_operation(op).expect("collected as gated delta");
        match plan_gated_delta(gated_delta, options) {
            Ok(plan) => {
                if let Err(message) = emit_gated_delta_kernel(gated_delta, &plan) {
                    emit_error(
                        op.location(),
                        &format!("'flywheel.gated_delta' op: internal error emitting its kernel: {message}"),
                    );
                    return false;
                }
                if remarks {
                    let [b, h, c] = plan.grid();
                    emit_remark(op.location(), &format!("tiled into a Mosaic kernel (grid {b}x{h}x{c}, chunks of {}, {} value head(s) and {} chunk(s) per step)", plan.chunk, plan.heads_per_step, plan.chunks_per_step));
                }
                unsafe { mlir_sys::mlirOperationDestroy(raw) };
            }
            Err(reason) => {
                if remarks {
                    emit_remark(op.location(), &format!("kept for the reference lowering: {reason}"));
                }
            }
        }
    }
    true
}

/// The chunked kernel's plan for an op, or why the kernel cannot serve it.
fn plan_gated_delta(op: GatedDeltaOp, options: GatedDeltaOptions) -> Result<GatedDeltaPlan, String> {
    let GatedDeltaOptions {
        chunk,
        heads,
        stacked_rows,
        bf16x3,
        single_pass_products,
        exp2_gates,
        chunks_per_step,
        most_chunks_per_step,
        block_rows,
        token_major,
    } = options;
    kernel_placement(op.operation())?;
    let layout = op.layout()?;
    let value = |v: Option<Value>| v.ok_or_else(|| "missing operand".to_owned()).and_then(shape);
    let ((q, input), (k, k_element), (v, v_element)) = (value(op.q())?, value(op.k())?, value(op.v())?);
    let ((_, g_element), (_, beta_element)) = (value(op.g())?, value(op.beta())?);
    let (_, output) = shape(op.operation().result(0).map_err(|_| "no result")?.into())?;
    let (Some(input), Some(output)) =
        (floating(&input).filter(|_| k_element == input && v_element == input), floating(&output))
    else {
        return Err(format!(
            "element types {input}/{k_element}/{v_element} -> {output} (bf16 or f32, q, k and v alike)"
        ));
    };
    if g_element != "f32" || beta_element != "f32" {
        return Err("g and beta are not f32".into());
    }
    let at = |dims: &[i64], role: Role| dims[layout.position(role)];
    let chunk = if chunk == 0 { op.chunk_size()? } else { chunk };
    let (shared_operands, keys_transposed) = recorded_gated_delta(op.operation())?;
    let plan = GatedDeltaPlan {
        batch: at(&q, Role::Batch),
        key_heads: at(&k, Role::Heads),
        value_heads: at(&v, Role::Heads),
        length: at(&q, Role::Sequence),
        key_dim: at(&q, Role::HeadDim),
        value_dim: at(&v, Role::HeadDim),
        chunk,
        input,
        output,
        scale: op.scale()?,
        initial_state: op.initial_state().is_some(),
        heads_per_step: 1,
        block_heads: 1,
        bf16x3,
        // A DEFAULT source rounded its products' operands to bf16 itself (the kernel keeps
        // more where stability needs it: GatedDeltaPlan::single_pass_products).
        single_pass_products: single_pass_products || op.precision()? == Some(Precision::Default),
        single_pass_readout: single_pass_products || op.readout_precision()? == Some(Precision::Default),
        shared_operands,
        exp2_gates,
        keys_transposed,
        chunks_per_step: 1,
        // Set below, once the step's heads are known.
        token_major_inputs: false,
        token_major_output: false,
    };
    if !matches!(plan.chunk, 16 | 32 | 64 | 128) {
        return Err(format!("chunks of {} tokens (16, 32, 64 or 128)", plan.chunk));
    }
    // plan.chunks() counts whole chunks while the plan has one per step.
    let chunks_per_step = if chunks_per_step == 0 {
        [4, 2, 1].into_iter().find(|&n| n <= most_chunks_per_step && plan.chunks() % n == 0).unwrap_or(1)
    } else {
        chunks_per_step
    };
    let plan = GatedDeltaPlan { chunks_per_step, ..plan };
    if !matches!(plan.chunks_per_step, 1 | 2 | 4) {
        return Err(format!("{} chunks per grid step (1, 2 or 4)", plan.chunks_per_step));
    }
    if !matches!(plan.key_dim, 32 | 64 | 128 | 256) || !matches!(plan.value_dim, 32 | 64 | 128 | 256) {
        return Err(format!("head dims {}/{} (32, 64, 128 or 256)", plan.key_dim, plan.value_dim));
    }
    if plan.key_heads == 0 || plan.value_heads % plan.key_heads != 0 {
        return Err("the key heads do not divide the value heads".into());
    }
    // The most value heads per step, up to `heads`, that divide the heads and either
    // divide a key head's group or hold whole groups.
    let group = plan.group();
    let fits = |n: &i64| plan.value_heads % n == 0 && (group % n == 0 || n % group == 0);
    let heads = if heads == 0 { (stacked_rows / plan.chunk).max(1) } else { heads };
    let heads_per_step = (1..=heads.max(1)).rev().find(fits).unwrap_or(1);
    // The most heads per diagonal block, up to `block_rows`, that divide the step's; a
    // block that is not the whole step starts at a multiple of 128 lanes in the gate rows.
    let block_heads = (1..=(block_rows / plan.chunk).max(1)).rev().find(|n| heads_per_step % n == 0).unwrap_or(1);
    let block_heads =
        if block_rows == 0 || (block_heads * plan.chunk) % 128 != 0 { heads_per_step } else { block_heads };
    let plan = GatedDeltaPlan { heads_per_step, block_heads, ..plan };
    // Token-major windows for ops with tokens before heads, where a step's heads x head
    // dim are lanes Mosaic takes; otherwise that window stays head-major.
    let tokens_first = layout.position(Role::Sequence) < layout.position(Role::Heads);
    let values_fit = whole_lanes(plan.heads_per_step * plan.value_dim, plan.value_heads * plan.value_dim);
    let keys_fit = whole_lanes(plan.key_heads_per_step() * plan.key_dim, plan.key_heads * plan.key_dim);
    let token_major_output = token_major != TokenMajor::None && tokens_first && values_fit;
    Ok(GatedDeltaPlan {
        token_major_inputs: token_major == TokenMajor::All && token_major_output && keys_fit,
        token_major_output,
        ..plan
    })
}

fn emit_gated_delta_kernel<'c, 'a>(op_view: GatedDeltaOp<'c, 'a>, plan: &GatedDeltaPlan) -> Result<(), String> {
    let op = op_view.operation();
    let b = HloBuilder::before(op);
    let layout = op_view.layout()?;
    // q, k as [B, Nk, T', Dk], v as [B, Nv, T', Dv], the gates as one row per chunk and
    // grid step's heads, [B, Nv / H, T' / C, 1, H x C] (H value heads per step): each its operand padded with zeros to whole chunks (a zero
    // gate and write strength leave the state alone), then rearranged.
    let mut atoms = Atoms::new();
    let mut fresh = |size: i64| atoms.source(&[size]).remove(0);
    let (batch, chunks, chunk) = (fresh(plan.batch), fresh(plan.chunks()), fresh(plan.chunk));
    let (key_heads, head_blocks, step_heads) =
        (fresh(plan.key_heads), fresh(plan.value_heads / plan.heads_per_step), fresh(plan.heads_per_step));
    let (key_dim, value_dim) = (fresh(plan.key_dim), fresh(plan.value_dim));
    let value_heads = [head_blocks.clone(), step_heads.clone()].concat();
    let time = [chunks.clone(), chunk.clone()].concat();
    let operand = |value: Option<Value<'c, 'a>>| value.ok_or_else(|| "missing operand".to_owned());
    let keys_axes = in_layout(layout, [&batch, &time, &key_heads, &key_dim]);
    let values_axes = in_layout(layout, [&batch, &time, &value_heads, &value_dim]);
    let gate_axes: Vec<Axis> = [Role::Batch, Role::Sequence, Role::Heads]
        .into_iter()
        .map(|role| (layout.position_without_head_dim(role), role))
        .collect::<std::collections::BTreeMap<_, _>>()
        .into_values()
        .map(|role| match role {
            Role::Batch => batch.clone(),
            Role::Sequence => time.clone(),
            _ => value_heads.clone(),
        })
        .collect();
    let rearrange = |value: Value<'c, 'a>, axes: &[Axis], target: &[Axis]| rearranged(&b, &atoms, value, axes, target);
    let gate_target =
        [batch.clone(), head_blocks.clone(), chunks.clone(), Vec::new(), [step_heads.clone(), chunk.clone()].concat()];
    // The kernel's q, k, v and output: [B, T', N x D] token-major, else [B, N, T', D].
    let kernel_axes = |token_major: bool, heads: &Axis, dim: &Axis| {
        if token_major {
            vec![batch.clone(), time.clone(), [heads.clone(), dim.clone()].concat()]
        } else {
            vec![batch.clone(), heads.clone(), time.clone(), dim.clone()]
        }
    };
    let (kernel_keys, kernel_values) = (
        kernel_axes(plan.token_major_inputs, &key_heads, &key_dim),
        kernel_axes(plan.token_major_inputs, &value_heads, &value_dim),
    );
    let kernel_output = kernel_axes(plan.token_major_output, &value_heads, &value_dim);
    let mut operands = vec![
        rearrange(operand(op_view.q())?, &keys_axes, &kernel_keys)?,
        rearrange(operand(op_view.k())?, &keys_axes, &kernel_keys)?,
        rearrange(operand(op_view.v())?, &values_axes, &kernel_values)?,
        chunk_gates(&b, rearrange(operand(op_view.g())?, &gate_axes, &gate_target)?, plan),
        rearrange(operand(op_view.beta())?, &gate_axes, &gate_target)?,
    ];
    operands.extend(op_view.initial_state());
    if plan.keys_transposed {
        operands.push(rearrange(
            operand(op_view.k())?,
            &keys_axes,
            &[batch.clone(), key_heads.clone(), key_dim.clone(), time.clone()],
        )?);
    }
    let output_shape: Vec<i64> = kernel_output.iter().map(|axis| atoms.axis_size(axis)).collect();
    let state_shape = [plan.batch, plan.value_heads, plan.key_dim, plan.value_dim];
    let kernel = kernel_op(
        &b,
        op,
        "flywheel.gated_delta_kernel",
        |symbol| gated_delta_kernel::kernel_module(plan, symbol),
        &operands,
        &[b.tensor_type(&output_shape, plan.output.name()), b.tensor_type(&state_shape, "f32")],
        &format!("1, 1, 1, 1, 1, {}, {}", i32::from(plan.initial_state), i32::from(plan.keys_transposed)),
        [plan.flops(), plan.transcendentals(), plan.bytes_accessed()],
    )?;
    let final_state: Value = kernel.result(1).expect("final state").into();
    let state = op.result(1).map_err(|_| "no final state")?;
    unsafe { mlir_sys::mlirValueReplaceAllUsesOfWith(state.to_raw(), final_state.to_raw()) };
    let result = op.result(0).map_err(|_| "no result")?.into();
    replace_with_output(
        &b,
        &atoms,
        kernel.result(0).expect("o").into(),
        &kernel_output,
        plan.output.name(),
        &values_axes,
        result,
    )
}

/// The kernel's gate rows from g's, [B, Nv / H, T' / C, 1, H x C] (H value heads per
/// step): γ = cumsum(g) within each head's chunk and, beside it along the unit axis, each
/// head's γ_C repeated over its chunk: [B, Nv / H, T' / C, 2, H x C].
fn chunk_gates<'c, 'a>(b: &HloBuilder<'c, 'a>, g: Value<'c, 'a>, plan: &GatedDeltaPlan) -> Value<'c, 'a> {
    let (heads, chunk) = (plan.heads_per_step, plan.chunk);
    let rows = [plan.batch, plan.value_heads / heads, plan.chunks(), 1, heads * chunk];
    let per_head = [plan.batch, plan.value_heads / heads, plan.chunks(), heads, chunk];
    let gamma = b.prefix_sum(b.reshape(g, &rows, &per_head, "f32"), &per_head, "f32");
    let last = b.slice(gamma, &[0, 0, 0, 0, chunk - 1], &per_head, "f32");
    let total = b.broadcast_in_dim(last, &[0, 1, 2, 3, 4], &per_head, "f32");
    let (gamma, total) = (b.reshape(gamma, &per_head, &rows, "f32"), b.reshape(total, &per_head, &rows, "f32"));
    b.concatenate(&[gamma, total], 3, &[rows[0], rows[1], rows[2], 2, rows[4]], "f32")
}
