//! `flywheel-exp-softmax`: rewrites the softmax of each attention kernel (FlyWheel tile
//! IR) to do less VPU/EUP work per score element. Each rewrite is an option, so each can
//! be measured alone:
//! - `exp2`: scores in base 2. The score scale becomes scale x log2(e) and every exp an
//!   exp2, so the running max and sum live in base 2 (exp is exp2 of a product on the
//!   TPU). Only when nothing but masks sits between the scale and the softmax: a bias or
//!   soft-cap would need its own factor.
//! - `fold-scale`: the score scale multiplies the Q tile ([rows, D]) before the MXU
//!   instead of the scores ([rows, block_kv]) after it (in the transposed orientation,
//!   Sᵀ = K·Qᵀ, the K tile: either factor scales the product alike). `exact` (the default) folds only
//!   when nothing rounds: Q in f32, or a power-of-two scale. `always` also rounds a bf16
//!   Q times the scale to bf16, as Pallas' flash attention does; that costs accuracy on
//!   large logits (docs/kernels/attention.md has the errors). `split` also keeps a bf16 Q exact, as two bf16
//!   parts side by side in the contraction; `split-unbanded` splits only in kernels
//!   without a causal or window band and folds those as `exact` does.
//! - `reciprocal`: the final normalization is one reciprocal per row (per lane-replicated
//!   row) and a multiply, not a divide per output element.
//! - `conditional-rescale` (off by default): the running output and sum are rescaled by
//!   exp(m_old - m_new) only when some row's max moved (an `scf.if` on the minimum of
//!   m_old - m_new over the block), not on every key block.
//! - `bf16-exp` (off by default; for v6e and tpu7x, whose VPU and EUP work on bf16): where
//!   P is rounded to bf16 for the PV matmul anyway, the difference s - m is rounded to
//!   bf16 and exponentiated in bf16 (two elements per 32-bit lane), so the EUP pushes
//!   half as many vregs; the row sum still accumulates in f32 (widened P on the VPU, or
//!   the MXU's f32 accumulator). The subtraction stays f32: rounding s and m before it
//!   would cost absolute accuracy on large logits.
//! - `lagged-max` (off by default): each key step exponentiates its scores by the running
//!   max it starts with, so exp follows the QKᵀ matmul without waiting for the step's own
//!   max (which otherwise makes the score tile wait in VMEM); the sum and output are
//!   rescaled once after the step. Exact while no row's max rises by more than
//!   `lagged-max-limit` in the step (P stays below 2^limit); a step where one does, and
//!   every first step (its max starts at -inf), is redone as before in an `scf.if`.
//!   With `redo-stores=true` (the default) the step's stores of its state, where they
//!   follow it, go into both arms of that branch, so it yields nothing (libtpu copies
//!   and spills what a branch yields); with `redo-stores=before` they stay before it,
//!   storing the lagged state as soon as it is made, and the exact arm stores its own
//!   over it, reading the state the step started with from the step's own loads.
//!   `lagged-max=transposed` lags only kernels whose max reduces the score tile across
//!   sublanes (the transposed orientation, Sᵀ = K·Qᵀ): only there did the wait for the
//!   max store the tile, so only there does the lag pay for its redo branch (with the max
//!   stabilizer). `transposed-or-causal` also lags kernels whose band is causal (key <=
//!   query + offset, no window's lower edge: read from their masks' position
//!   comparisons), where on v6e the sum stabilizer pays for the branch.
//!   `lagged-stabilizer=sum` goes further: a lagged step reduces no max at all. Its rows
//!   keep m₀ + log(l) as their running max (l the running sum by m₀: their log-sum-exp,
//!   at most log of the keys so far above the true max) and rescale by 1 / l; a first
//!   step (m₀ = -inf) shifts by 0 instead, so it is lagged too, and a step is redone
//!   when l > 2^limit or l < 2^-limit (P may have overflowed or underflowed). Kernels
//!   whose row sum is a column of the PV matmul (no l apart from the output) keep the max.

use crate::{
    options::Options,
    pass::{external_pass, Anchor, PassId, PassInfo},
};
use flywheel_dialect::diagnostics::emit_remark;
use flywheel_kernels::tile_ir::{
    after_definition, block_ops, cloned, defined_by, defining_op, distinct_users, erase_dead, float_splat,
    insert_before, kernel_call_locations, kernel_functions, mutable, op_name, ops_named, predicate, replace_op,
    splat_before, users,
};
use melior::{
    ir::{
        attribute::IntegerAttribute,
        operation::{OperationBuilder, OperationLike, OperationMutLike, OperationRef},
        Block, BlockLike, BlockRef, Region, RegionLike, Type, Value, ValueLike,
    },
    pass::Pass,
};
use std::collections::{HashMap, HashSet};

static PASS_ID: PassId = PassId;

crate::pass_options! {
    pub struct ExpSoftmaxOptions {
        /// Scores in base 2: scale x log2(e), exp2 for exp
        exp2: bool = ("exp2", "true"),
        /// Multiply Q by the score scale before the MXU, not the scores after it: when exact (f32 Q or a power-of-two
        /// scale); split (also a bf16 Q times any scale, as two bf16 parts side by side in the contraction against K
        /// twice); split-unbanded (split in kernels without a causal or window band, exact in those with one); always
        /// (Q times the scale rounded to bf16); or never
        fold_scale: Fold = ("fold-scale", "exact"),
        /// Normalize by one reciprocal per row and a multiply
        reciprocal: bool = ("reciprocal", "true"),
        /// Rescale the running output and sum only when a row's max changed (a branch per key block)
        conditional_rescale: bool = ("conditional-rescale", "false"),
        /// Exponentiate each key step's scores by the running max it starts with (exp need not wait for the step's
        /// max); a step whose max rose by more than lagged-max-limit, or the first, is redone exactly. In every kernel
        /// (true), in those whose max reduces across sublanes, the transposed orientation (transposed), or in those and
        /// the kernels whose band has an upper edge only, as causality gives, no window's lower edge
        /// (transposed-or-causal)
        lagged_max: LagKernels = ("lagged-max", "false"),
        /// The largest rise of a row's running max (in the exponent's base: 2 with exp2) a lagged step keeps; beyond it
        /// the step is redone
        lagged_max_limit: f64 = ("lagged-max-limit", "64"),
        /// With lagged-max, what a lagged step keeps as its rows' running max: their max (max), or m₀ + log(l), l the
        /// running sum by m₀ (sum: no max reduction in the step, and a first step lagged too)
        lagged_stabilizer: Stabilizer = ("lagged-stabilizer", "max"),
        /// With lagged-max, where the step's stores of its max, sum and output go (when they follow it): after the redo
        /// branch, which yields the state (false); into both its arms, so it yields nothing (true); before it, the
        /// exact arm storing again (before)
        redo_stores: RedoStores = ("redo-stores", "true"),
        /// Exponentiate in bf16 where P is rounded to bf16 for the PV matmul (v6e, tpu7x); sums stay f32
        bf16_exp: bool = ("bf16-exp", "false"),
        /// Remark on what was rewritten in each kernel and what was not
        remarks: bool = ("remarks", "false"),
    }
}

pub const PASS: PassInfo = PassInfo {
    name: "flywheel-exp-softmax",
    summary: "Cheaper softmax in attention kernels: base-2 scores, the scale folded into Q, reciprocal normalization",
    description: "Rewrites the softmax of each attention kernel (FlyWheel tile IR from `flywheel-tile`) to do less \
VPU/EUP work per score element, each rewrite an option so each can be measured alone: scores in base 2 (exp2), the \
score scale folded into Q before the MXU, normalization by one reciprocal per row, the rescale of the running output \
only when a row's max moved, exp in bf16, and the running max lagged by one key step (exp follows the QKᵀ matmul \
without waiting for the step's max; a step whose max rose too far is redone exactly in a branch). A rewrite whose \
conditions do not hold in a kernel (a bias or soft-cap between the scale and the softmax, a rounding the fold would \
add) is not made there, with a remark.",
    options: ExpSoftmaxOptions::SPECS,
    create: |text| Ok(create(ExpSoftmaxOptions::parse(text)?)),
};

/// Which rewrites to do.
#[derive(Clone, Copy, Debug)]
pub struct Rewrites {
    pub exp2: bool,
    pub fold_scale: Fold,
    pub reciprocal: bool,
    pub conditional_rescale: bool,
    pub bf16_exp: bool,
    /// `lagged-max`, if on.
    pub lagged_max: Option<LaggedMax>,
}

/// Where and how far `lagged-max` lags the running max.
#[derive(Clone, Copy, Debug)]
pub struct LaggedMax {
    /// Which kernels are lagged (not `None`).
    pub kernels: LagKernels,
    /// The largest rise of a row's max a lagged step keeps.
    pub limit: f64,
    /// Where the step's stores of its state go relative to the redo branch.
    pub stores: RedoStores,
    /// The running max a lagged step keeps is m₀ + log(l), not the rows' max.
    pub sum_stabilizer: bool,
}

crate::choice! {
    /// The kernels `lagged-max` lags.
    pub enum LagKernels {
        None = "false",
        All = "true",
        /// Those whose max reduces the score tile across sublanes (transposed scores).
        Transposed = "transposed",
        /// Those, and those whose band is causal: an upper edge and no lower one (`causal_band`).
        TransposedOrCausal = "transposed-or-causal",
    }
}

crate::choice! {
    /// What a lagged step keeps as its rows' running max.
    pub enum Stabilizer {
        Max = "max",
        /// m₀ + log(l).
        Sum = "sum",
    }
}

crate::choice! {
    /// Where a lagged step's stores of its state go relative to its redo branch.
    pub enum RedoStores {
        /// After it: the branch yields the state.
        After = "false",
        /// Into both arms: the branch yields nothing.
        InBranch = "true",
        /// Before it, the lagged state stored as soon as it is made; the exact arm stores its
        /// own over it.
        Before = "before",
    }
}

crate::choice! {
    /// When to fold the score scale into Q.
    pub enum Fold {
        Exact = "exact",
        Split = "split",
        /// `Split` in kernels without a causal or window band, `Exact` in those with one.
        SplitUnbanded = "split-unbanded",
        Always = "always",
        Never = "never",
    }
}

fn create(options: ExpSoftmaxOptions) -> Pass {
    let lagged_max = (options.lagged_max != LagKernels::None).then_some(LaggedMax {
        kernels: options.lagged_max,
        limit: options.lagged_max_limit,
        stores: options.redo_stores,
        sum_stabilizer: options.lagged_stabilizer == Stabilizer::Sum,
    });
    let rewrites = Rewrites {
        exp2: options.exp2,
        fold_scale: options.fold_scale,
        reciprocal: options.reciprocal,
        conditional_rescale: options.conditional_rescale,
        bf16_exp: options.bf16_exp,
        lagged_max,
    };
    let remarks = options.remarks;
    external_pass(&PASS, &PASS_ID, Anchor::Any, move |op: OperationRef| exp_softmax(op, rewrites, remarks))
}

/// Rewrites every attention kernel in the kernel modules directly in `root`.
pub fn exp_softmax(root: OperationRef, rewrites: Rewrites, remarks: bool) -> bool {
    let calls = kernel_call_locations(root);
    for (symbol, kernel) in kernel_functions(root, flywheel_kernels::attention::KERNEL_NAME) {
        let mut notes = Vec::new();
        if rewrites.exp2 {
            notes.push(match base_two(kernel) {
                Ok(()) => "scores in base 2 (scale x log2(e), exp2)".to_owned(),
                Err(reason) => format!("scores kept in base e: {reason}"),
            });
        }
        if rewrites.fold_scale != Fold::Never {
            let (fold, why) = match rewrites.fold_scale {
                Fold::SplitUnbanded if banded(kernel) => (Fold::Exact, "a banded kernel folds only exactly: "),
                Fold::SplitUnbanded => (Fold::Split, ""),
                fold => (fold, ""),
            };
            notes.push(match fold_scale(kernel, fold) {
                Ok(done) => done.to_owned(),
                Err(reason) => format!("score scale not folded: {why}{reason}"),
            });
        }
        if rewrites.reciprocal {
            let count = reciprocal_normalization(kernel);
            notes.push(format!("{count} normalization(s) by reciprocal"));
        }
        if rewrites.conditional_rescale {
            let count = conditional_rescales(kernel);
            notes.push(format!("{count} rescale(s) only when the max changed"));
        }
        if rewrites.bf16_exp {
            let count = bf16_exponentials(kernel);
            notes.push(format!("{count} exponential(s) of P in bf16"));
        }
        if let Some(lagged) = rewrites.lagged_max {
            notes.push(match lagged_maxima(kernel, lagged) {
                Ok((count, stabilizer)) => format!("{count} step(s) exponentiated by their incoming max, redone when a row's max rises by more than {}{stabilizer}", lagged.limit),
                Err(reason) => format!("max not lagged: {reason}"),
            });
        }
        if remarks {
            let location = calls.get(&symbol).copied().unwrap_or_else(|| kernel.location());
            emit_remark(location, &format!("@{symbol}: {}", notes.join("; ")));
        }
    }
    true
}

/// The score scales: `arith.mulf(flywheel.matmul(Q, K) {transpose_rhs}, splat)` (or
/// K, Q in the transposed orientation), each the
/// product's only use (one per step body: a kernel may have a masked and an unmasked
/// one); returns (the mulf, the matmul, the scale) of each.
#[allow(clippy::type_complexity)]
fn score_scales<'c, 'a>(
    kernel: OperationRef<'c, 'a>,
) -> Result<Vec<(OperationRef<'c, 'a>, OperationRef<'c, 'a>, f64)>, String> {
    let found: Vec<_> = ops_named(kernel, "flywheel.matmul")
        .into_iter()
        .filter(|matmul| {
            matmul
                .attribute("transpose_rhs")
                .ok()
                .and_then(|a| IntegerAttribute::try_from(a).ok())
                .is_some_and(|flag| flag.value() != 0)
        })
        .filter_map(|matmul| {
            let scores: Value = matmul.result(0).ok()?.into();
            match users(scores).as_slice() {
                [(mulf, 0)] if mulf.name().as_string_ref().as_str() == Ok("arith.mulf") => {
                    Some((*mulf, matmul, float_splat(mulf.operand(1).ok()?)?))
                }
                _ => None,
            }
        })
        .collect();
    if found.is_empty() {
        return Err("no Q Kᵀ product scaled by a constant".into());
    }
    Ok(found)
}

/// Checks that the scaled scores reach the softmax (row max, subtraction of the max)
/// through masks only.
fn only_masks_to_softmax(scores: Value) -> Result<(), String> {
    for (user, position) in users(scores) {
        let name = user.name().as_string_ref().as_str().unwrap_or("?").to_owned();
        match name.as_str() {
            "vector.multi_reduction" | "arith.subf" => {}
            "arith.select" if position != 0 => {
                only_masks_to_softmax(user.result(0).map_err(|e| e.to_string())?.into())?
            }
            "scf.yield" => {
                let choice = user.parent_operation().ok_or("a yield outside an op")?;
                only_masks_to_softmax(choice.result(position).map_err(|e| e.to_string())?.into())?;
            }
            _ => return Err(format!("the scores feed '{name}' before the softmax (a bias or soft-cap)")),
        }
    }
    Ok(())
}

fn base_two(kernel: OperationRef) -> Result<(), String> {
    let scales = score_scales(kernel)?;
    for (mulf, _, _) in &scales {
        only_masks_to_softmax(mulf.result(0).map_err(|e| e.to_string())?.into())?;
    }
    for (mulf, _, scale) in scales {
        let factor = mulf.operand(1).map_err(|e| e.to_string())?;
        let scaled = splat_before(mulf, scale * std::f64::consts::LOG2_E, factor.r#type());
        mutable(mulf).set_operand(1, scaled);
        erase_if_unused(factor);
    }
    for exp in ops_named(kernel, "math.exp") {
        let operand = exp.operand(0).map_err(|e| e.to_string())?;
        let exp2 = insert_before(
            exp,
            "math.exp2",
            &[operand],
            operand.r#type(),
            &[("fastmath", "#arith.fastmath<none>".into())],
        );
        replace_op(exp, exp2);
    }
    Ok(())
}

fn fold_scale(kernel: OperationRef, when: Fold) -> Result<&'static str, String> {
    let scales = score_scales(kernel)?;
    // Whether Q times the scale, rounded to Q's type, would round.
    let rounds = |matmul: OperationRef, scale: f64| {
        scale.abs().log2().fract() != 0.0 && matmul.operand(0).is_ok_and(|q| q.r#type().to_string().ends_with("xbf16>"))
    };
    if let Some(&(_, matmul, scale)) = scales.iter().find(|&&(_, matmul, scale)| rounds(matmul, scale)) {
        let depth = matmul.operand(0).ok().and_then(|q| columns(q.r#type())).unwrap_or(usize::MAX);
        match when {
            Fold::Exact => return Err(format!("Q is bf16 and the scale {scale} is not a power of two (fold-scale=split keeps it exact in two bf16 parts, fold-scale=always rounds Q times it to bf16)")),
            Fold::Split if 2 * depth > MXU_DEPTH => return Err(format!("Q is bf16, the scale {scale} is not a power of two, and two parts of head dim {depth} would not fit one pass of the {MXU_DEPTH}-deep MXU")),
            _ => {}
        }
    }
    let mut split_qs = Vec::new();
    for (mulf, matmul, scale) in scales {
        if when == Fold::Split && rounds(matmul, scale) {
            fold_split(matmul, scale, &mut split_qs)?;
        } else {
            fold_rounded(matmul, scale)?;
        }
        let old_factor = mulf.operand(1).map_err(|e| e.to_string())?;
        replace_op(mulf, matmul.result(0).map_err(|e| e.to_string())?.into());
        erase_if_unused(old_factor);
    }
    Ok(if split_qs.is_empty() { "score scale folded into Q" } else { "score scale folded into Q as two bf16 parts" })
}

/// Whether the kernel masks a band: some comparison of two vectors that both count
/// positions (`tpu.iota`), a query's against a key's, as causal and window masks are
/// (padded keys compare a key position with a constant).
fn banded(kernel: OperationRef) -> bool {
    !position_comparisons(kernel).is_empty()
}

/// Whether the kernel's band is causal: it has an upper edge (key <= query + offset, an
/// `sle` of positions as `flywheel-tile` writes it) and no lower edge (a window's key >=
/// query - left, an `sge`).
fn causal_band(kernel: OperationRef) -> bool {
    let comparisons = position_comparisons(kernel);
    !comparisons.is_empty() && comparisons.iter().all(|&cmpi| predicate(cmpi) == Some(SLE))
}

/// `arith.cmpi`'s predicate "signed less or equal".
const SLE: i64 = 3;

/// The comparisons of two vectors that both count positions (`tpu.iota`).
fn position_comparisons<'c, 'a>(kernel: OperationRef<'c, 'a>) -> Vec<OperationRef<'c, 'a>> {
    fn counts_positions(value: Value) -> bool {
        defining_op(value).is_some_and(|op| match op_name(op).as_str() {
            "tpu.iota" => true,
            "arith.addi" | "arith.subi" | "arith.divsi" => op.operands().any(counts_positions),
            _ => false,
        })
    }
    ops_named(kernel, "arith.cmpi").into_iter().filter(|cmpi| cmpi.operands().all(counts_positions)).collect()
}

/// The contraction depth the v6e and tpu7x MXUs take in one pass.
const MXU_DEPTH: usize = 256;

/// Q times the scale in f32, before `at`.
fn scaled_f32<'c, 'a>(at: OperationRef<'c, 'a>, q: Value<'c, 'a>, scale: f64) -> Result<Value<'c, 'a>, String> {
    let f32_type = Type::parse(unsafe { at.context().to_ref() }, &q.r#type().to_string().replace("xbf16>", "xf32>"))
        .ok_or("Q's type")?;
    let wide = if q.r#type() == f32_type { q } else { insert_before(at, "arith.extf", &[q], f32_type, &[]) };
    let factor = splat_before(at, scale, f32_type);
    Ok(insert_before(at, "arith.mulf", &[wide, factor], f32_type, &[("fastmath", "#arith.fastmath<none>".into())]))
}

/// Moves the score scale onto the product's left operand (Q, or K when transposed),
/// rounded once to its type (libtpu 0.0.50.1 rejects a bf16 multiply by a constant on
/// v6e and tpu7x).
fn fold_rounded(matmul: OperationRef, scale: f64) -> Result<(), String> {
    let q = matmul.operand(0).map_err(|e| e.to_string())?;
    let scaled = scaled_f32(matmul, q, scale)?;
    let scaled_q = if scaled.r#type() == q.r#type() {
        scaled
    } else {
        insert_before(matmul, "arith.truncf", &[scaled], q.r#type(), &[])
    };
    mutable(matmul).set_operand(0, scaled_q);
    Ok(())
}

/// Moves the score scale onto a bf16 left operand as `[hi | lo] · [K | K]ᵀ`: Q times the
/// scale in f32, split into its bf16 rounding and the rounding of the rest, side by side
/// in the contraction, and the right operand twice. The scores see about 16 bits of the
/// scaled Q, not bf16's 8, and at a head dim of at most half the MXU's depth the product
/// takes as many MXU passes as Q Kᵀ did. Each Q is split once, after its definition, for
/// all its products (`split_qs`: (Q, scale, its parts side by side)).
#[allow(clippy::type_complexity)]
fn fold_split<'c, 'a>(
    matmul: OperationRef<'c, 'a>,
    scale: f64,
    split_qs: &mut Vec<(Value<'c, 'a>, f64, Value<'c, 'a>)>,
) -> Result<(), String> {
    let q = matmul.operand(0).map_err(|e| e.to_string())?;
    let k = matmul.operand(1).map_err(|e| e.to_string())?;
    let side_by_side = |value: Value<'c, 'a>| {
        doubled_columns(&value.r#type().to_string())
            .and_then(|text| Type::parse(unsafe { matmul.context().to_ref() }, &text))
            .ok_or("a 2-D tile")
    };
    let parts = match split_qs.iter().find(|(source, factor, _)| *source == q && *factor == scale) {
        Some(&(_, _, parts)) => parts,
        None => {
            let at = after_definition(q);
            let (high, low) = flywheel_kernels::serialize::split(at, scaled_f32(at, q, scale)?);
            let low = low.ok_or("Q times the scale holds bf16 numbers")?;
            let parts = insert_before(
                at,
                "tpu.concatenate",
                &[high, low],
                side_by_side(q)?,
                &[("dimension", "1 : i32".into())],
            );
            split_qs.push((q, scale, parts));
            parts
        }
    };
    let k_twice =
        insert_before(matmul, "tpu.concatenate", &[k, k], side_by_side(k)?, &[("dimension", "1 : i32".into())]);
    mutable(matmul).set_operand(0, parts);
    mutable(matmul).set_operand(1, k_twice);
    Ok(())
}

/// The last dimension of a 2-D tile type.
fn columns(tile: Type) -> Option<usize> {
    tile.to_string().rsplit_once('x')?.0.rsplit_once('x')?.1.parse().ok()
}

/// A 2-D tile's type with its last dimension doubled: `vector<1024x128xbf16>` ->
/// `vector<1024x256xbf16>`.
fn doubled_columns(tile: &str) -> Option<String> {
    let (shape, element) = tile.rsplit_once('x')?;
    let (rows, columns) = shape.rsplit_once('x')?;
    Some(format!("{rows}x{}x{element}", columns.parse::<usize>().ok()? * 2))
}

/// `acc / widen(l)` becomes `acc * widen(1 / l)`, where widen is the lane broadcast or
/// the tiling that spreads the per-row sum l across the accumulator's columns; returns
/// how many. (An l already as wide as the accumulator gains nothing and stays.)
fn reciprocal_normalization(kernel: OperationRef) -> usize {
    let mut count = 0;
    for divide in ops_named(kernel, "arith.divf") {
        let (Ok(accumulator), Ok(divisor)) = (divide.operand(0), divide.operand(1)) else { continue };
        let Some(widen) = defined_by(divisor, "vector.broadcast").or_else(|| defined_by(divisor, "tpu.concatenate"))
        else {
            continue;
        };
        let Ok(sum) = widen.operand(0) else { continue };
        if widen.operands().any(|operand| operand != sum) {
            continue;
        }
        let one = splat_before(divide, 1.0, sum.r#type());
        let inverse = insert_before(
            divide,
            "arith.divf",
            &[one, sum],
            sum.r#type(),
            &[("fastmath", "#arith.fastmath<none>".into())],
        );
        let copies = vec![inverse; widen.operand_count()];
        let attributes: Vec<(&str, String)> = widen
            .attribute("dimension")
            .map(|dimension| vec![("dimension", dimension.to_string())])
            .unwrap_or_default();
        let name = widen.name().as_string_ref().as_str().unwrap_or("vector.broadcast").to_owned();
        let wide = insert_before(divide, &name, &copies, divisor.r#type(), &attributes);
        let normalized = insert_before(
            divide,
            "arith.mulf",
            &[accumulator, wide],
            accumulator.r#type(),
            &[("fastmath", "#arith.fastmath<none>".into())],
        );
        replace_op(divide, normalized);
        erase_if_unused(divisor);
        count += 1;
    }
    count
}

/// `truncf(exp(d))` to bf16 becomes `exp(truncf(d))` in bf16; the exponential's f32 users
/// (the VPU row sum) get the bf16 result widened. Returns how many exponentials.
fn bf16_exponentials(kernel: OperationRef) -> usize {
    let mut count = 0;
    for exp in exponentials(kernel) {
        let (Ok(difference), Ok(result)) = (exp.operand(0), exp.result(0)) else { continue };
        let result: Value = result.into();
        let narrowing: Vec<_> = users(result)
            .into_iter()
            .filter(|(user, _)| {
                user.name().as_string_ref().as_str() == Ok("arith.truncf")
                    && user.result(0).is_ok_and(|r| r.r#type().to_string().ends_with("xbf16>"))
            })
            .map(|(user, _)| user)
            .collect();
        let Some(bf16_type) = narrowing.first().and_then(|truncf| truncf.result(0).ok()).map(|r| r.r#type()) else {
            continue;
        };
        let name = exp.name().as_string_ref().as_str().unwrap_or("math.exp2").to_owned();
        let narrow = insert_before(exp, "arith.truncf", &[difference], bf16_type, &[]);
        let p = insert_before(exp, &name, &[narrow], bf16_type, &[("fastmath", "#arith.fastmath<none>".into())]);
        for truncf in narrowing {
            replace_op(truncf, p);
        }
        if users(result).is_empty() {
            erase_if_unused(result);
        } else {
            let widened = insert_before(exp, "arith.extf", &[p], result.r#type(), &[]);
            replace_op(exp, widened);
        }
        count += 1;
    }
    count
}

/// Each `x * widen(alpha)`, where alpha = exp(m_old - m_new) and m_new = max(m_old, ..),
/// becomes `scf.if (min(m_old - m_new) < 0) { x * widen(alpha) } else { x }`; returns how
/// many multiplies.
fn conditional_rescales(kernel: OperationRef) -> usize {
    let mut count = 0;
    for exp in exponentials(kernel) {
        let Some(drop) = exp.operand(0).ok() else { continue };
        let Some(subtract) = defined_by(drop, "arith.subf") else { continue };
        let (Ok(m_old), Ok(m_new)) = (subtract.operand(0), subtract.operand(1)) else { continue };
        if defined_by(m_new, "arith.maximumf").is_none_or(|max| max.operand(0).ok() != Some(m_old)) {
            continue;
        }
        let alpha: Value = exp.result(0).expect("one result").into();
        let Some(rescales) = rescales_by(alpha) else { continue };
        if rescales.is_empty() {
            continue;
        }
        // The ContextRef must outlive the &Context made from it.
        let context_ref = kernel.context();
        let context = unsafe { context_ref.to_ref() };
        let f32_type = Type::float32(context);
        // Right after alpha, before every rescale in its block.
        let anchor = exp.next_in_block().expect("alpha has users after it");
        let infinity = insert_before(anchor, "arith.constant", &[], f32_type, &[("value", "0x7F800000 : f32".into())]);
        let least = insert_before(
            anchor,
            "vector.multi_reduction",
            &[drop, infinity],
            f32_type,
            &[("kind", "#vector.kind<minimumf>".into()), ("reduction_dims", "array<i64: 0, 1>".into())],
        );
        let zero = insert_before(anchor, "arith.constant", &[], f32_type, &[("value", "0.0 : f32".into())]);
        let changed = insert_before(
            anchor,
            "arith.cmpf",
            &[least, zero],
            Type::parse(context, "i1").expect("i1"),
            &[("predicate", "4 : i64".into())],
        );
        for multiply in rescales {
            let rescaled = if_else(multiply, changed, multiply.operand(1).expect("two operands"));
            replace_op(multiply, rescaled);
        }
        count += 1;
    }
    count
}

/// `scf.if (condition) { op's clone } else { otherwise }`, inserted before `op`; returns
/// its result.
fn if_else<'c, 'a>(op: OperationRef<'c, 'a>, condition: Value<'c, 'a>, otherwise: Value<'c, 'a>) -> Value<'c, 'a> {
    let location = op.location();
    let result = op.result(0).expect("one result").r#type();
    let branch = |value: Option<Value<'c, 'a>>| {
        let block = Block::new(&[]);
        let yielded = match value {
            None => block.append_operation(cloned(op)).result(0).expect("one result").into(),
            Some(value) => value,
        };
        block.append_operation(
            OperationBuilder::new("scf.yield", location).add_operands(&[yielded]).build().expect("scf.yield builds"),
        );
        let region = Region::new();
        region.append_block(block);
        region
    };
    let choice = OperationBuilder::new("scf.if", location)
        .add_operands(&[condition])
        .add_results(&[result])
        .add_regions([branch(None), branch(Some(otherwise))])
        .build()
        .expect("scf.if builds");
    let choice = op.block().expect("in a block").insert_operation_before(op, choice);
    choice.result(0).expect("one result").into()
}

/// One online-softmax update of a step body: `m_out = maximumf(m_in, row max of S)`, P's
/// shift `S - widen(m_out)`, `alpha = exp(m_in - m_out)` and the multiplies that rescale
/// the running sum and output by it (alpha, or alpha widened, times x).
struct Update<'c, 'a> {
    m_in: Value<'c, 'a>,
    m_out: Value<'c, 'a>,
    shift: OperationRef<'c, 'a>,
    drop: OperationRef<'c, 'a>,
    alpha: OperationRef<'c, 'a>,
    rescales: Vec<OperationRef<'c, 'a>>,
    /// The row max reduces the score tile across sublanes (its axis 0): transposed scores.
    across_sublanes: bool,
}

/// What `value` reshapes or broadcasts (through `vector.shape_cast` and
/// `vector.broadcast`), or `value` itself.
fn unwidened<'c: 'a, 'a>(value: Value<'c, 'a>) -> Value<'c, 'a> {
    match defining_op(value).filter(|op| matches!(op_name(*op).as_str(), "vector.shape_cast" | "vector.broadcast")) {
        Some(op) => unwidened(op.operand(0).expect("one operand")),
        None => value,
    }
}

/// The update whose new running max `max` is, if `max` is `arith.maximumf(m_in, row max)`.
fn update_of<'c, 'a>(max: OperationRef<'c, 'a>) -> Option<Update<'c, 'a>> {
    let (m_in, row_max) = (max.operand(0).ok()?, max.operand(1).ok()?);
    let reduction = defined_by(unwidened(row_max), "vector.multi_reduction")?;
    reduction.attribute("kind").ok()?.to_string().contains("maximumf").then_some(())?;
    let across_sublanes = reduction.attribute("reduction_dims").ok()?.to_string() == "array<i64: 0>";
    let scores = reduction.operand(0).ok()?;
    let m_out: Value = max.result(0).ok()?.into();
    let shift = users(scores).into_iter().find(|(user, position)| *position == 0 && op_name(*user) == "arith.subf")?.0;
    let drop = users(m_out)
        .into_iter()
        .find(|(user, position)| {
            *position == 1 && op_name(*user) == "arith.subf" && user.operand(0).ok() == Some(m_in)
        })?
        .0;
    let alpha =
        users(drop.result(0).ok()?.into()).into_iter().find(|(user, _)| op_name(*user).starts_with("math.exp"))?.0;
    let rescales = rescales_by(alpha.result(0).ok()?.into())?;
    Some(Update { m_in, m_out, shift, drop, alpha, rescales, across_sublanes })
}

/// Each step body's updates in order (each update's m_in is the previous one's m_out).
fn update_chains<'c, 'a>(kernel: OperationRef<'c, 'a>) -> Vec<Vec<Update<'c, 'a>>> {
    let mut updates: Vec<Update> = ops_named(kernel, "arith.maximumf").into_iter().filter_map(update_of).collect();
    let mut chains = Vec::new();
    while let Some(first) =
        updates.iter().position(|update| !updates.iter().any(|earlier| earlier.m_out == update.m_in))
    {
        let mut chain = vec![updates.remove(first)];
        while let Some(next) = updates.iter().position(|update| update.m_in == chain.last().expect("not empty").m_out) {
            chain.push(updates.remove(next));
        }
        chains.push(chain);
    }
    chains
}

/// `lagged-max`: each step body exponentiates its scores by the running max it starts
/// with, m₀, instead of the max after each sub-block, so exp no longer waits for a whole
/// score tile's max (the tile need not be stored between its max and its exp); the sum
/// and output are then rescaled once, by exp(m₀ - m), after the step. Exact while no
/// row's max rises by more than the limit in the step (P ≤ 2^limit in base 2): a row
/// whose max rose more, or a first step (m₀ = -inf), redoes the step as before in an
/// `scf.if`. A kernel `lagged.kernels` does not name is left alone.
/// Returns how many step bodies and, with `sum_stabilizer`, what their rows keep as the
/// max (see `stabilize_by_sum`), or why none.
fn lagged_maxima(kernel: OperationRef, lagged: LaggedMax) -> Result<(usize, &'static str), String> {
    let chains = update_chains(kernel);
    if chains.is_empty() {
        return Err("no online-softmax update".into());
    }
    let transposed = chains.iter().flatten().all(|update| update.across_sublanes);
    match lagged.kernels {
        LagKernels::Transposed if !transposed => {
            return Err("the scores are not transposed (lagged-max=transposed)".into())
        }
        LagKernels::TransposedOrCausal if !transposed && !causal_band(kernel) => {
            return Err(
                "the scores are not transposed and the kernel's band is not causal (lagged-max=transposed-or-causal)"
                    .into(),
            )
        }
        _ => {}
    }
    // Every chain is checked before any is rewritten, so a kernel is lagged whole or not.
    let sums = chains.iter().map(|chain| lag_sums(chain)).collect::<Result<Vec<_>, _>>()?;
    let running_sums: Option<Vec<usize>> = if lagged.sum_stabilizer {
        chains
            .iter()
            .zip(&sums)
            .map(|(chain, sums)| running_sum(chain.last().expect("chains are not empty"), sums))
            .collect()
    } else {
        None
    };
    for (index, (chain, sums)) in chains.iter().zip(&sums).enumerate() {
        let last = chain.last().expect("chains are not empty");
        let body = last.shift.block().ok_or("an update outside a block")?;
        let outputs: Vec<Value> = std::iter::once(last.m_out)
            .chain(sums.iter().map(|add| add.result(0).expect("one result").into()))
            .collect();
        let m0 = match running_sums {
            Some(_) => finite_start(chain[0].m_in),
            None => chain[0].m_in,
        };
        redo_when_risen(body, &outputs, m0, lagged, running_sums.is_some())?;
        let products = lag(chain, sums, m0);
        if let Some(running_sums) = &running_sums {
            stabilize_by_sum(last, m0, &products, running_sums[index]);
        }
    }
    let stabilizer = match (lagged.sum_stabilizer, running_sums.is_some()) {
        (true, true) => {
            ", their max m₀ + log(l) (no max reduced; a first step shifts by 0; redone also when l < 2^-limit)"
        }
        (true, false) => ", their max reduced (no running sum l apart from the output: the MXU sums the rows)",
        (false, _) => "",
    };
    Ok((chains.len(), stabilizer))
}

/// `m0`, the running max a step starts with, where it is finite, else 0: what a step
/// stabilized by its sum shifts by, so that a first step (m0 = -inf) is lagged too. The
/// sum and output it starts with are then 0, which any shift keeps.
fn finite_start<'c: 'a, 'a>(m0: Value<'c, 'a>) -> Value<'c, 'a> {
    let anchor = after_definition(m0);
    let rows = m0.r#type();
    let flags = flags_like(anchor, rows).expect("the max's flags");
    let minus_infinity = splat_before(anchor, f64::NEG_INFINITY, rows);
    let first = insert_before(anchor, "arith.cmpf", &[m0, minus_infinity], flags, &[("predicate", "1 : i64".into())]);
    let zero = splat_before(anchor, 0.0, rows);
    insert_before(anchor, "arith.select", &[first, zero, m0], rows, &[])
}

/// Rewrites a chain of updates (checked by `lag_sums`, whose additions `sums` are) to
/// shift every P by `m0` (the first m_in, or `finite_start`'s) and rescale once, after
/// the last update. Returns the rescales, `alpha * (x + y)`.
fn lag<'c, 'a>(
    chain: &[Update<'c, 'a>],
    sums: &[OperationRef<'c, 'a>],
    m0: Value<'c, 'a>,
) -> Vec<OperationRef<'c, 'a>> {
    for (index, update) in chain.iter().enumerate() {
        let widened_max = update.shift.operand(1).expect("a subtraction");
        let widened_m0 = match defining_op(widened_max).filter(|_| widened_max != update.m_out) {
            Some(widen) => clone_before(widen, update.shift, &HashMap::from([(update.m_out.to_raw().ptr, m0)]))
                .result(0)
                .expect("one result")
                .into(),
            None => m0,
        };
        mutable(update.shift).set_operand(1, widened_m0);
        erase_if_unused(widened_max);
        if index + 1 < chain.len() {
            for rescale in &update.rescales {
                replace_op(*rescale, rescale.operand(1).expect("a multiply"));
            }
            let alpha: Value = update.alpha.result(0).expect("one result").into();
            // Copies side by side use alpha once per copy: each erased once.
            for widen in distinct_users(alpha) {
                erase_if_unused(widen.result(0).expect("one result").into());
            }
            erase_if_unused(alpha);
            erase_if_unused(update.drop.result(0).expect("one result").into());
        }
    }
    let last = chain.last().expect("chains are not empty");
    mutable(last.drop).set_operand(0, m0);
    let fastmath = no_fastmath();
    let mut products = Vec::new();
    for (rescale, add) in last.rescales.iter().zip(sums) {
        let rescaled: Value = rescale.result(0).expect("one result").into();
        let part = add.operands().find(|operand| *operand != rescaled).expect("checked by lag_sums");
        let (alpha, x) = (rescale.operand(0).expect("a multiply"), rescale.operand(1).expect("a multiply"));
        let total = insert_before(*add, "arith.addf", &[x, part], x.r#type(), &fastmath);
        let product = insert_before(*add, "arith.mulf", &[alpha, total], x.r#type(), &fastmath);
        replace_op(*add, product);
        erase_if_unused(rescaled);
        products.push(defining_op(product).expect("just inserted"));
    }
    products
}

/// Checks that `lag` can rewrite `chain`: each shift's max is the update's max or widened
/// from it, and each rescale of the last update is added to (`alpha * x + y`, which
/// becomes `alpha * (x + y)`). Returns those additions, the step's sum and output.
fn lag_sums<'c, 'a>(chain: &[Update<'c, 'a>]) -> Result<Vec<OperationRef<'c, 'a>>, String> {
    for update in chain {
        let widened_max = update.shift.operand(1).map_err(|e| e.to_string())?;
        if widened_max != update.m_out && defining_op(widened_max).is_none_or(|widen| widen.region_count() > 0) {
            return Err("a shift by something other than the running max".into());
        }
    }
    let last = chain.last().expect("chains are not empty");
    let mut sums = Vec::new();
    for rescale in &last.rescales {
        let rescaled: Value = rescale.result(0).map_err(|e| e.to_string())?.into();
        match users(rescaled).as_slice() {
            [(add, _)] if op_name(*add) == "arith.addf" && add.operands().any(|operand| operand != rescaled) => {
                sums.push(*add)
            }
            _ => return Err("a rescale of the running sum or output is not added to".into()),
        }
    }
    if sums.is_empty() {
        return Err("no rescale of the running sum or output".into());
    }
    Ok(sums)
}

/// Which of `sums` (a step's additions, `lag_sums`; its last update `last`) is the
/// running sum l that `stabilize_by_sum` needs: shaped like the max, adding a row sum of P
/// (the MXU's row sum, a column of the output, is none). None also when something in the
/// step reads another addition before it, since their rescales move after it.
fn running_sum(last: &Update, sums: &[OperationRef]) -> Option<usize> {
    let index = sums.iter().position(|add| {
        let row_sum = add.operands().map(unwidened).any(|part| {
            defined_by(part, "vector.multi_reduction")
                .is_some_and(|reduction| reduction.attribute("kind").is_ok_and(|kind| kind.to_string().contains("add")))
        });
        row_sum && add.result(0).is_ok_and(|result| result.r#type() == last.m_out.r#type())
    })?;
    let body = sums[index].block()?;
    let ops = block_ops(body);
    let position = |op: OperationRef| {
        let mut op = op;
        while op.block() != Some(body) {
            op = op.parent_operation()?;
        }
        ops.iter().position(|other| *other == op)
    };
    let sum_at = position(sums[index]);
    sums.iter()
        .all(|add| {
            users(add.result(0).expect("one result").into()).into_iter().all(|(user, _)| position(user) > sum_at)
        })
        .then_some(index)
}

/// `lagged-stabilizer=sum`: a lagged step (rewritten by `lag`, whose rescales are
/// `products`, of which the `sum`th rescales l: `running_sum`; shifted by `m0`, the
/// incoming max or `finite_start`'s 0) keeps m = m0 + log(l) as its rows' running max, l
/// the running sum by m0, and rescales by 1 / l, so it reduces no max. Any m works as the
/// stabilizer as long as the sum and output use the same one; this one, the rows'
/// log-sum-exp, is at least the true max (l holds its term) and at most log(keys so far)
/// above it. The redo test reads the same m, on both sides: a step is redone when
/// l > 2^limit (some P may have been large), l < 2^-limit (P may have underflowed: a
/// first step's shift by 0 far above its scores) or is NaN.
fn stabilize_by_sum<'c, 'a>(last: &Update<'c, 'a>, m0: Value<'c, 'a>, products: &[OperationRef<'c, 'a>], sum: usize) {
    let rows = last.m_out.r#type();
    let sum = &products[sum];
    let fastmath = no_fastmath();
    let total = sum.operand(1).expect("alpha * total");
    let one = splat_before(*sum, 1.0, rows);
    let inverse = insert_before(*sum, "arith.divf", &[one, total], rows, &fastmath);
    let log = if op_name(last.alpha) == "math.exp2" { "math.log2" } else { "math.log" };
    let log = insert_before(*sum, log, &[total], rows, &fastmath);
    let m = insert_before(*sum, "arith.addf", &[m0, log], rows, &fastmath);
    for (user, position) in users(last.m_out) {
        if user != last.drop {
            mutable(user).set_operand(position, m);
        }
    }
    mutable(*sum).set_operand(0, inverse);
    let after_sum = sum.next_in_block().expect("a terminator follows");
    let alpha: Value = last.alpha.result(0).expect("one result").into();
    let mut widenings = Vec::new();
    for product in products.iter().filter(|product| *product != sum) {
        let (factor, total) = (product.operand(0).expect("alpha * total"), product.operand(1).expect("alpha * total"));
        // A rescale before the sum's is made again after it, where the inverse is defined.
        let at = if precedes(*product, *sum) { after_sum } else { *product };
        let new_factor = if factor == alpha {
            inverse
        } else {
            // Copies side by side share a widened alpha: each erased once.
            if !widenings.contains(&factor) {
                widenings.push(factor);
            }
            let widen = defining_op(factor).expect("rescales_by: alpha widened");
            clone_before(widen, at, &HashMap::from([(alpha.to_raw().ptr, inverse)]))
                .result(0)
                .expect("one result")
                .into()
        };
        replace_op(*product, insert_before(at, "arith.mulf", &[new_factor, total], total.r#type(), &fastmath));
    }
    widenings.into_iter().for_each(erase_if_unused);
    // The factor, and with it the step's max.
    erase_dead(alpha);
}

/// Whether `op` comes before `other` in their block.
fn precedes(op: OperationRef, other: OperationRef) -> bool {
    std::iter::successors(op.next_in_block(), |next| next.next_in_block()).any(|next| next == other)
}

/// Wraps `outputs` of `body` in `scf.if (some row of max - m0 > limit, or NaN, or with
/// `two_sided` < -limit) { the ops computing them, cloned } else { outputs }`, placed
/// after the last of those ops; their
/// later users take the choice. When those users are stores right after the ops (and
/// `lagged_max.stores` is `InBranch`), the stores move into both branches instead and the
/// `scf.if` yields nothing: libtpu copies the values a branch yields (the step's whole
/// [D, rows] output) before the branch and spills them after it.
fn redo_when_risen<'c, 'a>(
    body: BlockRef<'c, 'a>,
    outputs: &[Value<'c, 'a>],
    m0: Value<'c, 'a>,
    lagged_max: LaggedMax,
    two_sided: bool,
) -> Result<(), String> {
    let ops = block_ops(body);
    let mut slice: HashSet<*mut std::ffi::c_void> = HashSet::new();
    let mut stack: Vec<OperationRef> = outputs.iter().filter_map(|value| defining_op(*value)).collect();
    while let Some(op) = stack.pop() {
        if op.block() != Some(body) || !slice.insert(op.to_raw().ptr) {
            continue;
        }
        if op.region_count() > 0 {
            return Err(format!("the step computes its softmax through '{}', an op with regions", op_name(op)));
        }
        stack.extend(op.operands().filter_map(defining_op));
    }
    let in_slice = |op: &OperationRef| slice.contains(&op.to_raw().ptr);
    let later_users: Vec<(OperationRef, usize, usize)> = outputs
        .iter()
        .enumerate()
        .flat_map(|(index, value)| {
            users(*value)
                .into_iter()
                .filter(|(user, _)| !in_slice(user))
                .map(move |(user, position)| (user, position, index))
        })
        .collect();
    let anchor = ops
        .iter()
        .rev()
        .find(|op| in_slice(op))
        .and_then(|op| op.next_in_block())
        .ok_or("the step's softmax ends its block")?;
    let redo = risen(anchor, outputs[0], m0, lagged_max.limit, two_sided)?;

    let location = anchor.location();
    let stores = stores_from(anchor, &later_users).filter(|_| lagged_max.stores != RedoStores::After);
    // Stored before the branch, the state the step starts with is read from memory only
    // by the step's own loads, which the exact arm then uses rather than loading again.
    let stored: Vec<Value> = stores.iter().flatten().filter_map(|store| store.operand(1).ok()).collect();
    let reads_stored = |op: &OperationRef| op.operands().any(|operand| stored.contains(&operand));
    let before = lagged_max.stores == RedoStores::Before
        && stores.is_some()
        && ops.iter().filter(|op| in_slice(op) && reads_stored(op)).all(|op| op_name(*op) == "vector.load");
    let exact = Block::new(&[]);
    let mut renamed = HashMap::new();
    for op in ops.iter().filter(|op| in_slice(op) && !(before && reads_stored(op))) {
        let copy = exact.append_operation(cloned(*op));
        rename_operands(copy, &renamed);
        for index in 0..op.result_count() {
            renamed.insert(
                op.result(index).map_err(|e| e.to_string())?.to_raw().ptr,
                copy.result(index).map_err(|e| e.to_string())?.into(),
            );
        }
    }
    let lagged = Block::new(&[]);
    for store in stores.iter().flatten() {
        rename_operands(exact.append_operation(cloned(*store)), &renamed);
        if !before {
            lagged.append_operation(cloned(*store));
        }
    }
    let (exact_outputs, lagged_outputs): (Vec<Value>, &[Value]) = match stores {
        Some(_) => (Vec::new(), &[]),
        None => (outputs.iter().map(|value| renamed[&value.to_raw().ptr]).collect(), outputs),
    };
    exact.append_operation(
        OperationBuilder::new("scf.yield", location).add_operands(&exact_outputs).build().expect("scf.yield builds"),
    );
    lagged.append_operation(
        OperationBuilder::new("scf.yield", location).add_operands(lagged_outputs).build().expect("scf.yield builds"),
    );
    let regions = [exact, lagged].map(|block| {
        let region = Region::new();
        region.append_block(block);
        region
    });
    let types: Vec<Type> = lagged_outputs.iter().map(|value| value.r#type()).collect();
    let choice = OperationBuilder::new("scf.if", location)
        .add_operands(&[redo])
        .add_results(&types)
        .add_regions(regions)
        .build()
        .map_err(|e| e.to_string())?;
    match stores {
        Some(stores) if before => {
            body.insert_operation_after(*stores.last().expect("stores_from finds some"), choice);
        }
        // SAFETY: each store was cloned into both branches; nothing uses a store.
        Some(stores) => {
            body.insert_operation_before(anchor, choice);
            stores.into_iter().for_each(|store| unsafe { mlir_sys::mlirOperationDestroy(store.to_raw()) });
        }
        None => {
            let choice = body.insert_operation_before(anchor, choice);
            for (user, position, index) in later_users {
                mutable(user).set_operand(position, choice.result(index).map_err(|e| e.to_string())?.into());
            }
        }
    }
    Ok(())
}

/// The stores among `later_users` (user, operand position, output index) in program
/// order, if those users are all stores of an output (operand 0) and are the ops from
/// `anchor` on, so that nothing reads or writes memory between the step's softmax and
/// them.
fn stores_from<'c, 'a>(
    anchor: OperationRef<'c, 'a>,
    later_users: &[(OperationRef<'c, 'a>, usize, usize)],
) -> Option<Vec<OperationRef<'c, 'a>>> {
    let mut stores: Vec<OperationRef> = Vec::new();
    for (user, position, _) in later_users {
        if *position != 0 || !matches!(op_name(*user).as_str(), "tpu.vector_store" | "vector.store") {
            return None;
        }
        if !stores.contains(user) {
            stores.push(*user);
        }
    }
    let mut in_order = Vec::new();
    let mut next = Some(anchor);
    for _ in 0..stores.len() {
        let op = next.filter(|op| stores.contains(op))?;
        in_order.push(op);
        next = op.next_in_block();
    }
    Some(in_order)
}

/// Before `anchor`: whether some row's max `m` exceeds `m0` by more than `limit`, or the
/// difference is NaN (a first step's m0 = -inf gives +inf), or with `two_sided` falls
/// below -limit (m₀ + log(l) with l < 2^-limit: P may have underflowed): an i1.
fn risen<'c, 'a>(
    anchor: OperationRef<'c, 'a>,
    m: Value<'c, 'a>,
    m0: Value<'c, 'a>,
    limit: f64,
    two_sided: bool,
) -> Result<Value<'c, 'a>, String> {
    let context_ref = anchor.context();
    let context = unsafe { context_ref.to_ref() };
    let rows = m.r#type();
    let flags = flags_like(anchor, rows).ok_or("the max's type")?;
    let (f32_type, i1) = (Type::float32(context), Type::parse(context, "i1").expect("i1"));
    let fastmath = no_fastmath();
    let rise = insert_before(anchor, "arith.subf", &[m, m0], rows, &fastmath);
    let bound = splat_before(anchor, limit, rows);
    // Ordered less-or-equal (Mosaic lowers no unordered comparison): false for NaN, so
    // a NaN rise is marked.
    let mut within = insert_before(anchor, "arith.cmpf", &[rise, bound], flags, &[("predicate", "5 : i64".into())]);
    if two_sided {
        let floor = splat_before(anchor, -limit, rows);
        let above = insert_before(anchor, "arith.cmpf", &[rise, floor], flags, &[("predicate", "3 : i64".into())]);
        within = insert_before(anchor, "arith.andi", &[within, above], flags, &[]);
    }
    let (one, zero) = (splat_before(anchor, 1.0, rows), splat_before(anchor, 0.0, rows));
    let marks = insert_before(anchor, "arith.select", &[within, zero, one], rows, &[]);
    let start = insert_before(anchor, "arith.constant", &[], f32_type, &[("value", "0.0 : f32".into())]);
    let rank = rows.to_string().matches('x').count();
    let dims = (0..rank).map(|d| d.to_string()).collect::<Vec<_>>().join(", ");
    let any = insert_before(
        anchor,
        "vector.multi_reduction",
        &[marks, start],
        f32_type,
        &[("kind", "#vector.kind<maximumf>".into()), ("reduction_dims", format!("array<i64: {dims}>"))],
    );
    let half = insert_before(anchor, "arith.constant", &[], f32_type, &[("value", "0.5 : f32".into())]);
    Ok(insert_before(anchor, "arith.cmpf", &[any, half], i1, &[("predicate", "2 : i64".into())]))
}

/// The i1 vector type shaped like the f32 `rows`, in `anchor`'s context.
fn flags_like<'c>(anchor: OperationRef<'c, '_>, rows: Type<'c>) -> Option<Type<'c>> {
    // SAFETY: the context outlives the IR it owns, `anchor` among it.
    Type::parse(unsafe { anchor.context().to_ref() }, &rows.to_string().replace("xf32>", "xi1>"))
}

/// The attribute the rewrites put on the float ops they make: no fast-math flags.
fn no_fastmath() -> [(&'static str, String); 1] {
    [("fastmath", "#arith.fastmath<none>".to_owned())]
}

/// A clone of `op` inserted before `anchor`, its operands renamed through `renamed`.
fn clone_before<'c, 'a>(
    op: OperationRef<'c, 'a>,
    anchor: OperationRef<'c, 'a>,
    renamed: &HashMap<*const std::ffi::c_void, Value<'c, 'a>>,
) -> OperationRef<'c, 'a> {
    let block = anchor.block().expect("the anchor is in a block");
    let copy = block.insert_operation_before(anchor, cloned(op));
    rename_operands(copy, renamed);
    copy
}

fn rename_operands<'c, 'a>(op: OperationRef<'c, 'a>, renamed: &HashMap<*const std::ffi::c_void, Value<'c, 'a>>) {
    let operands: Vec<Value> = op.operands().collect();
    for (position, operand) in operands.into_iter().enumerate() {
        if let Some(new) = renamed.get(&operand.to_raw().ptr) {
            mutable(op).set_operand(position, *new);
        }
    }
}

/// The multiplies `alpha * x` and `widen(alpha) * x` that are every use of `alpha` (a
/// rescale factor) and of its widenings (a lane or sublane broadcast, copies side by
/// side, or its first columns); None if something else uses them.
fn rescales_by<'c: 'a, 'a>(alpha: Value<'c, 'a>) -> Option<Vec<OperationRef<'c, 'a>>> {
    let mut rescales = Vec::new();
    // Copies side by side use alpha once per copy.
    for user in distinct_users(alpha) {
        let name = op_name(user);
        // alpha as the multiply's first operand only (alpha * alpha is no rescale).
        if name == "arith.mulf" && user.operand(0).ok() == Some(alpha) && user.operand(1).ok() != Some(alpha) {
            rescales.push(user);
        } else if matches!(name.as_str(), "vector.broadcast" | "tpu.concatenate" | "vector.extract_strided_slice")
            && user.operands().all(|operand| operand == alpha)
        {
            for (rescale, position) in users(user.result(0).ok()?.into()) {
                (op_name(rescale) == "arith.mulf" && position == 0).then_some(())?;
                rescales.push(rescale);
            }
        } else {
            return None;
        }
    }
    Some(rescales)
}

/// The kernel's `math.exp2` and `math.exp` ops.
fn exponentials<'c, 'a>(kernel: OperationRef<'c, 'a>) -> Vec<OperationRef<'c, 'a>> {
    ops_named(kernel, "math.exp2").into_iter().chain(ops_named(kernel, "math.exp")).collect()
}

/// Erases the op defining `value` if nothing uses it any more.
fn erase_if_unused(value: Value) {
    if !users(value).is_empty() || !unsafe { mlir_sys::mlirValueIsAOpResult(value.to_raw()) } {
        return;
    }
    // SAFETY: an op result nobody uses; its op has this one result.
    unsafe { mlir_sys::mlirOperationDestroy(mlir_sys::mlirOpResultGetOwner(value.to_raw())) };
}
