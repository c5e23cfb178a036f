//! `flywheel-layout` (see [`PASS`]): chooses the operand layouts of each attention kernel
//! for the MXU and records them on the `flywheel.attention` as attributes `flywheel-tile`
//! honours. It runs before tiling because the layouts fix the shapes of the tile program:
//! - `flywheel.orientation`: `"standard"` (S = Q·Kᵀ with K as the matmul's transposed
//!   right operand, never a transpose in the key loop) or `"transposed"` (Sᵀ = K·Qᵀ and
//!   Oᵀ = Vᵀ·Pᵀ: Pᵀ is the stationary operand, deep and wide, and the softmax reduces
//!   across sublanes; V is transposed once in HBM, O once per query block). A mask or
//!   bias operand keeps the standard orientation (its tiles arrive query-major).
//! - `flywheel.row_sum`: `"vpu"` (the softmax sums each row of P) or `"mxu"` (P·[V | 1]:
//!   V gets 128 columns of ones, so the matmul that applies P also sums it, and l comes
//!   out lane-replicated). Only in the standard orientation with Dv a multiple of 128.
//!   `auto` (the default) puts it on the MXU only where the ones ride free: on v6e, whose
//!   256-wide MXU a Dv of 128 (or any odd number of lane tiles) leaves half empty. With Dv
//!   a multiple of 256, or v5e's 128-wide MXU, the ones columns are a whole extra MXU pass;
//!   on tpu7x libtpu's static cycles favour the VPU sum.
//!
//! GQA heads always share a grid step (their queries stacked into the matmul's rows, one
//! pushed K/V block serving the group): `flywheel-tile` does that for every kernel.
//!
//! On each `flywheel.gated_delta` it records `flywheel.operand_sharing`: `"shared"` (the
//! default: products that share an operand are one product, T [βV | βe^γK] giving U and W
//! as wide as the MXU, and per head [W; e^γ Q] S giving W S and Q S) or `"separate"`; and
//! `flywheel.state_keys`, where the state update Kᵀ·V' gets Kᵀ (K·Kᵀ and Q·Kᵀ take K as
//! the transposed right operand either way): `"transpose_per_chunk"` (the default: each
//! key head's K tile transposed in the kernel, once per chunk) or `"transposed_copy"` (a
//! second copy of K laid out [B, Nk, Dk, T'], transposed once in HBM, each step's
//! [Dk, chunks x C] tile sliced per chunk: no transpose in the loop). libtpu's static
//! cycles favour the transpose.

use crate::{
    options::Options,
    pass::{external_pass, Anchor, PassId, PassInfo},
    target::Generation,
};
use flywheel_dialect::ir::string_attribute;
use flywheel_dialect::{diagnostics::emit_remark, layout::Axis as Role, ops::AttentionOp, tensor::TensorInfo};
use flywheel_kernels::tile_ir::{attention_ops, gated_delta_ops, set_attribute};
use melior::{
    ir::{
        operation::{OperationLike, OperationRef},
        Value,
    },
    pass::Pass,
};

static PASS_ID: PassId = PassId;

/// The attribute names `flywheel-tile` reads.
pub const ORIENTATION: &str = "flywheel.orientation";
pub const ROW_SUM: &str = "flywheel.row_sum";
pub const STATE_KEYS: &str = "flywheel.state_keys";
pub const OPERAND_SHARING: &str = "flywheel.operand_sharing";

crate::choice! {
    /// The orientation asked for.
    pub enum Orientation {
        Standard = "standard",
        Transposed = "transposed",
        /// Transposed where, with the lagged max, it was measured faster (not on v5e).
        Auto = "auto",
    }
}

crate::choice! {
    /// Where the row sum of P is asked to run.
    pub enum RowSum {
        /// On the MXU where the ones columns fill an otherwise empty half of a v6e MXU.
        Auto = "auto",
        Mxu = "mxu",
        Vpu = "vpu",
    }
}

crate::choice! {
    /// Where the Gated DeltaNet state update gets Kᵀ.
    pub enum StateKeys {
        TransposedCopy = "transposed-copy",
        TransposePerChunk = "transpose-per-chunk",
    }
}

crate::pass_options! {
    pub struct LayoutOptions {
        /// Scores as Q·Kᵀ (standard), Sᵀ = K·Qᵀ with Oᵀ = Vᵀ·Pᵀ (transposed), or transposed where it is the faster
        /// with flywheel-exp-softmax{lagged-max=transposed}: v6e and tpu7x, head dims 128 and 256 (causal at 128
        /// only), no window, mask or bias (auto)
        orientation: Orientation = ("orientation", "standard"),
        /// Sum each row of P in the PV matmul (P·[V | 1]), on the VPU, or on the MXU only where its ones columns
        /// fill an otherwise empty MXU half (auto)
        row_sum: RowSum = ("row-sum", "auto"),
        /// The TPU generation the auto orientation and row sum are chosen for
        target: Generation = ("target", "v6e"),
        /// In each Gated DeltaNet kernel, one product for each pair sharing an operand: T [bV | b e^g K] and
        /// [W; e^g Q] S
        gdn_shared_operands: bool = ("gdn-shared-operands", "true"),
        /// Where the Gated DeltaNet state update gets Kᵀ: a copy of K transposed once in HBM, or a transpose of K
        /// in each chunk
        gdn_state_keys: StateKeys = ("gdn-state-keys", "transpose-per-chunk"),
        /// Remark on the layouts chosen for each attention, and why
        remarks: bool = ("remarks", "false"),
    }
}

pub const PASS: PassInfo = PassInfo {
    name: "flywheel-layout",
    summary: "Choose MXU operand layouts for each attention kernel (orientation, row sum in the PV matmul) and Gated DeltaNet kernel (shared operands, the keys its state update reads)",
    description: "Records on each `flywheel.attention` the orientation of its kernel (standard S = Q·Kᵀ, or \
transposed Sᵀ = K·Qᵀ with Oᵀ = Vᵀ·Pᵀ, which makes Pᵀ the MXU's stationary operand) and where the row sum of P runs \
(VPU, or MXU as P·[V | 1]), and on each `flywheel.gated_delta` whether products sharing an operand are joined and \
where its state update gets Kᵀ. `flywheel-tile` honours these attributes; it runs before tiling because the layouts \
fix the shapes of the tile program. A mask or bias operand keeps the standard orientation.",
    options: LayoutOptions::SPECS,
    create: |text| Ok(create(LayoutOptions::parse(text)?)),
};

/// The layouts asked for.
#[derive(Clone, Copy, Debug)]
pub struct Request {
    /// The generation the auto orientation and row sum are chosen for.
    pub generation: Generation,
    pub orientation: Orientation,
    pub row_sum: RowSum,
    /// Gated DeltaNet: Kᵀ for the state update from a copy transposed in HBM.
    pub transposed_key_copy: bool,
    /// Gated DeltaNet: products that share an operand done as one.
    pub shared_operands: bool,
}

fn create(options: LayoutOptions) -> Pass {
    let request = Request {
        generation: options.target,
        orientation: options.orientation,
        row_sum: options.row_sum,
        transposed_key_copy: options.gdn_state_keys == StateKeys::TransposedCopy,
        shared_operands: options.gdn_shared_operands,
    };
    let remarks = options.remarks;
    external_pass(&PASS, &PASS_ID, Anchor::Any, move |op: OperationRef| layout(op, request, remarks))
}

/// Records the layouts of every attention and Gated DeltaNet under `root`.
pub fn layout(root: OperationRef, request: Request, remarks: bool) -> bool {
    let state_keys = if request.transposed_key_copy { "transposed_copy" } else { "transpose_per_chunk" };
    let sharing = if request.shared_operands { "shared" } else { "separate" };
    for raw in gated_delta_ops(root) {
        // SAFETY: as below.
        let op = unsafe { OperationRef::from_raw(raw) };
        set_attribute(op, OPERAND_SHARING, &format!("{sharing:?}"));
        set_attribute(op, STATE_KEYS, &format!("{state_keys:?}"));
        if remarks {
            emit_remark(
                op.location(),
                &format!("layouts: {sharing} operands, state update keys {}", state_keys.replace('_', " ")),
            );
        }
    }
    for raw in attention_ops(root) {
        // SAFETY: the ops stay in place; only their attributes change.
        let op = unsafe { OperationRef::from_raw(raw) };
        let attention = AttentionOp::from_operation(op).expect("collected as attention");
        let (orientation, row_sum, notes) = choose(attention, request);
        set_attribute(op, ORIENTATION, &format!("{orientation:?}"));
        set_attribute(op, ROW_SUM, &format!("{row_sum:?}"));
        if remarks {
            let reasons = if notes.is_empty() { String::new() } else { format!(" ({})", notes.join("; ")) };
            emit_remark(
                op.location(),
                &format!("layouts: {orientation} orientation, row sum on the {}{reasons}", row_sum.to_uppercase()),
            );
        }
    }
    true
}

/// The orientation and row sum for one attention, and why a request was not granted.
fn choose(attention: AttentionOp, request: Request) -> (&'static str, &'static str, Vec<String>) {
    let mut notes = Vec::new();
    let extras = attention.mask().is_some() || attention.bias().is_some();
    let value_dim = head_dim(attention, attention.v());
    let transposed = match request.orientation {
        Orientation::Standard => false,
        _ if extras => {
            notes.push("a mask or bias operand keeps the standard orientation".to_owned());
            false
        }
        Orientation::Transposed => true,
        Orientation::Auto => match auto_orientation_miss(attention, value_dim, request.generation) {
            Some(reason) => {
                notes.push(format!("auto orientation: {reason}"));
                false
            }
            None => true,
        },
    };
    let mut on_mxu = request.row_sum != RowSum::Vpu;
    if on_mxu && transposed {
        on_mxu = false;
        notes.push("the transposed kernel sums across sublanes".to_owned());
    } else if on_mxu && value_dim.is_none_or(|dim| dim % 128 != 0) {
        on_mxu = false;
        notes.push(format!("value head dim {} is not whole lane tiles", shown(value_dim)));
    } else if request.row_sum == RowSum::Auto {
        if request.generation != Generation::V6e {
            on_mxu = false;
            notes.push("auto row sum: the MXU sum pays off on v6e only".to_owned());
        } else if value_dim.is_some_and(|dim| dim % 256 == 0) {
            on_mxu = false;
            notes.push(format!(
                "auto row sum: value head dim {} fills the 256-wide MXU, ones columns would be an extra pass",
                shown(value_dim)
            ));
        }
    }
    (if transposed { "transposed" } else { "standard" }, if on_mxu { "mxu" } else { "vpu" }, notes)
}

/// Why the auto orientation keeps an attention standard, if it does: the transposed
/// kernel with the lagged max was measured faster on v6e and tpu7x at head dims 128 and
/// 256, and with causality at 128 (on tpu7x with the exact fold `flywheel-tpu` gives
/// banded kernels there); libtpu's static profile aborts on the causal transposed kernel
/// at 256 on v6e, and a window is unmeasured.
fn auto_orientation_miss(attention: AttentionOp, value_dim: Option<i64>, generation: Generation) -> Option<String> {
    if generation == Generation::V5e {
        return Some("transposed on v6e and tpu7x only".to_owned());
    }
    if attention.window().map_or(true, |window| window.is_some()) {
        return Some("a window keeps the standard orientation".to_owned());
    }
    let head_dim = head_dim(attention, attention.q());
    let causal = attention.causal().unwrap_or(true);
    match (head_dim, value_dim) {
        (Some(128), Some(128)) => None,
        (Some(256), Some(256)) if causal => Some("causality keeps the standard orientation at head dim 256".to_owned()),
        (Some(256), Some(256)) => None,
        _ => Some(format!("transposed at head dims 128 and 256 only, not {}/{}", shown(head_dim), shown(value_dim))),
    }
}

/// A head dim for a remark: "?" when unknown.
fn shown(dim: Option<i64>) -> String {
    dim.map_or("?".to_owned(), |d| d.to_string())
}

/// The head dim of one of the attention's operands, if static.
fn head_dim(attention: AttentionOp, operand: Option<Value>) -> Option<i64> {
    let layout = attention.layout().ok()?;
    let operand = TensorInfo::of_value(operand?)?;
    *operand.shape.get(layout.position(Role::HeadDim))?
}

/// The layouts recorded on an attention op: (transposed, row sum on the MXU), or why an
/// attribute is not understood. Absent attributes mean the baseline: standard, VPU.
pub fn recorded(op: OperationRef) -> Result<(bool, bool), String> {
    Ok((recorded_choice(op, ORIENTATION, "standard", "transposed")?, recorded_choice(op, ROW_SUM, "vpu", "mxu")?))
}

/// The layouts recorded on a Gated DeltaNet op: (operands shared, the state update's Kᵀ
/// from a transposed copy), or why an attribute is not understood. Absent attributes mean
/// the baseline: separate products, a transpose per chunk.
pub fn recorded_gated_delta(op: OperationRef) -> Result<(bool, bool), String> {
    Ok((
        recorded_choice(op, OPERAND_SHARING, "separate", "shared")?,
        recorded_choice(op, STATE_KEYS, "transpose_per_chunk", "transposed_copy")?,
    ))
}

/// Whether the string attribute `name` is `other` (true) or `baseline` or absent (false).
fn recorded_choice(op: OperationRef, name: &str, baseline: &str, other: &str) -> Result<bool, String> {
    match op.attribute(name) {
        Err(_) => Ok(false),
        Ok(attribute) => match string_attribute(attribute) {
            Some(value) if value == baseline => Ok(false),
            Some(value) if value == other => Ok(true),
            _ => Err(format!("{name} is {attribute}, not \"{baseline}\" or \"{other}\"")),
        },
    }
}
