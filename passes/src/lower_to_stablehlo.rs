//! `flywheel-lower-to-stablehlo`: the reference lowering. Decomposes `flywheel.attention`
//! into plain StableHLO with exactly the numerics its definition states (f32 scores and
//! softmax, probabilities rounded to V's type, masked logits filled with the lowest f32,
//! so a row with no allowed key is uniform). Raising and then lowering gives a program
//! XLA runs, which is how the raising passes are checked on real inputs.

use crate::{
    hlo::HloBuilder,
    options::PassOptions,
    registry::{run_guarded, PassInfo},
};
use flywheel_dialect::{
    diagnostics::emit_error,
    layout::{Axis as Role, Layout},
    ops::AttentionOp,
    stablehlo::{ComparisonDirection, ComparisonType, DotDimensionNumbers},
    tensor::TensorInfo,
};
use melior::{
    ir::{
        operation::{OperationLike, OperationRef, WalkOrder, WalkResult},
        r#type::TypeId,
        Value, ValueLike,
    },
    pass::{create_external, ExternalPass, Pass},
};

#[repr(align(8))]
struct PassId;
static PASS_ID: PassId = PassId;

pub const PASS: PassInfo = PassInfo {
    name: "flywheel-lower-to-stablehlo",
    summary: "Decompose flywheel.attention into plain StableHLO (the reference lowering)",
    options: &[],
    create,
};

fn create(_options: &PassOptions) -> Pass {
    create_external(
        |op: OperationRef, pass: ExternalPass| run_guarded(PASS.name, op, pass, || lower_to_stablehlo(op)),
        TypeId::create(&PASS_ID),
        "FlyWheelLowerToStableHlo",
        PASS.name,
        PASS.summary,
        "",
        &[],
    )
}

/// Lowers every `flywheel.attention` under `root`; false (with an error at the op) if one
/// cannot be read.
pub fn lower_to_stablehlo(root: OperationRef) -> bool {
    let mut ops = Vec::new();
    root.walk(WalkOrder::PostOrder, |op| {
        if AttentionOp::from_operation(op).is_some() {
            ops.push(op.to_raw());
        }
        WalkResult::Advance
    });
    let mut ok = true;
    for raw in ops {
        // SAFETY: each op is erased only after it is lowered, and none is visited twice.
        let op = unsafe { OperationRef::from_raw(raw) };
        let attention = AttentionOp::from_operation(op).expect("collected as attention");
        match lower_attention(attention) {
            Ok(()) => unsafe { mlir_sys::mlirOperationDestroy(raw) },
            Err(message) => {
                emit_error(op.location(), &format!("'flywheel.attention' op cannot be lowered: {message}"));
                ok = false;
            }
        }
    }
    ok
}

fn shape(value: Value) -> Result<(Vec<i64>, String), String> {
    let info = TensorInfo::of_value(value).ok_or("operand is not a ranked tensor")?;
    let dims = info.shape.iter().map(|d| d.ok_or("dynamic shape")).collect::<Result<Vec<_>, _>>()?;
    Ok((dims, info.element_name()))
}

/// The permutation taking a tensor in `layout` to BTNH, and back.
fn to_btnh(layout: Layout) -> Vec<i64> {
    Role::ALL.iter().map(|&role| layout.position(role) as i64).collect()
}

fn from_btnh(layout: Layout) -> Vec<i64> {
    layout.order().iter().map(|&role| Role::ALL.iter().position(|&r| r == role).expect("a role") as i64).collect()
}

fn lower_attention<'c, 'a>(attention: AttentionOp<'c, 'a>) -> Result<(), String> {
    let op = attention.operation();
    let b = HloBuilder::before(op);
    let layout = attention.layout()?;
    let operand = |value: Option<Value<'c, 'a>>, name: &str| value.ok_or(format!("missing operand {name}"));
    let (q, k, v) = (operand(attention.q(), "q")?, operand(attention.k(), "k")?, operand(attention.v(), "v")?);
    let output = op.result(0).map_err(|_| "no result")?;
    let ((q_shape, q_element), (k_shape, k_element), (v_shape, v_element)) = (shape(q)?, shape(k)?, shape(v)?);
    let (_, o_element) = shape(output.into())?;
    let permutation = to_btnh(layout);
    let btnh = |shape: &[i64]| -> Vec<i64> { permutation.iter().map(|&p| shape[p as usize]).collect() };
    let (qs, ks, vs) = (btnh(&q_shape), btnh(&k_shape), btnh(&v_shape));
    let (batch, queries, q_heads, head_dim) = (qs[0], qs[1], qs[2], qs[3]);
    let (keys, kv_heads, value_dim) = (ks[1], ks[2], vs[3]);
    let group = q_heads / kv_heads;
    let q = b.transpose(q, &permutation, &q_shape, &q_element);
    let k = b.transpose(k, &permutation, &k_shape, &k_element);
    let v = b.transpose(v, &permutation, &v_shape, &v_element);

    // Scores [B, Nkv, Tq, G, Tk] in f32: each query head group shares its K/V head.
    let grouped = [batch, queries, kv_heads, group, head_dim];
    let q = b.reshape(q, &qs, &grouped, &q_element);
    let scores_shape = [batch, kv_heads, queries, group, keys];
    let numbers = DotDimensionNumbers {
        lhs_batching: vec![0, 2],
        rhs_batching: vec![0, 2],
        lhs_contracting: vec![4],
        rhs_contracting: vec![3],
    };
    let mut s = b.dot_general(q, k, &numbers, &scores_shape, "f32");
    s = b.elementwise("stablehlo.multiply", &[s, b.splat(attention.scale()?, "f32", &scores_shape)]);
    if let Some(cap) = attention.logit_soft_cap()? {
        let cap = b.splat(cap, "f32", &scores_shape);
        let tanh = b.elementwise("stablehlo.tanh", &[b.elementwise("stablehlo.divide", &[s, cap])]);
        s = b.elementwise("stablehlo.multiply", &[cap, tanh]);
    }
    // A [B|1, Nq|1, Tq, Tk] operand spread over the scores.
    let spread = |value: Value<'c, 'a>, to_element: &str| -> Result<Value<'c, 'a>, String> {
        let (dims, element) = shape(value)?;
        let value = b.convert(value, &dims, &element, to_element);
        let heads = if dims[1] == 1 { [1, 1] } else { [kv_heads, group] };
        let split = [dims[0], heads[0], heads[1], queries, keys];
        let value = b.reshape(value, &dims, &split, to_element);
        let value = b.transpose(value, &[0, 1, 3, 2, 4], &split, to_element);
        let transposed = [split[0], split[1], queries, split[2], keys];
        Ok(if transposed == scores_shape { value } else { b.broadcast_in_dim(value, &[0, 1, 2, 3, 4], &scores_shape, to_element) })
    };
    if let Some(bias) = attention.bias() {
        let bias = spread(bias, "f32")?;
        s = b.elementwise("stablehlo.add", &[s, bias]);
    }

    // Which keys each query may attend.
    let mut allowed: Vec<Value> = Vec::new();
    let causal = attention.causal()?;
    let window = attention.window()?;
    if causal || window.is_some() {
        let positions = [queries, keys];
        let (row, column) = (b.iota(0, &positions, "i32"), b.iota(1, &positions, "i32"));
        let mut bands = Vec::new();
        let compare = |a, c, direction| b.compare(a, c, direction, ComparisonType::Signed, &positions);
        if causal {
            bands.push(compare(column, row, ComparisonDirection::Le));
        }
        if let Some((left, right)) = window {
            // i - left <= j <= i + right
            let behind = b.elementwise("stablehlo.subtract", &[row, column]);
            bands.push(compare(behind, b.splat(left as f64, "i32", &positions), ComparisonDirection::Le));
            let ahead = b.elementwise("stablehlo.subtract", &[column, row]);
            bands.push(compare(ahead, b.splat(right as f64, "i32", &positions), ComparisonDirection::Le));
        }
        let band = bands.into_iter().reduce(|a, c| b.elementwise("stablehlo.and", &[a, c])).expect("one band");
        allowed.push(b.broadcast_in_dim(band, &[2, 4], &scores_shape, "i1"));
    }
    if let Some(mask) = attention.mask() {
        allowed.push(spread(mask, "i1")?);
    }
    if let (Some(q_segments), Some(kv_segments)) = (attention.q_segment_ids(), attention.kv_segment_ids()) {
        let (_, element) = shape(q_segments)?;
        let q_segments = b.broadcast_in_dim(q_segments, &[0, 2], &scores_shape, &element);
        let kv_segments = b.broadcast_in_dim(kv_segments, &[0, 4], &scores_shape, &element);
        let compare_type = if element.starts_with("ui") { ComparisonType::Unsigned } else { ComparisonType::Signed };
        allowed.push(b.compare(q_segments, kv_segments, ComparisonDirection::Eq, compare_type, &scores_shape));
    }
    if let Some(allowed) = allowed.into_iter().reduce(|a, c| b.elementwise("stablehlo.and", &[a, c])) {
        s = b.elementwise("stablehlo.select", &[allowed, s, b.splat(f64::from(f32::MIN), "f32", &scores_shape)]);
        // `elementwise` typed the select like its predicate; retype it as the scores.
        s.set_type(b.tensor_type(&scores_shape, "f32"));
    }

    // Softmax over keys, in f32.
    let rows = [batch, kv_heads, queries, group];
    let max = b.reduce(s, b.scalar(f64::NEG_INFINITY, "f32"), &[4], &scores_shape, "f32", "stablehlo.maximum");
    let max = b.broadcast_in_dim(max, &[0, 1, 2, 3], &scores_shape, "f32");
    let e = b.elementwise("stablehlo.exponential", &[b.elementwise("stablehlo.subtract", &[s, max])]);
    let sum = b.reduce(e, b.scalar(0.0, "f32"), &[4], &scores_shape, "f32", "stablehlo.add");
    let sum = b.broadcast_in_dim(sum, &[0, 1, 2, 3], &scores_shape, "f32");
    let _ = rows;
    let p = b.elementwise("stablehlo.divide", &[e, sum]);
    let p = b.convert(p, &scores_shape, "f32", &v_element);

    // O = P·V: [B, Nkv, Tq, G, Dv] -> [B, Tq, Nq, Dv] -> the op's layout.
    let numbers = DotDimensionNumbers {
        lhs_batching: vec![0, 1],
        rhs_batching: vec![0, 2],
        lhs_contracting: vec![4],
        rhs_contracting: vec![1],
    };
    let o_shape = [batch, kv_heads, queries, group, value_dim];
    let o = b.dot_general(p, v, &numbers, &o_shape, &o_element);
    let o = b.transpose(o, &[0, 2, 1, 3, 4], &o_shape, &o_element);
    let merged = [batch, queries, q_heads, value_dim];
    let o = b.reshape(o, &[batch, queries, kv_heads, group, value_dim], &merged, &o_element);
    let o = b.transpose(o, &from_btnh(layout), &merged, &o_element);
    unsafe { mlir_sys::mlirValueReplaceAllUsesOfWith(output.to_raw(), o.to_raw()) };
    Ok(())
}
