//! `flywheel-tile` (see [`PASS`]): plans each kernel (grid, blocks, layouts, VMEM) and
//! writes it as tile IR with the kernel builders of `flywheel_kernels`.

pub mod block_search;

use crate::{
    analysis::atoms::{Atoms, Axis},
    analysis::hlo::{materialize, HloBuilder},
    options::Options,
    pass::{external_pass, Anchor, PassId, PassInfo},
    prepare::layout::{recorded, recorded_gated_delta},
    prepare::shard::kernel_placement,
    target::Generation,
};
use block_search::SearchFailure;
use flywheel_dialect::{
    diagnostics::{emit, emit_error, emit_remark, Severity},
    layout::{Axis as Role, Layout},
    ops::{AttentionOp, GatedDeltaOp},
    tensor::TensorInfo,
};
use flywheel_kernels::attention::{kernel_module, whole_blocks, Extra, KernelPlan};
use flywheel_kernels::gated_delta::{self as gated_delta_kernel, GatedDeltaPlan};
use flywheel_kernels::tile_ir::{attention_ops, gated_delta_ops, mutable, parse_kernel_module, top_module};
use flywheel_kernels::Element;
use melior::{
    ir::{
        attribute::StringAttribute,
        operation::{OperationBuilder, OperationLike, OperationMutLike, OperationRef},
        BlockLike, RegionLike, Type, Value, ValueLike,
    },
    pass::Pass,
};

static PASS_ID: PassId = PassId;

crate::pass_options! {
    pub struct TileOptions {
        /// Queries per grid step (capped at the sequence length, and by the VMEM budget of the score tile)
        block_q: i64 = ("block-q", "1024"),
        /// Keys per grid step (capped at the sequence length)
        block_kv: i64 = ("block-kv", "2048"),
        /// Queries per grid step for causal attention
        causal_block_q: i64 = ("causal-block-q", "1024"),
        /// Keys per grid step for causal attention (smaller blocks skip more above the diagonal)
        causal_block_kv: i64 = ("causal-block-kv", "1024"),
        /// Sub-blocks per key block, each its own online-softmax update, in program order (flywheel-pipeline overlaps
        /// them); lowered to the most that leave whole 128-key lane tiles
        key_splits: i64 = ("key-splits", "1"),
        /// Kernels in the transposed orientation whose key blocks hold at least this many keys take each block whole,
        /// one sub-block, except causal ones whose key blocks are longer than their query blocks (their diagonal blocks
        /// skip the sub-blocks past the band); smaller key blocks take key-splits (0: every block takes key-splits)
        transposed_whole_keys: i64 = ("transposed-whole-keys", "0"),
        /// Choose block sizes by compiling candidates with libtpu's static profile for `target` (cached)
        auto_blocks: bool = ("auto-blocks", "false"),
        /// The TPU generation: the one auto-blocks compiles for, and whose rows gdn-heads=0 fills
        target: Generation = ("target", "v6e"),
        /// Tokens per chunk of the Gated DeltaNet kernel (0: the op's chunk_size)
        chunk: i64 = ("chunk", "0"),
        /// Value heads per grid step of the Gated DeltaNet kernel, stacked into its matmuls (0: as many as fill the
        /// target's rows, 1024 on v6e, 512 on tpu7x, 256 on v5e; lowered to the most that divide the heads and fit the
        /// key-head groups)
        gdn_heads: i64 = ("gdn-heads", "0"),
        /// How the Gated DeltaNet kernel multiplies f32 operands: Mosaic's fp32, or three bf16 passes of their high and
        /// low parts
        gdn_precision: GdnPrecision = ("gdn-precision", "bf16x3"),
        /// In the Gated DeltaNet kernel, the products after the inverse (U and W, the state products, P V') as one bf16
        /// pass each with f32 accumulation, as fla's kernels take them; the inverse keeps gdn-precision
        gdn_single_pass: bool = ("gdn-single-pass", "false"),
        /// Chunks one grid step of the Gated DeltaNet kernel runs in order, the state passed on in registers, so a
        /// chunk's chunk-parallel work can overlap the previous chunk's state products (1, 2 or 4; 0: the most of 4, 2,
        /// 1 that divides the chunks, so no step pads, up to 2 on tpu7x, whose VMEM four overflowed)
        gdn_chunks_per_step: i64 = ("gdn-chunks-per-step", "0"),
        /// Rows of the diagonal blocks the Gated DeltaNet kernel's chunk-parallel tiles (decay, K Kᵀ, Q Kᵀ, A, the
        /// inverse, the output weights) are worked on in, whole heads of a step (0: the step's whole stacked tile,
        /// heads x chunk square)
        gdn_block_rows: i64 = ("gdn-block-rows", "128"),
        /// Which of the Gated DeltaNet kernel's windows are token-major, [B, T, N x D], where the op is laid out with
        /// tokens before heads: the output's (XLA then relayouts it to BTNH instead of transposing it), q, k and v's
        /// too (all: their transposes become relayouts, which libtpu prices both ways), or none
        gdn_token_major: TokenMajor = ("gdn-token-major", "output"),
        /// In the Gated DeltaNet kernel, gates in base 2 (the γ and γ_C rows x log2(e) once per chunk) and exp2 for
        /// every exponential of a gate sum (off: libtpu's static cycles gave no gain)
        gdn_exp2: bool = ("gdn-exp2", "false"),
        /// Remark on each kernel emitted and each op kept
        remarks: bool = ("remarks", "false"),
    }
}

/// The (query, key) blocks auto-blocks tries, plain and causal; each is capped like a
/// given block size (sequence lengths, VMEM budget) and duplicates are tried once.
const PLAIN_CANDIDATES: &[(i64, i64)] =
    &[(512, 1024), (512, 2048), (1024, 1024), (1024, 2048), (2048, 1024), (2048, 2048)];
const CAUSAL_CANDIDATES: &[(i64, i64)] = &[(512, 512), (512, 1024), (1024, 512), (1024, 1024), (2048, 512)];

pub const PASS: PassInfo = PassInfo {
    name: "flywheel-tile",
    summary: "Plan a Mosaic kernel for each flywheel.attention and write it as FlyWheel tile IR",
    description: "Turns each `flywheel.attention` and `flywheel.gated_delta` a kernel serves into FlyWheel tile \
IR: a kernel plan (for attention a grid over batch, key/value heads and query blocks with a key-block reduction \
loop; for Gated DeltaNet a grid over batch and head groups with the chunks in order), the operands padded and \
rearranged into the kernel's layout, and a `flywheel.attention_kernel` or `flywheel.gated_delta_kernel` op holding \
the kernel module, which the FlyWheel transforms rewrite and `flywheel-lower-to-mosaic` serializes. Block sizes come \
from the options, capped at the sequence lengths and the target's VMEM, or with auto-blocks from compiling the \
candidates. An op no kernel serves stays (for the reference lowering), with a remark saying why.",
    options: TileOptions::SPECS,
    create: |text| Ok(create(TileOptions::parse(text)?)),
};

/// The most query rows (queries x group heads) one grid step stacks.
const MAX_STACKED_ROWS: i64 = 2048;

/// The most elements of one grid step's score tile.
const MAX_SCORE_ELEMENTS: i64 = 2048 * 1024;

/// On v6e, the most for a kernel with no mask or bias operand, unless transposed at a
/// head dim past 128 (2048 x 2048 blocks at 256 did not fit in 33 to 48 MiB): steps of 2048 x 2048
/// (half that with a band) fit its VMEM (the transposed kernel with its `vmem_limit`,
/// below) and were the fastest measured (libtpu's static cycles, MHA 8 x 8192 x 128:
/// transposed with the lagged max 983,414 against 1,082,308 at 1024 x 2048; standard 1,215,530 against 1,255,338 at
/// 2048 x 1024; causal GQA 16/2 x 8192 x 256, 2048 stacked rows: 2,148,476 with 1024
/// keys a step against 2,635,100 with 512, and 2,322,812 with 2048).
const V6E_SCORE_ELEMENTS: i64 = 2 * MAX_SCORE_ELEMENTS;

/// The most keys per step of a transposed kernel on tpu7x whose keys take several steps:
/// with the lagged max (flywheel-tpu's), MHA 8 x 8192 x 128 ran out of tpu7x's VMEM at
/// 1024 x 2048 blocks (Mosaic: "65.52M of 63.94M") and fits at 2048 x 1024. (At 2048 tokens, one
/// key step, 1024 x 2048 fits and is the faster: 72,728 static cycles against 80,308.)
const TPU7X_TRANSPOSED_KEYS: i64 = 1024;

/// The scoped VMEM (MiB) a kernel asks libtpu for, 0 for its default: 36 for a
/// transposed kernel on v6e with a score tile past MAX_SCORE_ELEMENTS (the default is 32),
/// whose 2048 x 2048 blocks need 32.41 MiB when the lagged max's redo branch stores the
/// step's state itself (MHA 8 x 8192 x 128: 983,414 static cycles at 33 to 40 MiB;
/// 1024 x 2048 blocks at head dim 256 take the same cycles at 32 and 36). No more, and
/// not for other kernels or targets: the limit also moves XLA's own buffers, and a whole
/// program can then overflow VMEM (at 48 MiB MHA 8 x 8192 needed 128.41 of v6e's 127.94
/// MiB; causal GQA 32/8 x 8192 at 36, 130.24 standard and 133.16 transposed; on tpu7x no
/// one limit served MHA 8 at 2048, 4096 and 8192 tokens).
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

fn create(options: TileOptions) -> Pass {
    let blocks = Blocks {
        plain: (options.block_q, options.block_kv),
        causal: (options.causal_block_q, options.causal_block_kv),
        key_splits: options.key_splits,
        transposed_whole_keys: options.transposed_whole_keys,
        generation: options.target,
    };
    let (remarks, search) = (options.remarks, options.auto_blocks);
    let kernel = GatedDeltaOptions {
        chunk: options.chunk,
        heads: options.gdn_heads,
        stacked_rows: gated_delta_rows(blocks.generation),
        most_chunks_per_step: gated_delta_chunks(blocks.generation),
        bf16x3: options.gdn_precision == GdnPrecision::Bf16x3,
        single_pass_products: options.gdn_single_pass,
        exp2_gates: options.gdn_exp2,
        chunks_per_step: options.gdn_chunks_per_step,
        block_rows: options.gdn_block_rows,
        token_major: options.gdn_token_major,
    };
    external_pass(&PASS, &PASS_ID, Anchor::Any, move |op: OperationRef| {
        tile(op, blocks, search, remarks) && tile_gated_delta(op, kernel, remarks)
    })
}

/// Tiles every attention under `root` the kernel serves, with `blocks`, or with `search`
/// the fastest candidate blocks on their generation; false on an error.
pub fn tile(root: OperationRef, blocks: Blocks, search: bool, remarks: bool) -> bool {
    if blocks.key_splits < 1 {
        emit_error(
            root.location(),
            &format!("flywheel-tile: key-splits must be at least 1, not {}", blocks.key_splits),
        );
        return false;
    }
    if blocks.transposed_whole_keys < 0 {
        emit_error(
            root.location(),
            &format!("flywheel-tile: transposed-whole-keys must be at least 0, not {}", blocks.transposed_whole_keys),
        );
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

/// The kernels' floating element type `name` names: bf16 or f32.
fn floating(name: &str) -> Option<Element> {
    Element::named(name).filter(|element| matches!(element, Element::Bf16 | Element::F32))
}

fn shape(value: Value) -> Result<(Vec<i64>, String), String> {
    let info = TensorInfo::of_value(value).ok_or("an operand is not a ranked tensor")?;
    let dims = info.shape.iter().map(|d| d.ok_or("dynamic shape")).collect::<Result<Vec<_>, _>>()?;
    Ok((dims, info.element_name()))
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
    let bias = extra(attention.bias(), |name| floating(name))?;
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
    // The transposed kernel keeps its keys and takes fewer queries (MHA 8 x 8192 x 256 on
    // v6e: 1,487,160 static cycles at 1024 x 2048, 1,506,552 at 2048 x 1024).
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
    // on the diagonal it skips those past the band (causal GQA 32/8 x 8192 on v6e, 512
    // queries x 1024 keys a step: 2,361,386 static cycles in two sub-blocks, 2,479,578 whole).
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
    if plan.mask.is_some() && plan.band() != (None, None) {
        // A row the mask empties is uniform over all keys; with a band the kernel skips blocks.
        return Err("a mask together with causal or a window is not in the baseline kernel yet".into());
    }
    if !plan.every_row_attends() {
        return Err(
            "some query has no allowed key (its row would be uniform over all keys, which the kernel does not do)"
                .into(),
        );
    }
    Ok(plan)
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
        // The kernel reads the mask as i32 (nonzero = allowed).
        let (dims, _) = shape(mask)?;
        operands.push(extra(b.convert(mask, &dims, "i1", "i32"), plan_mask)?);
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

/// The axes of an operand in `layout`, given those of batch, sequence, heads and head dim.
fn in_layout(layout: Layout, [batch, sequence, heads, dim]: [&Axis; 4]) -> Vec<Axis> {
    layout
        .order()
        .iter()
        .map(|role| match role {
            Role::Batch => batch.clone(),
            Role::Sequence => sequence.clone(),
            Role::Heads => heads.clone(),
            Role::HeadDim => dim.clone(),
        })
        .collect()
}

/// `value` (with `axes`) padded with zeros at the end to the sizes of `axes`, then
/// rearranged to `target`.
fn rearranged<'c, 'a>(
    b: &HloBuilder<'c, 'a>,
    atoms: &Atoms,
    value: Value<'c, 'a>,
    axes: &[Axis],
    target: &[Axis],
) -> Result<Value<'c, 'a>, String> {
    let (dims, element) = shape(value)?;
    let padded: Vec<i64> = axes.iter().map(|axis| atoms.axis_size(axis)).collect();
    let value = b.pad_with_zeros(value, &dims, &padded, &element);
    Ok(materialize(b, atoms, value, axes, &element, target))
}

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
    /// The products after the inverse in one bf16 pass.
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

/// The rows a Gated DeltaNet grid step stacks by default on `target`: libtpu's static
/// cycles, 4 key / 8 value heads x 2048 tokens, chunks of 64, diagonal blocks of 128
/// rows (before the bf16x3 operands were split once): v6e 166,990 with 8 heads per step
/// against 198,591 with 4; tpu7x 161,103 against 201,749. v5e keeps 256, unmeasured
/// (libtpu's static profile of the kernel aborts there). v6e takes 1024, sixteen heads:
/// 8 key / 16 value heads, 8192 tokens, 818,729 against 861,259 with eight; 16 / 32 heads
/// at 2048 tokens 457,875 against 478,257 (it compiles at 32768 tokens). tpu7x keeps 512:
/// eight heads with four chunks a step already overflowed its 64 MiB of VMEM (below).
fn gated_delta_rows(target: Generation) -> i64 {
    match target {
        Generation::V5e => 256,
        Generation::V6e => 1024,
        Generation::Tpu7x => 512,
    }
}

/// The most chunks a Gated DeltaNet grid step runs by default on `target`: on tpu7x
/// (64 MiB of VMEM) eight heads of four chunks a step ran out of it at 32 value heads and
/// 2048 tokens (66.08M with XLA's own buffers, libtpu 0.0.50.1), two chunks fit, and on
/// the 4 key / 8 value head slice at 2048 tokens they take 146,287 static cycles against
/// 142,583 with four.
fn gated_delta_chunks(target: Generation) -> i64 {
    match target {
        Generation::Tpu7x => 2,
        Generation::V5e | Generation::V6e => 4,
    }
}

/// Tiles every Gated DeltaNet op under `root` the chunked kernel serves; false on an
/// error.
pub fn tile_gated_delta(root: OperationRef, options: GatedDeltaOptions, remarks: bool) -> bool {
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
        single_pass_products,
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

/// Whether a window's block of `block` lanes, of an array `array` lanes wide, is one
/// Mosaic takes: whole 128-lane tiles, or the whole array.
fn whole_lanes(block: i64, array: i64) -> bool {
    block % 128 == 0 || block == array
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

/// Replaces `result` (an op's result, in the op's layout) by a kernel's output `value`
/// (with `axes`): rearranged to `output_axes`, then sliced to the result's unpadded shape.
fn replace_with_output<'c, 'a>(
    b: &HloBuilder<'c, 'a>,
    atoms: &Atoms,
    value: Value<'c, 'a>,
    axes: &[Axis],
    element: &str,
    output_axes: &[Axis],
    result: Value<'c, 'a>,
) -> Result<(), String> {
    let output = materialize(b, atoms, value, axes, element, output_axes);
    let padded: Vec<i64> = output_axes.iter().map(|axis| atoms.axis_size(axis)).collect();
    let output = b.leading_slice(output, &padded, &shape(result)?.0, element);
    unsafe { mlir_sys::mlirValueReplaceAllUsesOfWith(result.to_raw(), output.to_raw()) };
    Ok(())
}

/// The kernel op `name` on `operands`, before `anchor`, with results of `result_types`,
/// its optional operands' `segments` (the `operandSegmentSizes` list) and the cost libtpu
/// is told (flops, transcendentals, bytes accessed); its kernel module, `module(symbol)`
/// text, is placed at the end of the program's top module under a fresh symbol.
#[allow(clippy::too_many_arguments)]
fn kernel_op<'c, 'a>(
    b: &HloBuilder<'c, 'a>,
    anchor: OperationRef<'c, 'a>,
    name: &str,
    module: impl FnOnce(&str) -> String,
    operands: &[Value<'c, 'a>],
    result_types: &[Type<'c>],
    segments: &str,
    [flops, transcendentals, bytes_accessed]: [i64; 3],
) -> Result<OperationRef<'c, 'a>, String> {
    let top = top_module(anchor).ok_or("the op is not inside a module")?;
    let symbol = fresh_symbol(top, "flywheel_kernel");
    let text = module(&symbol);
    let context = anchor.location().context();
    // SAFETY: the context outlives this function (the program lives in it).
    let parsed = parse_kernel_module(unsafe { context.to_ref() }, &text)?;
    let body = top.region(0).ok().and_then(|region| region.first_block()).ok_or("the top module has no body")?;
    // The parsed module's operation moves into the program (appended to its top block,
    // which then owns it), so the parsed module itself is never destroyed.
    let parsed = std::mem::ManuallyDrop::new(parsed);
    unsafe {
        mlir_sys::mlirBlockAppendOwnedOperation(body.to_raw(), mlir_sys::mlirModuleGetOperation(parsed.to_raw()))
    };
    let mut kernel = OperationBuilder::new(name, anchor.location())
        .add_operands(operands)
        .add_results(result_types)
        .build()
        .map_err(|error| error.to_string())?;
    for (attribute, value) in [
        ("operandSegmentSizes", format!("array<i32: {segments}>")),
        ("flops", format!("{flops} : i64")),
        ("transcendentals", format!("{transcendentals} : i64")),
        ("bytes_accessed", format!("{bytes_accessed} : i64")),
        ("kernel", format!("@{symbol}")),
    ] {
        kernel.set_attribute(attribute, b.attribute(&value));
    }
    Ok(b.insert_op(kernel))
}

/// `prefix_N` for the first N no op directly in `module` is named.
fn fresh_symbol(module: OperationRef, prefix: &str) -> String {
    let mut taken = std::collections::HashSet::new();
    if let Some(block) = module.region(0).ok().and_then(|region| region.first_block()) {
        let mut next = block.first_operation();
        while let Some(op) = next {
            if let Some(name) = op.attribute("sym_name").ok().and_then(|a| StringAttribute::try_from(a).ok()) {
                taken.insert(name.value().to_owned());
            }
            next = op.next_in_block();
        }
    }
    (0..).map(|n| format!("{prefix}_{n}")).find(|name| !taken.contains(name)).expect("a free name")
}
