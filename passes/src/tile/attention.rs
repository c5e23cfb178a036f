//! Tiling attention: the kernel plan (grid, blocks capped by the sequence lengths and the
//! target's VMEM, or chosen by the block search) and the kernel op with its operands
//! padded and rearranged into the kernel's layout.

use super::{
    block_search::{self, SearchFailure},
    floating, in_layout, kernel_op, rearranged, replace_with_output, shape, whole_lanes,
};
use crate::{
    analysis::atoms::{Atoms, Axis},
    analysis::hlo::HloBuilder,
    prepare::layout::recorded,
    prepare::shard::kernel_placement,
    target::Generation,
};
use flywheel_dialect::{
    diagnostics::{emit, emit_error, emit_remark, Severity},
    layout::Axis as Role,
    ops::AttentionOp,
    stablehlo::{ComparisonDirection, ComparisonType},
};
use flywheel_kernels::attention::{kernel_module, whole_blocks, Extra, KernelPlan};
use flywheel_kernels::tile_ir::{attention_ops, mutable};
use flywheel_kernels::Element;
use melior::ir::{
    operation::{OperationLike, OperationMutLike, OperationRef},
    Value,
};

/// The (query, key) blocks auto-blocks tries, plain and causal; each is capped like a
/// given block size (sequence lengths, VMEM budget) and duplicates are tried once.
const PLAIN_CANDIDATES: &[(i64, i64)] =
    &[(512, 1024), (512, 2048), (1024, 1024), (1024, 2048), (2048, 1024), (2048, 2048)];
const CAUSAL_CANDIDATES: &[(i64, i64)] = &[(512, 512), (512, 1024), (1024, 512), (1024, 1024), (2048, 512)];

/// The most query rows (queries x group heads) one grid step stacks.
const MAX_STACKED_ROWS: i64 = 2048;
/// The widest query/key or value head the kernel serves.
const MAX_HEAD_DIM: i64 = 512;

/// The most elements of one grid step's score tile.
const MAX_SCORE_ELEMENTS: i64 = 2048 * 1024;

/// On v6e, the most for a kernel with no mask or bias operand, unless transposed at a
/// head dim past 128 (2048 x 2048 blocks at 256 did not fit): steps of 2048 x 2048 (half
/// that with a band) fit its VMEM (the transposed kernel with its `vmem_limit`, below) and
/// were the fastest measured (docs/benchmarks.md, "Measurements behind the defaults").
const V6E_SCORE_ELEMENTS: i64 = 2 * MAX_SCORE_ELEMENTS;

/// The most keys per step of a transposed kernel on tpu7x whose keys take several steps:
/// with the lagged max (flywheel-tpu's), MHA 8 x 8192 x 128 ran out of tpu7x's VMEM at
/// 1024 x 2048 blocks and fits at 2048 x 1024. (With one key step, 1024 x 2048 fits and is
/// the faster.)
const TPU7X_TRANSPOSED_KEYS: i64 = 1024;

/// The scoped VMEM (MiB) a kernel asks libtpu for, 0 for its default: 36 for a
/// transposed kernel on v6e with a score tile past MAX_SCORE_ELEMENTS (the default is 32),
/// whose 2048 x 2048 blocks need a little over 32 MiB when the lagged max's redo branch
/// stores the step's state itself. No more, and not for other kernels or targets: the
/// limit also moves XLA's own buffers, and a whole program can then overflow VMEM.
fn scoped_vmem(generation: Generation, transposed: bool, score_elements: i64) -> i64 {
    match generation {
        Generation::V6e if transposed && score_elements > MAX_SCORE_ELEMENTS => 36,
        _ => 0,
    }
}

/// Block sizes (query, key) for plain and for causal attention.
#[derive(Clone, Copy, Debug)]
pub struct Blocks {
    pub plain: (i64, i64),
    pub causal: (i64, i64),
    /// Sub-blocks per key block.
    pub key_splits: i64,
    /// Transposed kernels take key blocks of at least this many keys whole (0: never).
    pub transposed_whole_keys: i64,
    /// The generation the kernel is for: what fits its VMEM differs.
    pub generation: Generation,
}

impl Blocks {
    /// These options with the same blocks for plain and causal attention.
    fn with_both(self, blocks: (i64, i64)) -> Blocks {
        Blocks { plain: blocks, causal: blocks, ..self }
    }
}

/// Tiles every attention under `root` the kernel serves, with `blocks`, or with `search`
/// the fastest candidate blocks on their generation; false on an error.
pub(super) fn tile(root: OperationRef, blocks: Blocks, search: bool, remarks: bool) -> bool {
    let least = [
        ("block-q", blocks.plain.0, 1),
        ("block-kv", blocks.plain.1, 1),
        ("causal-block-q", blocks.causal.0, 1),
        ("causal-block-kv", blocks.causal.1, 1),
        ("key-splits", blocks.key_splits, 1),
        ("transposed-whole-keys", blocks.transposed_whole_keys, 0),
    ];
    if let Some((name, value, least)) = least.into_iter().find(|&(_, value, least)| value < least) {
        emit_error(root.location(), &format!("flywheel-tile: {name} must be at least {least}, not {value}"));
        return false;
    }
    for raw in attention_ops(root) {
        // SAFETY: each op is erased only after it is lowered, and none is visited twice.
        let op = unsafe { OperationRef::from_raw(raw) };
        let attention = AttentionOp::from_operation(op).expect("collected as attention");
        let blocks = if search {
            match search_blocks(attention, blocks) {
                Ok((chosen, note)) => {
                    if remarks {
                        emit_remark(op.location(), &note);
                    }
                    chosen
                }
                // Nothing to search: the op is kept below with the plan's own reason.
                Err(None) => blocks,
                Err(Some(SearchFailure::ProfilerAborted)) => {
                    let message = format!("auto block search: libtpu's static profiler aborted on every candidate for {}; the configured blocks are used", blocks.generation.name());
                    emit(op.location(), Severity::Warning, &message);
                    blocks
                }
                Err(Some(SearchFailure::Failed(message))) => {
                    emit_error(op.location(), &format!("'flywheel.attention' op: auto block search failed: {message}"));
                    return false;
                }
            }
        } else {
            blocks
        };
        match plan(attention, blocks) {
            Ok(plan) => {
                if let Err(message) = emit_kernel(attention, &plan) {
                    emit_error(
                        op.location(),
                        &format!("'flywheel.attention' op: internal error emitting its kernel: {message}"),
                    );
                    return false;
                }
                if remarks {
                    let [b, h, qb, kb] = plan.grid();
                    let orientation = if plan.transposed { "transposed" } else { "standard" };
                    let row_sum = if plan.row_sum_on_mxu { "MXU" } else { "VPU" };
                    emit_remark(op.location(), &format!("tiled into a Mosaic kernel (grid {b}x{h}x{qb}x{kb}, query group {}, blocks {}x{}, {orientation} orientation, row sum on the {row_sum}, {} key sub-block(s))", plan.group(), plan.block_q, plan.block_kv, plan.key_splits));
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

/// The fastest of the candidate blocks for `attention` on `blocks`' generation, with a remark
/// listing what each candidate cost; Err(None) when the kernel serves no candidate.
fn search_blocks(attention: AttentionOp, blocks: Blocks) -> Result<(Blocks, String), Option<SearchFailure>> {
    let Blocks { key_splits, transposed_whole_keys, generation, .. } = blocks;
    let target = generation.name();
    let causal = attention.causal().map_err(|e| Some(SearchFailure::Failed(e.to_string())))?;
    let given = if causal { CAUSAL_CANDIDATES } else { PLAIN_CANDIDATES };
    // Candidates that give distinct plans after capping.
    let mut candidates: Vec<(i64, i64)> = Vec::new();
    for &(q, k) in given {
        if let Ok(plan) = plan(attention, blocks.with_both((q, k))) {
            if !candidates.contains(&(plan.block_q, plan.block_kv)) {
                candidates.push((plan.block_q, plan.block_kv));
            }
        }
    }
    if candidates.is_empty() {
        return Err(None);
    }
    let transforms = crate::target::kernel_transforms(generation, false);
    let pipeline = |(q, k): (i64, i64)| {
        format!("builtin.module(flywheel-tile{{block-q={q} block-kv={k} causal-block-q={q} causal-block-kv={k} key-splits={key_splits} transposed-whole-keys={transposed_whole_keys} target={target}}},{transforms},flywheel-lower-to-mosaic)")
    };
    let choice = block_search::search(attention, target, &candidates, pipeline).map_err(Some)?;
    let (q, k) = choice.blocks;
    let costs: Vec<String> = choice
        .measured
        .iter()
        .map(|((q, k), cycles)| format!("{q}x{k}: {}", cycles.map_or("failed".to_owned(), |c| c.to_string())))
        .collect();
    let source = if choice.cached { "cached search" } else { "search" };
    let note = format!("blocks {q}x{k} chosen by {source} on {target} (static cycles {})", costs.join(", "));
    Ok((blocks.with_both((q, k)), note))
}

/// The kernel plan for an op, or why the baseline kernel cannot serve it.
fn plan(attention: AttentionOp, blocks: Blocks) -> Result<KernelPlan, String> {
    kernel_placement(attention.operation())?;
    if attention.q_segment_ids().is_some() {
        return Err("segment ids are not in the baseline kernel yet".into());
    }
    // The kernel reads a mask as i32 (the op's boolean mask is widened outside it), and a
    // bias in its own bf16 or f32.
    let extra = |value: Option<Value>, element: fn(&str) -> Option<Element>| -> Result<Option<Extra>, String> {
        value
            .map(|value| {
                let (dims, name) = shape(value)?;
                let element = element(&name).ok_or("the bias is neither bf16 nor f32")?;
                Ok(Extra { one_batch: dims[0] == 1, one_head: dims[1] == 1, element })
            })
            .transpose()
    };
    let mask = extra(attention.mask(), |_| Some(Element::I32))?;
    let bias = extra(attention.bias(), floating)?;
    let (transposed, row_sum_on_mxu) = recorded(attention.operation())?;
    if transposed && (mask.is_some() || bias.is_some()) {
        return Err("the transposed orientation takes no mask or bias operand".into());
    }
    let layout = attention.layout()?;
    let value = |v: Option<Value>| v.ok_or_else(|| "missing operand".to_owned()).and_then(shape);
    let ((q, input), (k, k_element), (v, v_element)) =
        (value(attention.q())?, value(attention.k())?, value(attention.v())?);
    let (_, output) = shape(attention.operation().result(0).map_err(|_| "no result")?.into())?;
    let (Some(input), Some(output)) =
        (floating(&input).filter(|_| k_element == input && v_element == input), floating(&output))
    else {
        return Err(format!("element types {input}/{k_element}/{v_element} -> {output} (bf16 or f32, all alike)"));
    };
    let at = |dims: &[i64], role: Role| dims[layout.position(role)];
    let (queries, keys) = (at(&q, Role::Sequence), at(&k, Role::Sequence));
    // The q, k and v blocks of a wider head stop fitting VMEM; the generated kernel's text
    // grows with the head too (2^31 once took minutes to parse).
    let widest = at(&q, Role::HeadDim).max(at(&v, Role::HeadDim));
    if widest > MAX_HEAD_DIM {
        return Err(format!("head dim {widest} (the kernel serves up to {MAX_HEAD_DIM})"));
    }
    let (block_q, block_kv) = if attention.causal()? { blocks.causal } else { blocks.plain };
    // Fewer keys and as many more queries, the same score tile.
    let (block_q, block_kv) = if blocks.generation == Generation::Tpu7x
        && transposed
        && block_kv > TPU7X_TRANSPOSED_KEYS
        && keys > block_kv
    {
        (block_q * block_kv / TPU7X_TRANSPOSED_KEYS, TPU7X_TRANSPOSED_KEYS)
    } else {
        (block_q, block_kv)
    };
    // A grid step stacks the query group's rows. Keep the score tile within VMEM (libtpu
    // runs out on v5e past these): at most MAX_STACKED_ROWS rows, and at most
    // MAX_SCORE_ELEMENTS elements (on v6e V6E_SCORE_ELEMENTS without a mask or bias),
    // half that when a band is masked (its masks take room), by taking fewer queries,
    // then fewer keys (whole 128-lane columns), per step.
    let group = attention.q_heads()? / attention.kv_heads()?.max(1);
    let block_q = block_q.min((MAX_STACKED_ROWS / group / 8).max(1) * 8);
    let banded = attention.causal()? || attention.window()?.is_some();
    let wide_heads = at(&q, Role::HeadDim) > 128 || at(&v, Role::HeadDim) > 128;
    let budget =
        if blocks.generation == Generation::V6e && mask.is_none() && bias.is_none() && !(transposed && wide_heads) {
            V6E_SCORE_ELEMENTS
        } else {
            MAX_SCORE_ELEMENTS
        };
    let budget = if banded { budget / 2 } else { budget };
    // The transposed kernel keeps its keys and takes fewer queries (the faster measured).
    let block_q = if transposed { block_q.min((budget / block_kv / group / 8).max(1) * 8) } else { block_q };
    let block_kv = block_kv.min((budget / (block_q * group) / 128).max(1) * 128);
    // A block spans the whole sequence or a multiple of 8 rows (the TPU's sublanes); a
    // sequence it does not divide is padded at the end to whole blocks. A short sequence
    // gets one block, of its length rounded up to 8 queries or 128 keys (a whole number
    // of lanes in the score tile: libtpu's profiler aborts on ragged lane tiles).
    let (block_q, block_kv) = (block_q.min(whole_blocks(queries, 8)), block_kv.min(whole_blocks(keys, 128)));
    let fits = |length: i64, block: i64| block == length || (block > 0 && block % 8 == 0);
    if !fits(queries, block_q) || !fits(keys, block_kv) {
        return Err(format!("blocks {block_q}/{block_kv} for sequence lengths {queries}/{keys}: a block is a whole sequence or a multiple of 8"));
    }
    // Where key blocks run along lanes: Kᵀ and Vᵀ transposed, a mask's or bias's columns.
    if (transposed || mask.is_some() || bias.is_some()) && !whole_lanes(block_kv, whole_blocks(keys, block_kv)) {
        return Err(format!("key blocks of {block_kv} along the lanes (the transposed orientation, a mask or a bias) take whole 128-lane tiles or all {keys} keys"));
    }
    // A causal kernel whose key blocks outreach its query blocks keeps its sub-blocks:
    // on the diagonal it skips those past the band.
    let skips_past_band = attention.causal()? && block_q < block_kv;
    let whole =
        transposed && blocks.transposed_whole_keys > 0 && block_kv >= blocks.transposed_whole_keys && !skips_past_band;
    let splits = if whole { 1 } else { blocks.key_splits };
    let plan = KernelPlan {
        batch: at(&q, Role::Batch),
        q_heads: attention.q_heads()?,
        kv_heads: attention.kv_heads()?,
        queries,
        keys,
        head_dim: at(&q, Role::HeadDim),
        value_dim: at(&v, Role::HeadDim),
        block_q,
        block_kv,
        input,
        output,
        scale: attention.scale()?,
        causal: attention.causal()?,
        window: attention.window()?,
        soft_cap: attention.logit_soft_cap()?,
        transposed,
        // The ones beside V make whole lane tiles only with whole-tile blocks and values.
        row_sum_on_mxu: row_sum_on_mxu && !transposed && block_kv % 128 == 0 && at(&v, Role::HeadDim) % 128 == 0,
        // The most sub-blocks, up to the count asked for, that are whole lane tiles.
        key_splits: (1..=splits).rev().find(|&n| block_kv % n == 0 && (block_kv / n) % 128 == 0).unwrap_or(1),
        mask,
        bias,
        vmem_limit: scoped_vmem(blocks.generation, transposed, block_q * group * block_kv),
    };
    // With a mask operand the band is folded into the mask (`emit_kernel`): the kernel then
    // masks every block and skips none, and a row the two empty is uniform over all keys,
    // as flywheel.attention defines it.
    let mut plan = plan;
    if plan.mask.is_some() {
        (plan.causal, plan.window) = (false, None);
    }
    if !plan.every_row_attends() {
        return Err(
            "some query has no allowed key (its row would be uniform over all keys, which the kernel does not do)"
                .into(),
        );
    }
    Ok(plan)
}

/// `mask` ([B|1, N|1, Tq, Tk] booleans of `dims`) and the band `(left, right)`: key j
/// allowed for query i only if i - left <= j <= i + right.
fn with_band<'c, 'a>(
    b: &HloBuilder<'c, 'a>,
    mask: Value<'c, 'a>,
    dims: &[i64],
    (left, right): (Option<i64>, Option<i64>),
) -> Value<'c, 'a> {
    let (query, key) = (b.iota(2, dims, "i32"), b.iota(3, dims, "i32"));
    let mut allowed = mask;
    for (bound, direction) in [(right, ComparisonDirection::Le), (left.map(|left| -left), ComparisonDirection::Ge)] {
        let Some(offset) = bound else { continue };
        let edge = b.elementwise("stablehlo.add", &[query, b.splat(offset as f64, "i32", dims)]);
        let within = b.compare(key, edge, direction, ComparisonType::Signed, dims);
        allowed = b.elementwise("stablehlo.and", &[allowed, within]);
    }
    allowed
}

fn emit_kernel<'c, 'a>(attention: AttentionOp<'c, 'a>, plan: &KernelPlan) -> Result<(), String> {
    let op = attention.operation();
    let b = HloBuilder::before(op);
    let layout = attention.layout()?;
    // Q (and O) as [B, Nkv, T x group, D] with each query's group heads adjacent, K and V
    // as BNTH, per-head masks and biases like Q: each a reshape/transpose of the operand,
    // its sequences first padded with zeros to whole blocks.
    let mut atoms = Atoms::new();
    let mut fresh = |size: i64| atoms.source(&[size]).remove(0);
    let (batch, time, kv_heads, group) =
        (fresh(plan.batch), fresh(plan.padded_queries()), fresh(plan.kv_heads), fresh(plan.group()));
    let (keys, head_dim, value_dim) = (fresh(plan.padded_keys()), fresh(plan.head_dim), fresh(plan.value_dim));
    let q_heads = [kv_heads.clone(), group.clone()].concat();
    let stacked = [time.clone(), group.clone()].concat();
    let in_layout = |sequence: &Axis, heads: &Axis, dim: &Axis| in_layout(layout, [&batch, sequence, heads, dim]);
    // Pads `value` to the sizes of `axes`, then rearranges it to `target`.
    let rearrange = |value: Value<'c, 'a>, axes: &[Axis], target: &[Axis]| rearranged(&b, &atoms, value, axes, target);
    let operand = |value: Option<Value<'c, 'a>>| value.ok_or_else(|| "missing operand".to_owned());
    let mut operands = vec![
        rearrange(
            operand(attention.q())?,
            &in_layout(&time, &q_heads, &head_dim),
            &[batch.clone(), kv_heads.clone(), stacked.clone(), head_dim.clone()],
        )?,
        rearrange(
            operand(attention.k())?,
            &in_layout(&keys, &kv_heads, &head_dim),
            &[batch.clone(), kv_heads.clone(), keys.clone(), head_dim.clone()],
        )?,
        rearrange(
            operand(attention.v())?,
            &in_layout(&keys, &kv_heads, &value_dim),
            &if plan.transposed {
                [batch.clone(), kv_heads.clone(), value_dim.clone(), keys.clone()]
            } else {
                [batch.clone(), kv_heads.clone(), keys.clone(), value_dim.clone()]
            },
        )?,
    ];
    if plan.row_sum_on_mxu {
        // V's rows get 128 columns of ones, whose products with P are l.
        let v_shape = [plan.batch, plan.kv_heads, plan.padded_keys(), plan.value_dim];
        let extended = [plan.batch, plan.kv_heads, plan.padded_keys(), plan.value_dim + 128];
        operands[2] = b.pad_with(operands[2], 1.0, &v_shape, &extended, plan.input.name());
    }
    let extra = |value: Value<'c, 'a>, extra: &Extra| -> Result<Value<'c, 'a>, String> {
        let batch = if extra.one_batch { Vec::new() } else { batch.clone() };
        let axes =
            [batch.clone(), if extra.one_head { Vec::new() } else { q_heads.clone() }, time.clone(), keys.clone()];
        let target =
            if extra.one_head { axes.clone() } else { [batch, kv_heads.clone(), stacked.clone(), keys.clone()] };
        rearrange(value, &axes, &target)
    };
    if let (Some(mask), Some(plan_mask)) = (attention.mask(), &plan.mask) {
        // The kernel reads the mask as i32 (nonzero = allowed), the op's band folded in.
        // Widened by a select, not a convert: XLA copies a converted boolean by DMA, which
        // libtpu 0.0.51's static profiler cannot price, while the select is a fusion.
        let (dims, _) = shape(mask)?;
        let band = KernelPlan { causal: attention.causal()?, window: attention.window()?, ..plan.clone() }.band();
        let mask = with_band(&b, mask, &dims, band);
        let widened = b.select(mask, b.splat(1.0, "i32", &dims), b.splat(0.0, "i32", &dims));
        operands.push(extra(widened, plan_mask)?);
    }
    if let (Some(bias), Some(plan_bias)) = (attention.bias(), &plan.bias) {
        operands.push(extra(bias, plan_bias)?);
    }
    let result_shape = [plan.batch, plan.kv_heads, plan.padded_queries() * plan.group(), plan.value_dim];
    let present = |flag: bool| i32::from(flag).to_string();
    let kernel = kernel_op(
        &b,
        op,
        "flywheel.attention_kernel",
        |symbol| kernel_module(plan, symbol),
        &operands,
        &[b.tensor_type(&result_shape, plan.output.name())],
        &format!("1, 1, 1, {}, {}", present(plan.mask.is_some()), present(plan.bias.is_some())),
        [plan.flops(), plan.transcendentals(), plan.bytes_accessed()],
    )?;
    if plan.vmem_limit > 0 {
        mutable(kernel).set_attribute("vmem_limit", b.attribute(&format!("{} : i64", plan.vmem_limit)));
    }
    let result_axes = [batch.clone(), kv_heads.clone(), stacked.clone(), value_dim.clone()];
    let output_axes = in_layout(&time, &q_heads, &value_dim);
    let result = op.result(0).map_err(|_| "no result")?.into();
    replace_with_output(
        &b,
        &atoms,
        kernel.result(0).expect("one result").into(),
        &result_axes,
        plan.output.name(),
        &output_axes,
        result,
    )
}
