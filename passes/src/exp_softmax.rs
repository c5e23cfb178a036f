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
//!   large logits (a JAX bf16 transformer block: relative L2 4.9e-2 against the original
//!   with exp2, 2.4e-3 without the fold).
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

use crate::{
    options::{OptionKind, OptionSpec, PassOptions},
    registry::{external_pass, Anchor, PassId, PassInfo},
    tile_ir::{after_definition, defined_by, float_splat, insert_before, kernel_call_locations, kernel_functions, mutable, ops_named, replace_op, splat_before, users},
};
use flywheel_dialect::diagnostics::emit_remark;
use melior::{
    ir::{
        attribute::IntegerAttribute,
        operation::{Operation, OperationBuilder, OperationLike, OperationMutLike, OperationRef},
        Block, BlockLike, Region, RegionLike, Type, Value, ValueLike,
    },
    pass::Pass,
};

static PASS_ID: PassId = PassId;

const OPTIONS: &[OptionSpec] = &[
    OptionSpec { name: "exp2", kind: OptionKind::Bool, default: "true", help: "Scores in base 2: scale x log2(e), exp2 for exp" },
    OptionSpec { name: "fold-scale", kind: OptionKind::Choice(&["exact", "split", "always", "never"]), default: "exact", help: "Multiply Q by the score scale before the MXU, not the scores after it: when exact (f32 Q or a power-of-two scale); split (also a bf16 Q times any scale, as two bf16 parts side by side in the contraction against K twice); always (Q times the scale rounded to bf16); or never" },
    OptionSpec { name: "reciprocal", kind: OptionKind::Bool, default: "true", help: "Normalize by one reciprocal per row and a multiply" },
    OptionSpec { name: "conditional-rescale", kind: OptionKind::Bool, default: "false", help: "Rescale the running output and sum only when a row's max changed (a branch per key block)" },
    OptionSpec { name: "bf16-exp", kind: OptionKind::Bool, default: "false", help: "Exponentiate in bf16 where P is rounded to bf16 for the PV matmul (v6e, tpu7x); sums stay f32" },
    OptionSpec { name: "remarks", kind: OptionKind::Bool, default: "false", help: "Remark on what was rewritten in each kernel and what was not" },
];

pub const PASS: PassInfo = PassInfo {
    name: "flywheel-exp-softmax",
    summary: "Cheaper softmax in attention kernels: base-2 scores, the scale folded into Q, reciprocal normalization",
    options: OPTIONS,
    create,
};

/// Which rewrites to do.
#[derive(Clone, Copy, Debug)]
pub struct Rewrites {
    pub exp2: bool,
    pub fold_scale: Fold,
    pub reciprocal: bool,
    pub conditional_rescale: bool,
    pub bf16_exp: bool,
}

/// When to fold the score scale into Q.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fold {
    Exact,
    Split,
    Always,
    Never,
}

fn create(options: &PassOptions) -> Pass {
    let fold_scale = match options.choice("fold-scale") {
        "always" => Fold::Always,
        "split" => Fold::Split,
        "never" => Fold::Never,
        _ => Fold::Exact,
    };
    let rewrites = Rewrites { exp2: options.bool("exp2"), fold_scale, reciprocal: options.bool("reciprocal"), conditional_rescale: options.bool("conditional-rescale"), bf16_exp: options.bool("bf16-exp") };
    let remarks = options.bool("remarks");
    external_pass(&PASS, &PASS_ID, Anchor::Any, move |op: OperationRef| exp_softmax(op, rewrites, remarks))
}

/// Rewrites every attention kernel in the kernel modules directly in `root`.
pub fn exp_softmax(root: OperationRef, rewrites: Rewrites, remarks: bool) -> bool {
    let calls = kernel_call_locations(root);
    for (symbol, kernel) in kernel_functions(root, crate::mosaic_attention::KERNEL_NAME) {
        let mut notes = Vec::new();
        if rewrites.exp2 {
            notes.push(match base_two(kernel) {
                Ok(()) => "scores in base 2 (scale x log2(e), exp2)".to_owned(),
                Err(reason) => format!("scores kept in base e: {reason}"),
            });
        }
        if rewrites.fold_scale != Fold::Never {
            notes.push(match fold_scale(kernel, rewrites.fold_scale) {
                Ok(done) => done.to_owned(),
                Err(reason) => format!("score scale not folded: {reason}"),
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
fn score_scales<'c, 'a>(kernel: OperationRef<'c, 'a>) -> Result<Vec<(OperationRef<'c, 'a>, OperationRef<'c, 'a>, f64)>, String> {
    let found: Vec<_> = ops_named(kernel, "flywheel.matmul")
        .into_iter()
        .filter(|matmul| matmul.attribute("transpose_rhs").ok().and_then(|a| IntegerAttribute::try_from(a).ok()).is_some_and(|flag| flag.value() != 0))
        .filter_map(|matmul| {
            let scores: Value = matmul.result(0).ok()?.into();
            match users(scores).as_slice() {
                [(mulf, 0)] if mulf.name().as_string_ref().as_str() == Ok("arith.mulf") => Some((*mulf, matmul, float_splat(mulf.operand(1).ok()?)?)),
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
            "arith.select" if position != 0 => only_masks_to_softmax(user.result(0).map_err(|e| e.to_string())?.into())?,
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
        let exp2 = insert_before(exp, "math.exp2", &[operand], operand.r#type(), &[("fastmath", "#arith.fastmath<none>".into())]);
        replace_op(exp, exp2);
    }
    Ok(())
}

fn fold_scale(kernel: OperationRef, when: Fold) -> Result<&'static str, String> {
    let scales = score_scales(kernel)?;
    // Whether Q times the scale, rounded to Q's type, would round.
    let rounds = |matmul: OperationRef, scale: f64| scale.abs().log2().fract() != 0.0 && matmul.operand(0).is_ok_and(|q| q.r#type().to_string().ends_with("xbf16>"));
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

/// The contraction depth the v6e and tpu7x MXUs take in one pass.
const MXU_DEPTH: usize = 256;

/// The `fold-scale` FlyWheel's chain uses on `target`: `split` where the MXU is 256 deep
/// (v6e, tpu7x: at head dim 128 the split rides in the contraction's empty half; MHA 8 x
/// 2048 x 128, static cycles: v6e 87,931 -> 82,395, tpu7x 94,424 -> 87,544), `exact` on
/// v5e, whose 128-deep MXU would take a second pass (and whose static profile aborts on
/// the split's bf16 ops, so it is unmeasured).
pub fn fold_for_target(target: &str) -> &'static str {
    if target == "v5e" {
        "exact"
    } else {
        "split"
    }
}

/// Q times the scale in f32, before `at`.
fn scaled_f32<'c, 'a>(at: OperationRef<'c, 'a>, q: Value<'c, 'a>, scale: f64) -> Result<Value<'c, 'a>, String> {
    let f32_type = Type::parse(unsafe { at.context().to_ref() }, &q.r#type().to_string().replace("xbf16>", "xf32>")).ok_or("Q's type")?;
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
    let scaled_q = if scaled.r#type() == q.r#type() { scaled } else { insert_before(matmul, "arith.truncf", &[scaled], q.r#type(), &[]) };
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
fn fold_split<'c, 'a>(matmul: OperationRef<'c, 'a>, scale: f64, split_qs: &mut Vec<(Value<'c, 'a>, f64, Value<'c, 'a>)>) -> Result<(), String> {
    let q = matmul.operand(0).map_err(|e| e.to_string())?;
    let k = matmul.operand(1).map_err(|e| e.to_string())?;
    let side_by_side = |value: Value<'c, 'a>| doubled_columns(&value.r#type().to_string()).and_then(|text| Type::parse(unsafe { matmul.context().to_ref() }, &text)).ok_or("a 2-D tile");
    let parts = match split_qs.iter().find(|(source, factor, _)| *source == q && *factor == scale) {
        Some(&(_, _, parts)) => parts,
        None => {
            let at = after_definition(q);
            let (high, low) = crate::lower_to_mosaic::split(at, scaled_f32(at, q, scale)?);
            let low = low.ok_or("Q times the scale holds bf16 numbers")?;
            let parts = insert_before(at, "tpu.concatenate", &[high, low], side_by_side(q)?, &[("dimension", "1 : i32".into())]);
            split_qs.push((q, scale, parts));
            parts
        }
    };
    let k_twice = insert_before(matmul, "tpu.concatenate", &[k, k], side_by_side(k)?, &[("dimension", "1 : i32".into())]);
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
        let Some(widen) = defined_by(divisor, "vector.broadcast").or_else(|| defined_by(divisor, "tpu.concatenate")) else { continue };
        let Ok(sum) = widen.operand(0) else { continue };
        if widen.operands().any(|operand| operand != sum) {
            continue;
        }
        let one = splat_before(divide, 1.0, sum.r#type());
        let inverse = insert_before(divide, "arith.divf", &[one, sum], sum.r#type(), &[("fastmath", "#arith.fastmath<none>".into())]);
        let copies = vec![inverse; widen.operand_count()];
        let attributes: Vec<(&str, String)> = widen.attribute("dimension").map(|dimension| vec![("dimension", dimension.to_string())]).unwrap_or_default();
        let name = widen.name().as_string_ref().as_str().unwrap_or("vector.broadcast").to_owned();
        let wide = insert_before(divide, &name, &copies, divisor.r#type(), &attributes);
        let normalized = insert_before(divide, "arith.mulf", &[accumulator, wide], accumulator.r#type(), &[("fastmath", "#arith.fastmath<none>".into())]);
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
            .filter(|(user, _)| user.name().as_string_ref().as_str() == Ok("arith.truncf") && user.result(0).is_ok_and(|r| r.r#type().to_string().ends_with("xbf16>")))
            .map(|(user, _)| user)
            .collect();
        let Some(bf16_type) = narrowing.first().and_then(|truncf| truncf.result(0).ok()).map(|r| r.r#type()) else { continue };
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
        let widened = users(alpha).into_iter().filter_map(|(user, _)| {
            let name = user.name().as_string_ref().as_str().unwrap_or("").to_owned();
            let widens = matches!(name.as_str(), "vector.broadcast" | "tpu.concatenate") && user.operands().all(|operand| operand == alpha);
            widens.then(|| user.result(0).ok()).flatten().map(Value::from)
        });
        let rescales: Vec<_> = std::iter::once(alpha)
            .chain(widened)
            .flat_map(users)
            .filter(|(user, position)| *position == 0 && user.name().as_string_ref().as_str() == Ok("arith.mulf"))
            .map(|(user, _)| user)
            .collect();
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
        let least = insert_before(anchor, "vector.multi_reduction", &[drop, infinity], f32_type, &[("kind", "#vector.kind<minimumf>".into()), ("reduction_dims", "array<i64: 0, 1>".into())]);
        let zero = insert_before(anchor, "arith.constant", &[], f32_type, &[("value", "0.0 : f32".into())]);
        let changed = insert_before(anchor, "arith.cmpf", &[least, zero], Type::parse(context, "i1").expect("i1"), &[("predicate", "4 : i64".into())]);
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
            // SAFETY: a fresh clone of a live op, owned by the block it is appended to.
            None => block.append_operation(unsafe { Operation::from_raw(mlir_sys::mlirOperationClone(op.to_raw())) }).result(0).expect("one result").into(),
            Some(value) => value,
        };
        block.append_operation(OperationBuilder::new("scf.yield", location).add_operands(&[yielded]).build().expect("scf.yield builds"));
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
