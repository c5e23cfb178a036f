//! `flywheel-lower-to-stablehlo`, the reference lowering (see [`PASS`]).

use crate::{
    analysis::hlo::HloBuilder,
    options::{NoOptions, Options},
    pass::{external_pass, Anchor, PassId, PassInfo},
};
use flywheel_dialect::{
    diagnostics::emit_error,
    layout::{Axis as Role, Layout},
    ops::{AttentionOp, GatedDeltaOp},
    stablehlo::{ComparisonDirection, ComparisonType, DotDimensionNumbers, Precision},
    tensor::TensorInfo,
};
use melior::{
    ir::{
        operation::{OperationLike, OperationRef, WalkOrder, WalkResult},
        Value, ValueLike,
    },
    pass::Pass,
};

static PASS_ID: PassId = PassId;

pub const PASS: PassInfo = PassInfo {
    name: "flywheel-lower-to-stablehlo",
    summary: "Decompose flywheel ops into plain StableHLO (the reference lowering)",
    description: "Decomposes `flywheel.attention` and `flywheel.gated_delta` into plain StableHLO with exactly the \
numerics their definitions state: for attention, f32 scores and softmax, probabilities rounded to V's type, masked \
logits filled with the lowest f32 (so a row with no allowed key is uniform); for Gated DeltaNet, the per-token \
recurrence in f32 as a `while` loop. Raising and then lowering gives a program XLA runs, which is how the raising \
passes are checked on real inputs.",
    options: NoOptions::SPECS,
    create: |text| Ok(create(NoOptions::parse(text)?)),
};

fn create(_: NoOptions) -> Pass {
    external_pass(&PASS, &PASS_ID, Anchor::Any, |op: OperationRef| lower_to_stablehlo(op))
}

/// Lowers every FlyWheel op under `root`; false (with an error at the op) if one cannot
/// be read.
pub fn lower_to_stablehlo(root: OperationRef) -> bool {
    let mut ops = Vec::new();
    root.walk(WalkOrder::PostOrder, |op| {
        if AttentionOp::from_operation(op).is_some() || GatedDeltaOp::from_operation(op).is_some() {
            ops.push(op.to_raw());
        }
        WalkResult::Advance
    });
    let mut ok = true;
    for raw in ops {
        // SAFETY: each op is erased only after it is lowered, and none is visited twice.
        let op = unsafe { OperationRef::from_raw(raw) };
        let lowered = match (AttentionOp::from_operation(op), GatedDeltaOp::from_operation(op)) {
            (Some(attention), _) => lower_attention(attention),
            (_, Some(gated_delta)) => lower_gated_delta(gated_delta),
            _ => unreachable!("collected as a FlyWheel op"),
        };
        match lowered {
            Ok(()) => unsafe { mlir_sys::mlirOperationDestroy(raw) },
            Err(message) => {
                let name = op.name().as_string_ref().as_str().unwrap_or_default().to_owned();
                emit_error(op.location(), &format!("'{name}' op cannot be lowered: {message}"));
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
        Ok(if transposed == scores_shape {
            value
        } else {
            b.broadcast_in_dim(value, &[0, 1, 2, 3, 4], &scores_shape, to_element)
        })
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
        s = b.select(allowed, s, b.splat(f64::from(f32::MIN), "f32", &scores_shape));
    }

    // Softmax over keys, in f32.
    let max = b.reduce(s, b.scalar(f64::NEG_INFINITY, "f32"), &[4], &scores_shape, "f32", "stablehlo.maximum");
    let max = b.broadcast_in_dim(max, &[0, 1, 2, 3], &scores_shape, "f32");
    let e = b.elementwise("stablehlo.exponential", &[b.elementwise("stablehlo.subtract", &[s, max])]);
    let sum = b.reduce(e, b.scalar(0.0, "f32"), &[4], &scores_shape, "f32", "stablehlo.add");
    let sum = b.broadcast_in_dim(sum, &[0, 1, 2, 3], &scores_shape, "f32");
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

/// The per-token recurrence, one step per loop iteration, on time-major f32 copies of the
/// inputs: S = exp(g_t) S; u = beta_t (v_t - Sᵀ k_t); S += k_t uᵀ; o_t = Sᵀ (scale q_t).
fn lower_gated_delta<'c, 'a>(op_view: GatedDeltaOp<'c, 'a>) -> Result<(), String> {
    let op = op_view.operation();
    let b = HloBuilder::before(op);
    let layout = op_view.layout()?;
    let operand = |value: Option<Value<'c, 'a>>, name: &str| value.ok_or(format!("missing operand {name}"));
    let (q, k, v) = (operand(op_view.q(), "q")?, operand(op_view.k(), "k")?, operand(op_view.v(), "v")?);
    let (g, beta) = (operand(op_view.g(), "g")?, operand(op_view.beta(), "beta")?);
    let (output, final_state) = (op.result(0).map_err(|_| "no result")?, op.result(1).map_err(|_| "no final state")?);
    let (_, o_element) = shape(output.into())?;
    let permutation = to_btnh(layout);
    // g and beta lack the head-dim axis: their permutation is the layout's without it.
    let gate_permutation: Vec<i64> = [Role::Batch, Role::Sequence, Role::Heads]
        .iter()
        .map(|&role| layout.position_without_head_dim(role) as i64)
        .collect();
    // To time-major f32: [T, B, N, D] and [T, B, N].
    let time_major = |value: Value<'c, 'a>, permutation: &[i64]| -> Result<(Value<'c, 'a>, Vec<i64>), String> {
        let (dims, element) = shape(value)?;
        let btnh: Vec<i64> = permutation.iter().map(|&p| dims[p as usize]).collect();
        let value = b.transpose(value, permutation, &dims, &element);
        let value = b.convert(value, &btnh, &element, "f32");
        let mut swapped = permutation.iter().enumerate().map(|(i, _)| i as i64).collect::<Vec<_>>();
        swapped.swap(0, 1);
        let value = b.transpose(value, &swapped, &btnh, "f32");
        let shape: Vec<i64> = swapped.iter().map(|&p| btnh[p as usize]).collect();
        Ok((value, shape))
    };
    let (q, q_shape) = time_major(q, &permutation)?;
    let (k, k_shape) = time_major(k, &permutation)?;
    let (v, v_shape) = time_major(v, &permutation)?;
    let (g, _) = time_major(g, &gate_permutation)?;
    let (beta, gate_shape) = time_major(beta, &gate_permutation)?;
    let (steps, batch, key_heads, key_dim) = (q_shape[0], q_shape[1], q_shape[2], q_shape[3]);
    let (heads, value_dim) = (v_shape[2], v_shape[3]);
    if key_heads == 0 || heads % key_heads != 0 || k_shape != q_shape {
        return Err("q and k must agree and their heads divide v's".into());
    }
    // Scale q, and give each value head its key head (h reads h / (Nv / Nk)).
    let q = b.elementwise("stablehlo.multiply", &[q, b.splat(op_view.scale()?, "f32", &q_shape)]);
    let repeat = |value: Value<'c, 'a>| -> Value<'c, 'a> {
        if heads == key_heads {
            return value;
        }
        let spread = [steps, batch, key_heads, heads / key_heads, key_dim];
        let value = b.broadcast_in_dim(value, &[0, 1, 2, 4], &spread, "f32");
        b.reshape(value, &spread, &[steps, batch, heads, key_dim], "f32")
    };
    let (q, k) = (repeat(q), repeat(k));
    let state_shape = [batch, heads, key_dim, value_dim];
    let state = match op_view.initial_state() {
        Some(initial) => initial,
        None => b.splat(0.0, "f32", &state_shape),
    };
    let outputs = b.splat(0.0, "f32", &v_shape);
    // The products at the op's precisions; without one, f32 throughout (HIGHEST), which
    // is not what a TPU does for a product that does not say.
    let config = |precision: Option<Precision>| match precision {
        Some(Precision::Default) => None,
        Some(precision) => Some(precision.spelling()),
        None => Some(Precision::Highest.spelling()),
    };
    let shapes = StepShapes {
        precision: config(op_view.precision()?),
        readout_precision: config(op_view.readout_precision()?),
        vector: [steps, batch, heads, key_dim],
        value: v_shape.clone(),
        gate: gate_shape.clone(),
        state: state_shape,
    };
    let step = b.scalar(0.0, "i32");
    let carried = b.while_loop(
        &[q, k, v, g, beta, step, state, outputs],
        |c, carried| {
            let steps = c.scalar(steps as f64, "i32");
            c.compare(carried[5], steps, ComparisonDirection::Lt, ComparisonType::Signed, &[])
        },
        |c, carried| recurrence_step(c, carried, &shapes),
    );
    // Back to the op's layout and element type.
    let swapped_shape = [batch, steps, heads, value_dim];
    let o = b.transpose(carried[7], &[1, 0, 2, 3], &v_shape, "f32");
    let o = b.convert(o, &swapped_shape, "f32", &o_element);
    let o = b.transpose(o, &from_btnh(layout), &swapped_shape, &o_element);
    unsafe {
        mlir_sys::mlirValueReplaceAllUsesOfWith(output.to_raw(), o.to_raw());
        mlir_sys::mlirValueReplaceAllUsesOfWith(final_state.to_raw(), carried[6].to_raw());
    }
    Ok(())
}

/// The shapes one recurrence step works with (time-major sequences, and the state).
struct StepShapes {
    /// The products' `precision_config` (none: DEFAULT), and the readout's with q.
    precision: Option<&'static str>,
    readout_precision: Option<&'static str>,
    vector: [i64; 4],
    value: Vec<i64>,
    gate: Vec<i64>,
    state: [i64; 4],
}

/// One token of the recurrence; `carried` is (q, k, v, g, beta, t, S, outputs).
fn recurrence_step<'c, 'b>(
    c: &HloBuilder<'c, 'b>,
    carried: &[Value<'c, 'b>],
    shapes: &StepShapes,
) -> Vec<Value<'c, 'b>> {
    let t = carried[5];
    let zero = c.scalar(0.0, "i32");
    let at_step = |sequence: Value<'c, 'b>, dims: &[i64]| -> Value<'c, 'b> {
        let mut sizes = dims.to_vec();
        sizes[0] = 1;
        let starts: Vec<Value> = std::iter::once(t).chain(std::iter::repeat_n(zero, dims.len() - 1)).collect();
        let row = c.dynamic_slice(sequence, &starts, &sizes, "f32");
        c.reshape(row, &sizes, &dims[1..], "f32")
    };
    let (q_t, k_t, v_t) =
        (at_step(carried[0], &shapes.vector), at_step(carried[1], &shapes.vector), at_step(carried[2], &shapes.value));
    let (g_t, beta_t) = (at_step(carried[3], &shapes.gate), at_step(carried[4], &shapes.gate));
    let [batch, heads, _, value_dim] = shapes.state;
    let decay = c.broadcast_in_dim(c.elementwise("stablehlo.exponential", &[g_t]), &[0, 1], &shapes.state, "f32");
    let s = c.elementwise("stablehlo.multiply", &[carried[6], decay]);
    let read = DotDimensionNumbers {
        lhs_batching: vec![0, 1],
        rhs_batching: vec![0, 1],
        lhs_contracting: vec![2],
        rhs_contracting: vec![2],
    };
    let row_shape = [batch, heads, value_dim];
    let product =
        |lhs, rhs, numbers, shape: &[i64]| c.dot_general_at(lhs, rhs, numbers, shape, "f32", shapes.precision);
    let predicted = product(s, k_t, &read, &row_shape);
    let strength = c.broadcast_in_dim(beta_t, &[0, 1], &row_shape, "f32");
    let u = c.elementwise("stablehlo.multiply", &[strength, c.elementwise("stablehlo.subtract", &[v_t, predicted])]);
    let outer = DotDimensionNumbers { lhs_batching: vec![0, 1], rhs_batching: vec![0, 1], ..Default::default() };
    let s = c.elementwise("stablehlo.add", &[s, product(k_t, u, &outer, &shapes.state)]);
    let o_t = c.dot_general_at(s, q_t, &read, &row_shape, "f32", shapes.readout_precision);
    let row = c.reshape(o_t, &row_shape, &[1, batch, heads, value_dim], "f32");
    let written = c.dynamic_update_slice(carried[7], row, &[t, zero, zero, zero]);
    let next = c.elementwise("stablehlo.add", &[t, c.scalar(1.0, "i32")]);
    vec![carried[0], carried[1], carried[2], carried[3], carried[4], next, s, written]
}
