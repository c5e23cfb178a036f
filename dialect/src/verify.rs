//! The semantic verifier for `flywheel` ops: what the IRDL definition cannot say (shapes
//! agreeing across operands, head counts, dtypes, optional attributes). Errors are
//! reported at the op's location, in MLIR's "'op-name' op message" style.

use crate::{
    diagnostics::emit_error,
    layout::{Axis, Layout},
    ops::{AttentionOp, GatedDeltaOp},
    tensor::{dims_agree, TensorInfo},
};
use melior::ir::{
    operation::{OperationLike, OperationRef, WalkOrder, WalkResult},
    Value,
};

type Check = Result<(), String>;

/// Verifies every `flywheel` op nested in `root`, reporting each failure at its op.
/// Returns whether all of them are valid.
pub fn verify(root: OperationRef) -> bool {
    let mut valid = true;
    root.walk(WalkOrder::PreOrder, |op| {
        let result = if let Some(attention) = AttentionOp::from_operation(op) {
            Some((AttentionOp::NAME, verify_attention(attention)))
        } else {
            GatedDeltaOp::from_operation(op).map(|gdn| (GatedDeltaOp::NAME, verify_gated_delta(gdn)))
        };
        if let Some((name, Err(message))) = result {
            emit_error(op.location(), &format!("'{name}' op {message}"));
            valid = false;
        }
        WalkResult::Advance
    });
    valid
}

/// A 4-D operand read in a layout: sizes by logical axis.
struct Operand4d<'c> {
    info: TensorInfo<'c>,
    layout: Layout,
}

impl<'c> Operand4d<'c> {
    fn dim(&self, axis: Axis) -> Option<i64> {
        self.info.shape[self.layout.position(axis)]
    }
}

fn tensor<'c>(value: Option<Value<'c, '_>>, name: &str) -> Result<TensorInfo<'c>, String> {
    let value = value.ok_or_else(|| format!("requires operand '{name}'"))?;
    TensorInfo::of_value(value).ok_or_else(|| format!("operand '{name}' must be a ranked tensor"))
}

fn operand_4d<'c>(value: Option<Value<'c, '_>>, name: &str, layout: Layout) -> Result<Operand4d<'c>, String> {
    let info = tensor(value, name)?;
    if info.rank() != 4 {
        return Err(format!("operand '{name}' must be 4-D in layout {layout}, got rank {}", info.rank()));
    }
    if !info.is_float() {
        return Err(format!("operand '{name}' must have a float element type, got {}", info.element_name()));
    }
    Ok(Operand4d { info, layout })
}

fn agree(what: &str, a: Option<i64>, b: Option<i64>) -> Check {
    if dims_agree(a, b) {
        Ok(())
    } else {
        Err(format!("{what} disagree: {} vs {}", show(a), show(b)))
    }
}

fn show(size: Option<i64>) -> String {
    size.map_or("?".into(), |size| size.to_string())
}

/// A dimension that may be broadcast: equal to `expected` or 1.
fn agree_or_one(what: &str, size: Option<i64>, expected: Option<i64>) -> Check {
    if size == Some(1) {
        Ok(())
    } else {
        agree(what, size, expected)
    }
}

fn verify_heads(q_heads: i64, kv_heads: i64, q_dim: Option<i64>, kv_dim: Option<i64>) -> Check {
    agree("'q_heads' and the heads axis of q", Some(q_heads), q_dim)?;
    agree("'kv_heads' and the heads axis of k", Some(kv_heads), kv_dim)?;
    if kv_heads <= 0 || q_heads <= 0 || q_heads % kv_heads != 0 {
        return Err(format!("kv heads ({kv_heads}) must divide q heads ({q_heads})"));
    }
    Ok(())
}

pub fn verify_attention(op: AttentionOp) -> Check {
    let layout = op.layout()?;
    let scale = op.scale()?;
    if !scale.is_finite() {
        return Err(format!("attribute 'scale' must be finite, got {scale}"));
    }
    op.causal()?;
    let q = operand_4d(op.q(), "q", layout)?;
    let k = operand_4d(op.k(), "k", layout)?;
    let v = operand_4d(op.v(), "v", layout)?;
    let output = op.operation().result(0).map_err(|_| "requires a result".to_string())?;
    let o = operand_4d(Some(output.into()), "result", layout)?;

    agree("batch sizes of q and k", q.dim(Axis::Batch), k.dim(Axis::Batch))?;
    agree("batch sizes of q and v", q.dim(Axis::Batch), v.dim(Axis::Batch))?;
    agree("head dims of q and k", q.dim(Axis::HeadDim), k.dim(Axis::HeadDim))?;
    agree("sequence lengths of k and v", k.dim(Axis::Sequence), v.dim(Axis::Sequence))?;
    agree("heads of k and v", k.dim(Axis::Heads), v.dim(Axis::Heads))?;
    agree("batch sizes of q and the result", q.dim(Axis::Batch), o.dim(Axis::Batch))?;
    agree("sequence lengths of q and the result", q.dim(Axis::Sequence), o.dim(Axis::Sequence))?;
    agree("heads of q and the result", q.dim(Axis::Heads), o.dim(Axis::Heads))?;
    agree("head dims of v and the result", v.dim(Axis::HeadDim), o.dim(Axis::HeadDim))?;
    verify_heads(op.q_heads()?, op.kv_heads()?, q.dim(Axis::Heads), k.dim(Axis::Heads))?;

    // Masks and biases are [B|1, Nq|1, Tq, Tk].
    let score_dims = [
        ("batch", q.dim(Axis::Batch)),
        ("heads", q.dim(Axis::Heads)),
        ("query length", q.dim(Axis::Sequence)),
        ("key length", k.dim(Axis::Sequence)),
    ];
    for (name, value) in [("mask", op.mask()), ("bias", op.bias())] {
        if value.is_none() {
            continue;
        }
        let info = tensor(value, name)?;
        if info.rank() != 4 {
            return Err(format!("operand '{name}' must be 4-D [B, Nq, Tq, Tk], got rank {}", info.rank()));
        }
        let element_ok = if name == "mask" { info.is_bool() } else { info.is_float() };
        if !element_ok {
            let wanted = if name == "mask" { "i1" } else { "a float" };
            return Err(format!("operand '{name}' must have element type {wanted}, got {}", info.element_name()));
        }
        for (dim, (axis, expected)) in score_dims.iter().enumerate() {
            let what = format!("{axis} of '{name}' and of the scores");
            if dim < 2 {
                agree_or_one(&what, info.shape[dim], *expected)?;
            } else {
                agree(&what, info.shape[dim], *expected)?;
            }
        }
    }

    match (op.q_segment_ids(), op.kv_segment_ids()) {
        (None, None) => {}
        (Some(_), None) | (None, Some(_)) => {
            return Err("requires both 'q_segment_ids' and 'kv_segment_ids', or neither".into())
        }
        (q_ids, kv_ids) => {
            for (name, value, length) in
                [("q_segment_ids", q_ids, q.dim(Axis::Sequence)), ("kv_segment_ids", kv_ids, k.dim(Axis::Sequence))]
            {
                let info = tensor(value, name)?;
                if info.rank() != 2 || !info.is_integer() {
                    return Err(format!("operand '{name}' must be an integer tensor [B, T]"));
                }
                agree(&format!("batch sizes of q and '{name}'"), info.shape[0], q.dim(Axis::Batch))?;
                agree(&format!("sequence length of '{name}'"), info.shape[1], length)?;
            }
        }
    }

    if let Some((left, right)) = op.window()? {
        if left < 0 || right < 0 {
            return Err(format!("attribute 'window' must be non-negative, got [{left}, {right}]"));
        }
    }
    if let Some(cap) = op.logit_soft_cap()? {
        if !(cap > 0.0 && cap.is_finite()) {
            return Err(format!("attribute 'logit_soft_cap' must be positive, got {cap}"));
        }
    }
    Ok(())
}

pub fn verify_gated_delta(op: GatedDeltaOp) -> Check {
    let layout = op.layout()?;
    let scale = op.scale()?;
    if !scale.is_finite() {
        return Err(format!("attribute 'scale' must be finite, got {scale}"));
    }
    let chunk = op.chunk_size()?;
    if chunk <= 0 || chunk & (chunk - 1) != 0 {
        return Err(format!("attribute 'chunk_size' must be a power of two, got {chunk}"));
    }
    op.readout_precision()?;
    let q = operand_4d(op.q(), "q", layout)?;
    let k = operand_4d(op.k(), "k", layout)?;
    let v = operand_4d(op.v(), "v", layout)?;
    let output = op.operation().result(0).map_err(|_| "requires results".to_string())?;
    let o = operand_4d(Some(output.into()), "result 'o'", layout)?;

    for (name, other) in [("k", &k), ("v", &v), ("o", &o)] {
        agree(&format!("batch sizes of q and {name}"), q.dim(Axis::Batch), other.dim(Axis::Batch))?;
        agree(&format!("sequence lengths of q and {name}"), q.dim(Axis::Sequence), other.dim(Axis::Sequence))?;
    }
    agree("heads of q and k", q.dim(Axis::Heads), k.dim(Axis::Heads))?;
    agree("head dims of q and k", q.dim(Axis::HeadDim), k.dim(Axis::HeadDim))?;
    agree("heads of v and o", v.dim(Axis::Heads), o.dim(Axis::Heads))?;
    agree("head dims of v and o", v.dim(Axis::HeadDim), o.dim(Axis::HeadDim))?;
    if let (Some(qk_heads), Some(v_heads)) = (q.dim(Axis::Heads), v.dim(Axis::Heads)) {
        if qk_heads <= 0 || v_heads % qk_heads != 0 {
            return Err(format!("q/k heads ({qk_heads}) must divide v heads ({v_heads})"));
        }
    }

    // g and beta: f32 [B, T, Nv] in the layout without its H axis.
    for (name, value) in [("g", op.g()), ("beta", op.beta())] {
        let info = tensor(value, name)?;
        if info.rank() != 3 || info.element_name() != "f32" {
            return Err(format!("operand '{name}' must be a 3-D f32 tensor, got {}", show_type(&info)));
        }
        for axis in [Axis::Batch, Axis::Sequence, Axis::Heads] {
            let size = info.shape[layout.position_without_head_dim(axis)];
            agree(&format!("'{name}' and v along {axis:?}"), size, v.dim(axis))?;
        }
    }

    // States are f32 [B, Nv, Dk, Dv].
    let state_shape = [v.dim(Axis::Batch), v.dim(Axis::Heads), k.dim(Axis::HeadDim), v.dim(Axis::HeadDim)];
    let final_state = op.operation().result(1).map_err(|_| "requires a 'final_state' result".to_string())?;
    let states = [("initial_state", op.initial_state()), ("final_state", Some(final_state.into()))];
    for (name, value) in states {
        if value.is_none() {
            continue;
        }
        let info = tensor(value, name)?;
        if info.rank() != 4 || info.element_name() != "f32" {
            return Err(format!("'{name}' must be a 4-D f32 tensor [B, Nv, Dk, Dv], got {}", show_type(&info)));
        }
        for (size, expected) in info.shape.iter().zip(state_shape) {
            agree(&format!("shape of '{name}' and [B, Nv, Dk, Dv]"), *size, expected)?;
        }
    }
    Ok(())
}

fn show_type(info: &TensorInfo) -> String {
    let dims: Vec<String> = info.shape.iter().map(|&d| show(d)).collect();
    format!("tensor<{}x{}>", dims.join("x"), info.element_name())
}
