//! `flywheel-raise-gated-delta` (see [`PASS`]).
//!
//! The loop must count a step from 0 to T, slice each input at the step (`xs[t]`, or
//! `x[:, :, t]`), carry one state `S` [B, H, Dk, Dv] or [H, Dk, Dv] and write one output
//! row per step, and its body must be exactly the gated delta rule (products as
//! `dot_general`s or as summed multiplies, [`Product`]):
//!
//!   S1 = exp(g_t) * S;  u = beta_t * (v_t - S1ᵀ k_t);  S2 = S1 + k_t uᵀ;  o_t = S2ᵀ q_t
//!
//! Axis atoms tie each axis of every slice and of the state to its role; a body that
//! computes anything else (another update rule, a transposed outer product, the readout
//! before the update) fails to tie up and is left alone with a remark.

mod chunked;
mod placed;
mod row_inverse;
mod scan;

use super::reroll;
use crate::{
    analysis::atoms::{Atom, Atoms, Axis},
    analysis::hlo::{covers, materialize, HloBuilder},
    analysis::operands::{
        choose_source, extend_root, miss, operand_chain, pair_all, role_order, Follow, Miss, Operand,
    },
    analysis::product::Product,
    analysis::trace::{
        apply_layout, erase_dead, erase_dead_visiting, follow_layout, for_each_candidate, Node, Through, Traced, Tracer,
    },
    options::Options,
    pass::{external_pass, Anchor, PassId, PassInfo},
};
use flywheel_dialect::float_literal;
use flywheel_dialect::{
    diagnostics::emit_remark,
    ir::{defining_op, op_result},
    layout::{Axis as Role, Layout},
    stablehlo::{BroadcastInDim, DotGeneral, Precision, Reduce, Reducer},
};
use melior::{
    ir::{
        operation::{OperationLike, OperationMutLike, OperationRef, OperationRefMut},
        Value, ValueLike,
    },
    pass::Pass,
};
use scan::{read_scaled_slice, read_scan, read_slice, Body, Loop, Scan};
use std::collections::HashSet;

static PASS_ID: PassId = PassId;

crate::pass_options! {
    pub struct RaiseGatedDeltaOptions {
        /// Remark on each raised recurrence and on why each state-carrying loop was not raised
        remarks: bool = ("remarks", "false"),
        /// The chunk_size attribute of raised ops (a power of two; kernels chunk the sequence by it)
        chunk_size: i64 = ("chunk-size", "64"),
    }
}

pub const PASS: PassInfo = PassInfo {
    name: "flywheel-raise-gated-delta",
    summary: "Raise Gated DeltaNet recurrences (lax.scan) in StableHLO into flywheel.gated_delta",
    description: "Finds Gated DeltaNet written as a recurrence over tokens (`lax.scan`, a `stablehlo.while`), per \
token or in chunks (the WY form with a unit lower triangular solve), and replaces it with `flywheel.gated_delta`. \
The loop must count a step from 0 to T (a `fori_loop` index beside it counts too), slice each input at the step along \
one axis, carry one state S [B, H, Dk, Dv] (or [H, Dk, Dv], a batch of one) and write one output row per step \
(`dynamic_update_slice` or an overwriting `scatter`), and its body must be exactly the gated delta rule: S1 = exp(g_t) \
S; u = beta_t (v_t - S1ᵀ k_t); S2 = S1 + k_t uᵀ; o_t = S2ᵀ q_t, its products as `dot_general`s or as multiplies \
summed by a `reduce`. A body that computes anything else (another update rule, a transposed outer product, the \
readout before the update) is left alone with a remark. A Python loop that tracing unrolled (a chain of row writes, \
one per step) is rolled back into such a loop first, when every step is the same computation, and unrolled again \
unless it raises.",
    options: RaiseGatedDeltaOptions::SPECS,
    create: |text| Ok(create(RaiseGatedDeltaOptions::parse(text)?)),
};

fn create(RaiseGatedDeltaOptions { remarks, chunk_size }: RaiseGatedDeltaOptions) -> Pass {
    external_pass(&PASS, &PASS_ID, Anchor::Module, move |op: OperationRef| {
        if chunk_size <= 0 || chunk_size & (chunk_size - 1) != 0 {
            flywheel_dialect::diagnostics::emit_error(
                op.location(),
                &format!("flywheel-raise-gated-delta: chunk-size must be a power of two, got {chunk_size}"),
            );
            return false;
        }
        raise_gated_delta(op, remarks, chunk_size);
        true
    })
}

/// Raises every Gated DeltaNet recurrence in `module`; returns how many.
pub fn raise_gated_delta(module: OperationRef, remarks: bool, chunk_size: i64) -> usize {
    let tracer = Tracer::new(module);
    let mut raised = 0;
    for_each_candidate(module, "stablehlo.while", |op| {
        let scan = read_scan(&tracer, op)?;
        Some(match match_recurrence(&tracer, op, &scan) {
            Ok(found) => {
                let location = op.location();
                let erased = rewrite(&tracer, op, found, chunk_size);
                if remarks {
                    emit_remark(location, "raised to flywheel.gated_delta");
                }
                raised += 1;
                erased
            }
            Err(Miss(reason)) => {
                if remarks {
                    emit_remark(op.location(), &format!("gated delta recurrence not raised: {reason}"));
                }
                Default::default()
            }
        })
    });
    raised + raise_unrolled(&tracer, module, remarks, chunk_size)
}

/// Raises recurrences written as Python loops, which tracing unrolled: each chain of row
/// writes is rolled back into a loop for the matchers, and unrolled again (the loop
/// erased) unless it raises.
fn raise_unrolled<'c, 'a>(
    tracer: &Tracer<'c, 'a>,
    module: OperationRef<'c, 'a>,
    remarks: bool,
    chunk_size: i64,
) -> usize {
    let mut raised = 0;
    let mut destroyed = HashSet::new();
    for chain in reroll::write_chains(module) {
        if chain.iter().any(|op| destroyed.contains(&(op.to_raw().ptr as usize))) {
            continue;
        }
        let Some(rolled) = reroll::roll(&chain) else { continue };
        let op = rolled.op;
        let found = read_scan(tracer, op)
            .ok_or(Miss("the rolled loop does not count its steps".into()))
            .and_then(|scan| match_recurrence(tracer, op, &scan));
        match found {
            Ok(found) => {
                let (location, unrolled) = (op.location(), rolled.unrolled());
                destroyed.extend(rewrite(tracer, op, found, chunk_size));
                destroyed.extend(erase_dead(tracer, &unrolled));
                if remarks {
                    emit_remark(location, "raised to flywheel.gated_delta (a Python loop, unrolled by tracing)");
                }
                raised += 1;
            }
            Err(Miss(reason)) => {
                if remarks {
                    emit_remark(
                        chain[chain.len() - 1].location(),
                        &format!("gated delta recurrence not raised (a Python loop, unrolled by tracing): {reason}"),
                    );
                }
                rolled.undo();
            }
        }
    }
    raised
}

// ---- the body ------------------------------------------------------------------------

struct Found<'c, 'a> {
    atoms: Atoms,
    state: usize,
    /// Per carried value, its axes (sequences: time first).
    axes: Vec<Vec<Axis>>,
    batch: Vec<Atom>,
    heads: Vec<Atom>,
    pub(crate) time: Vec<Atom>,
    key_dim: Vec<Atom>,
    value_dim: Vec<Atom>,
    operands: [Operand<'c, 'a>; 5],
    initial_state: Option<Value<'c, 'a>>,
    scale: f64,
    layout: Layout,
    root: Value<'c, 'a>,
    root_axes: Vec<Axis>,
    root_element: String,
    matched: Vec<OperationRef<'c, 'a>>,
    chunk: Option<i64>,
    /// The product that reads the state with q.
    readout: OperationRef<'c, 'a>,
}

/// The loop as a whole: which carried value is the state and which the output, and the
/// body as either form of the rule.
fn match_recurrence<'c, 'a>(
    tracer: &Tracer<'c, 'a>,
    op: OperationRef<'c, 'a>,
    scan: &Scan<'c, 'a>,
) -> Result<Found<'c, 'a>, Miss> {
    let carried: Vec<usize> =
        (0..scan.returned.len()).filter(|&i| !scan.step_arguments.contains(&i) && !scan.invariant[i]).collect();
    let [first, second] = carried.as_slice() else {
        return miss("the loop carries more than a state and an output");
    };
    // The output is written one row per step; the state is the other.
    let (output, state, write) = match (scan.written_row(tracer, *first), scan.written_row(tracer, *second)) {
        (Some(write), None) => (*first, *second, write),
        (None, Some(write)) => (*second, *first, write),
        _ => return miss("the loop does not write one output row per step"),
    };

    let mut atoms = Atoms::new();
    let shape = |value: Value| Traced::outer(value).shape().ok_or(Miss("dynamic shapes".into()));
    let mut axes: Vec<Vec<Axis>> = Vec::new();
    for argument in &scan.body_arguments {
        axes.push(atoms.source(&shape(*argument)?));
    }
    if !matches!(axes[state].len(), 3 | 4) {
        return miss("the state is not [batch, heads, key dim, value dim] or [heads, key dim, value dim]");
    }
    if atoms.axis_size(&axes[output][write.time_axis]) != scan.steps {
        return miss("the loop does not run once per output row");
    }

    let loop_view = Loop { op, scan, state, output, write };
    let body = match per_token_body(tracer, &loop_view, &mut atoms, &axes) {
        Ok(body) => body,
        // A row that sums two products is the chunked (WY) form.
        Err(per_token) => match chunked::chunked_body(tracer, &loop_view, &mut atoms, &axes) {
            Some(result) => result?,
            None => return Err(per_token),
        },
    };
    finish(tracer, &loop_view, atoms, axes, body)
}

fn per_token_body<'c, 'a>(
    tracer: &Tracer<'c, 'a>,
    loop_view: &Loop<'_, 'c, 'a>,
    atoms: &mut Atoms,
    axes: &[Vec<Axis>],
) -> Result<Body<'c, 'a>, Miss> {
    let Loop { op, scan, state, output, write } = loop_view;
    let (op, state, output) = (*op, *state, *output);
    // The readout: o_t = S2ᵀ q_t, written at the step.
    let (row_values, row_steps) = follow_layout(tracer, &write.row, Through { converts: false, broadcasts: true });
    let readout = product(tracer, &row_values[0], "the output row is not a product of the state and q")?;
    let (new_state_side, q_side) = state_and_vector(tracer, &readout, scan.returned[state])
        .ok_or(Miss("the output row is not read from the updated state".into()))?;
    let (q, q_scale) = read_scaled_slice(tracer, scan, atoms, axes, &readout.operand(q_side))?;
    let row_axes = contract_state(atoms, &readout, new_state_side, &axes[state], &q.axes)?;
    let written_axes = apply_layout(atoms, &row_axes, &row_steps)?;
    write.line_up(atoms, &written_axes, &axes[output])?;

    // The update: S2 = S1 + k_t uᵀ, u = beta_t (v_t - S1ᵀ k_t), S1 = exp(g_t) S.
    let add = tracer
        .producer_named(&Traced::outer(scan.returned[state]), "stablehlo.add")
        .ok_or(Miss("the state update is not S + k uᵀ".into()))?;
    let decayed_side = (0..2)
        .find(|&side| {
            tracer
                .producer_named(&add.operand(side), "stablehlo.multiply")
                .is_some_and(|m| decays(tracer, scan, &m, state))
        })
        .ok_or(Miss("the state is not decayed by exp(g) before the update".into()))?;
    let decayed = add.operand(decayed_side);
    let decay = tracer.producer(&decayed).expect("checked");
    let gate_side = (0..2).find(|&side| decay.operand(side).value != scan.body_arguments[state]).expect("one side");
    let (gate_values, gate_steps) =
        follow_layout(tracer, &decay.operand(gate_side), Through { converts: false, broadcasts: true });
    let exponential = tracer.producer_named(&gate_values[0], "stablehlo.exponential").expect("checked by decays");
    let g = read_slice(tracer, scan, atoms, axes, &exponential.operand(0))?;
    let gate_axes = apply_layout(atoms, &g.axes, &gate_steps)?;
    pair_all(atoms, &gate_axes, &axes[state])?;

    let outer = product(tracer, &add.operand(1 - decayed_side), "the state update is not S + k uᵀ")?;
    if outer.contracted() != 0 {
        return miss("the state update is not an outer product k uᵀ");
    }
    // k_t is the side sliced from a sequence. A dot_general's result lists its lhs's axes
    // first, so there it must be the lhs; a multiply lines axes up by position.
    let k_side = (0..2)
        .find(|&side| read_slice(tracer, scan, &mut atoms.clone(), axes, &outer.operand(side)).is_ok())
        .ok_or(Miss("an input of the rule is not the step's slice of a sequence".into()))?;
    if k_side == 1 && outer.node.is(DotGeneral::NAME) {
        return miss("the state update is u kᵀ, transposed from the k uᵀ its reads assume");
    }
    let k = read_slice(tracer, scan, atoms, axes, &outer.operand(k_side))?;
    let (written_values, written_steps) =
        follow_layout(tracer, &outer.operand(1 - k_side), Through { converts: false, broadcasts: true });
    let multiply = tracer
        .producer_named(&written_values[0], "stablehlo.multiply")
        .ok_or(Miss("the update is not scaled by beta".into()))?;
    let (beta, difference) = (0..2)
        .find_map(|side| {
            let (values, _) =
                follow_layout(tracer, &multiply.operand(side), Through { converts: false, broadcasts: true });
            values
                .iter()
                .any(|v| scan.sliced(tracer, v).is_some())
                .then(|| (multiply.operand(side), multiply.operand(1 - side)))
        })
        .ok_or(Miss("the update is not scaled by beta".into()))?;
    let subtract = tracer
        .producer_named(&difference, "stablehlo.subtract")
        .ok_or(Miss("the update does not subtract the state's prediction (no delta rule)".into()))?;
    let v = read_slice(tracer, scan, atoms, axes, &subtract.operand(0))?;
    let prediction = product(tracer, &subtract.operand(1), "the delta rule does not subtract Sᵀ k")?;
    let (prediction_state_side, prediction_key_side) = state_and_vector(tracer, &prediction, decayed.value)
        .ok_or(Miss("the prediction is not read from the decayed state".into()))?;
    let k_again = read_slice(tracer, scan, atoms, axes, &prediction.operand(prediction_key_side))?;
    if k_again.sequence != k.sequence {
        return miss("the prediction and the outer product use different keys");
    }
    let prediction_axes = contract_state(atoms, &prediction, prediction_state_side, &axes[state], &k_again.axes)?;
    pair_all(atoms, &prediction_axes, &v.axes)?;
    let beta_slice = read_slice(tracer, scan, atoms, axes, &beta)?;
    pair_all(atoms, &beta_slice.axes, &v.axes)?;
    let u_axes = apply_layout(atoms, &v.axes, &written_steps)?;
    let (lhs, rhs) = if k_side == 0 { (&k.axes, &u_axes) } else { (&u_axes, &k.axes) };
    let outer_axes = outer.axes(atoms, lhs, rhs)?;
    pair_all(atoms, &outer_axes, &axes[state])?;

    let time = axes[output][write.time_axis].clone();
    // Every sequence's time axis is the output's.
    for slice in [&q, &k, &v, &g, &beta_slice] {
        atoms.unify(&axes[slice.sequence][slice.time_axis], &time)?;
    }
    // Roles: the key dim is what k_t and q_t contract with the state; the value dim is v's.
    let leaves =
        |atoms: &Atoms, axes: &[Axis]| -> Vec<Vec<Atom>> { axes.iter().map(|axis| atoms.leaves(axis)).collect() };
    let state_roles = leaves(atoms, &axes[state]);
    let key_dim = atoms.leaves(k.row.last().expect("k has axes"));
    let value_dim = atoms.leaves(v.row.last().expect("v has axes"));
    let batch_like: Vec<Vec<Atom>> =
        state_roles.iter().filter(|r| **r != key_dim && **r != value_dim).cloned().collect();
    let all: Vec<Atom> = state_roles.concat();
    let distinct = all.iter().enumerate().all(|(i, a)| !all[..i].contains(a));
    let rank = axes[state].len();
    if key_dim.is_empty() || value_dim.is_empty() || batch_like.len() != rank - 2 || !distinct || key_dim == value_dim {
        return miss("the body's products do not form the gated delta rule (state, key and value axes do not line up)");
    }
    for (name, slice, expected) in
        [("q", &q, vec![key_dim.clone()]), ("k", &k, vec![key_dim.clone()]), ("v", &v, vec![value_dim.clone()])]
    {
        let slice_leaves = leaves(atoms, &slice.row);
        if slice_leaves.last() != expected.last() || slice_leaves.len() != rank - 1 {
            return miss(format!("{name} does not enter the rule along its last axis"));
        }
    }

    let inputs = [q.sequence, k.sequence, v.sequence, g.sequence, beta_slice.sequence]
        .iter()
        .map(|&sequence| (Traced::outer(op.operand(sequence).expect("carried")), axes[sequence].clone()))
        .collect();
    Ok(Body {
        inputs,
        time,
        key_dim: k.row.last().expect("k has axes").clone(),
        value_dim: v.row.last().expect("v has axes").clone(),
        q_scale,
        chunk: None,
        readout: readout.node.op,
    })
}

/// Ties the body's inputs to their sources outside the loop and reads the op's operands,
/// layout and result.
fn finish<'c, 'a>(
    tracer: &Tracer<'c, 'a>,
    loop_view: &Loop<'_, 'c, 'a>,
    mut atoms: Atoms,
    axes: Vec<Vec<Axis>>,
    body: Body<'c, 'a>,
) -> Result<Found<'c, 'a>, Miss> {
    let Loop { op, state, output, .. } = *loop_view;
    let leaves =
        |atoms: &Atoms, axes: &[Axis]| -> Vec<Vec<Atom>> { axes.iter().map(|axis| atoms.leaves(axis)).collect() };
    let (key_dim, value_dim) = (atoms.leaves(&body.key_dim), atoms.leaves(&body.value_dim));
    let batch_like: Vec<Vec<Atom>> =
        leaves(&atoms, &axes[state]).into_iter().filter(|r| *r != key_dim && *r != value_dim).collect();
    if batch_like.is_empty() || batch_like.len() > 2 {
        return miss("the state is not [batch, heads, key dim, value dim] or [heads, key dim, value dim]");
    }
    // Outside the loop: the sequences' sources, batch and heads told apart by Q's layout.
    let mut chains = Vec::new();
    for (index, (input, input_axes)) in body.inputs.iter().enumerate() {
        // The rule runs in f32 on the inputs' values: widening converts are part of it.
        let chain = operand_chain(tracer, &mut atoms, input, Follow { converts: true, scales: index == 0 })?;
        pair_all(&mut atoms, chain.at_product(), input_axes)?;
        chains.push(chain);
    }
    let q_source_order: Vec<Vec<Atom>> = chains[0].axes[0].iter().map(|axis| atoms.leaves(axis)).collect();
    let position = |role: &Vec<Atom>| q_source_order.iter().position(|axis| axis == role).unwrap_or(usize::MAX);
    // An unbatched state ([heads, key dim, value dim]) has a batch of one.
    let (batch, heads) = match batch_like.as_slice() {
        [heads] => (Vec::new(), heads.clone()),
        [a, b] if position(&atoms.leaves(a)) <= position(&atoms.leaves(b)) => (a.clone(), b.clone()),
        [a, b] => (b.clone(), a.clone()),
        _ => unreachable!("checked above"),
    };
    // Tying in the sources may have merged atoms: read every role afresh.
    let (time, batch, heads) = (atoms.leaves(&body.time), atoms.leaves(&batch), atoms.leaves(&heads));
    let (key_dim, value_dim) = (atoms.leaves(&key_dim), atoms.leaves(&value_dim));
    let dims = [key_dim.clone(), key_dim.clone(), value_dim.clone()];
    let mut operands = Vec::new();
    for (index, chain) in chains.iter().enumerate() {
        let mut groups = vec![batch.clone(), time.clone(), heads.clone()];
        if index < 3 {
            groups.push(dims[index].clone());
        }
        let name = ["q", "k", "v", "g", "beta"][index];
        operands.push(choose_source(&atoms, &groups, chain, name)?);
    }
    let operands: [Operand; 5] = operands.try_into().map_err(|_| Miss("five operands".into()))?;
    let scale = operands[0].scale * body.q_scale;
    // The op holds an f32 scale.
    if scale == 0.0 || !(scale as f32).is_finite() {
        return miss("the scale of q is zero, infinite or past f32's range");
    }
    let q_roles = [
        (Role::Batch, batch.clone()),
        (Role::Sequence, time.clone()),
        (Role::Heads, heads.clone()),
        (Role::HeadDim, key_dim.clone()),
    ];
    // Q's own order of the roles (an unbatched Q's, with the batch of one first), so the
    // operands need no transpose.
    let order = role_order(&atoms, &q_roles, &operands[0]).or_else(|| {
        let unbatched = role_order(&atoms, &q_roles[1..], &operands[0]).filter(|_| batch.is_empty())?;
        Some([vec![Role::Batch], unbatched].concat())
    });
    let layout =
        order.and_then(|order| Layout::from_order([order[0], order[1], order[2], order[3]])).unwrap_or(Layout::BTNH);
    for operand in &operands {
        if !operand.value.is_outer() {
            return miss("an input is computed inside a called function");
        }
    }
    let initial = Traced::outer(op.operand(state).expect("carried"));
    let initial_state = (tracer.splat(&initial) != Some(0.0)).then_some(initial.value);
    if initial.element_type().as_deref() != Some("f32") {
        return miss("the state is not f32");
    }

    let mut matched = vec![op];
    let result: Value = op.result(output).expect("a result").into();
    let (root, root_axes) = extend_root(&mut atoms, result, axes[output].clone(), &mut matched, true)?;
    let root_element = Traced::outer(root).element_type().unwrap_or_default();
    // The op's results must rearrange onto the program's (and the initial state onto the
    // op's): an axis of no role (odd shapes, a size of 0) leaves the program alone.
    let state_roles = [batch.clone(), heads.clone(), key_dim.clone(), value_dim.clone()];
    let output_roles = [batch.clone(), time.clone(), heads.clone(), value_dim.clone()];
    let fits = covers(&atoms, &axes[state], &state_roles)
        && covers(&atoms, &state_roles, &axes[state])
        && covers(&atoms, &output_roles, &root_axes)
        && operands.iter().all(|operand| operand.axes.iter().all(|axis| atoms.axis_size(axis) > 0));
    if !fits {
        return miss("the loop's results do not line up with the op's (an axis of no role)");
    }
    Ok(Found {
        atoms,
        state,
        axes,
        batch,
        heads,
        time,
        key_dim,
        value_dim,
        operands,
        initial_state,
        scale,
        layout,
        root,
        root_axes,
        root_element,
        matched,
        chunk: body.chunk,
        readout: body.readout,
    })
}

/// The product (`dot_general`, or `multiply` summed or not) producing `value`.
fn product<'c, 'a>(tracer: &Tracer<'c, 'a>, value: &Traced<'c, 'a>, reason: &str) -> Result<Product<'c, 'a>, Miss> {
    Product::of(tracer, value).ok_or_else(|| Miss(reason.into()))
}

/// Which operand of `product` is `state` and which the vector.
fn state_and_vector(tracer: &Tracer, product: &Product, state: Value) -> Option<(usize, usize)> {
    (0..2).find(|&side| tracer.resolve(&product.operand(side)).value == state).map(|side| (side, 1 - side))
}

/// Whether `multiply` is `S * broadcast(exp(..))` on the state argument.
fn decays(tracer: &Tracer, scan: &Scan, multiply: &Node, state: usize) -> bool {
    (0..2).any(|side| {
        let (values, _) =
            follow_layout(tracer, &multiply.operand(1 - side), Through { converts: false, broadcasts: true });
        multiply.operand(side).value == scan.body_arguments[state]
            && tracer.producer_named(&values[0], "stablehlo.exponential").is_some()
    })
}

/// The axes of a state product (state on `state_side`, a vector on the other), which
/// contracts exactly one axis.
fn contract_state(
    atoms: &mut Atoms,
    product: &Product,
    state_side: usize,
    state_axes: &[Axis],
    vector_axes: &[Axis],
) -> Result<Vec<Axis>, Miss> {
    if product.contracted() != 1 {
        return miss("a state product contracts more or less than one axis");
    }
    let (lhs, rhs) = if state_side == 0 { (state_axes, vector_axes) } else { (vector_axes, state_axes) };
    product.axes(atoms, lhs, rhs)
}

// ---- rewriting -----------------------------------------------------------------------

/// The precision a recurrence's source asks of a group of its products, gathered op by
/// op: the most precise any of its `dot_general`s asks (one that does not say asks
/// DEFAULT); HIGHEST if it writes a product as a multiply (of two broadcasts, or summed by
/// a `reduce`), which a TPU computes in f32 on its vector unit, if a precision cannot be
/// read, or if it has no product at all.
#[derive(Default)]
struct SourcePrecision(Option<Precision>);

impl SourcePrecision {
    fn visit(&mut self, op: OperationRef) {
        let is = |value: Result<Value, _>, name: &str| {
            value.ok().and_then(defining_op).is_some_and(|op| op.name().as_string_ref().as_str() == Ok(name))
        };
        let asked = if let Some(dot) = DotGeneral::from_operation(op) {
            dot.product_precision().unwrap_or(Precision::Highest)
        } else if (op.name().as_string_ref().as_str() == Ok("stablehlo.multiply")
            && (0..2).all(|side| is(op.operand(side), BroadcastInDim::NAME)))
            || (Reduce::from_operation(op).is_some_and(|reduce| reduce.reducer() == Some(Reducer::Add))
                && is(op.operand(0), "stablehlo.multiply"))
        {
            Precision::Highest
        } else {
            return;
        };
        if self.0.is_none_or(|most| asked.passes() > most.passes()) {
            self.0 = Some(asked);
        }
    }

    fn most(&self) -> Precision {
        self.0.unwrap_or(Precision::Highest)
    }
}

/// Replaces the loop `op` with the op `found` describes; returns the ops destroyed.
fn rewrite<'c, 'a>(
    tracer: &Tracer<'c, 'a>,
    op: OperationRef<'c, 'a>,
    found: Found<'c, 'a>,
    chunk_size: i64,
) -> HashSet<usize> {
    let anchor = op;
    let builder = HloBuilder::before(anchor);
    let Found {
        atoms,
        state,
        axes,
        batch,
        heads,
        time,
        key_dim,
        value_dim,
        operands,
        initial_state,
        scale,
        layout,
        root,
        root_axes,
        root_element,
        matched,
        chunk,
        readout,
    } = found;
    // A chunked program keeps its own chunk length.
    let chunk_size = chunk.unwrap_or(chunk_size);
    let order = layout.order();
    let role = |role: Role, dim: &Vec<Atom>| -> Vec<Atom> {
        match role {
            Role::Batch => batch.clone(),
            Role::Sequence => time.clone(),
            Role::Heads => heads.clone(),
            Role::HeadDim => dim.clone(),
        }
    };
    let dims = [key_dim.clone(), key_dim.clone(), value_dim.clone()];
    let vector_elements: Vec<Option<String>> = operands[..3].iter().map(|o| o.value.element_type()).collect();
    let vectors_alike = vector_elements.iter().all(|element| *element == vector_elements[0]);
    let mut values = Vec::new();
    for (index, operand) in operands.iter().enumerate() {
        let element = operand.value.element_type().expect("a tensor");
        let target: Vec<Axis> = if index < 3 {
            order.iter().map(|&r| role(r, &dims[index])).collect()
        } else {
            order.iter().filter(|&&r| r != Role::HeadDim).map(|&r| role(r, &Vec::new())).collect()
        };
        let value = materialize(&builder, &atoms, operand.value.value, &operand.axes, &element, &target);
        // The gates g and beta are f32 in flywheel.gated_delta; a program that computes them
        // in its model dtype (Qwen3-Next: beta = sigmoid(b) in bf16) has them widened, exactly.
        // So are q, k and v of mixed types (fla's reference: q and k normalized in f32, v
        // from the model's bf16), which the rule computes on in f32.
        let mixed = index < 3 && !vectors_alike;
        let value = if (index >= 3 || mixed) && element != "f32" {
            let shape: Vec<i64> = target.iter().map(|axis| atoms.axis_size(axis)).collect();
            builder.convert(value, &shape, &element, "f32")
        } else {
            value
        };
        values.push(value);
    }
    let state_target = vec![batch.clone(), heads.clone(), key_dim.clone(), value_dim.clone()];
    if let Some(initial) = initial_state {
        values.push(materialize(&builder, &atoms, initial, &axes[state], "f32", &state_target));
    }
    let output_axes: Vec<Axis> = order.iter().map(|&r| role(r, &value_dim)).collect();
    let size = |axes: &[Axis]| -> Vec<i64> { axes.iter().map(|axis| atoms.axis_size(axis)).collect() };
    let attributes = vec![
        ("scale", format!("{} : f32", float_literal(f64::from(scale as f32)))),
        ("chunk_size", format!("{chunk_size} : i64")),
        ("layout", format!("\"{layout}\"")),
    ];
    let (output_shape, state_shape) = (size(&output_axes), size(&state_target));
    let results = builder.op(
        "flywheel.gated_delta",
        &values,
        &[(&output_shape, &root_element), (&state_shape, "f32")],
        &attributes,
    );
    let o = materialize(&builder, &atoms, results[0], &output_axes, &root_element, &root_axes);
    let final_state = materialize(&builder, &atoms, results[1], &state_target, "f32", &axes[state]);
    let state_result: Value = op.result(state).expect("a result").into();
    unsafe {
        mlir_sys::mlirValueReplaceAllUsesOfWith(root.to_raw(), o.to_raw());
        mlir_sys::mlirValueReplaceAllUsesOfWith(state_result.to_raw(), final_state.to_raw());
    }
    // The products asked for are those of the ops the op replaces: the loop's and what
    // only it used (a chunked form's products before its loop); the readout's apart.
    let (mut products, mut readouts) = (SourcePrecision::default(), SourcePrecision::default());
    let readout = readout.to_raw().ptr;
    let erased = erase_dead_visiting(tracer, &matched, |op| {
        if op.to_raw().ptr == readout {
            readouts.visit(op)
        } else {
            products.visit(op)
        }
    });
    // SAFETY: the op just built, which nothing else holds.
    let mut kernel = unsafe { OperationRefMut::from_raw(op_result(results[0]).expect("a result").owner().to_raw()) };
    let (precision, readout_precision) = (products.most(), readouts.most());
    kernel.set_attribute("precision", builder.attribute(&format!("\"{}\"", precision.spelling())));
    if readout_precision != precision {
        kernel.set_attribute("readout_precision", builder.attribute(&format!("\"{}\"", readout_precision.spelling())));
    }
    erased
}
