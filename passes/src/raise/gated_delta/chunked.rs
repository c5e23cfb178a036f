//! The chunked (WY) form of Gated DeltaNet, for `flywheel-raise-gated-delta`: the
//! sequence split into chunks of C, and per chunk (i, j positions in it)
//!
//!   γ = cumsum(g)                      D_ij = exp(γ_i - γ_j)
//!   A = strictly_lower(β_i k_i·k_j D_ij)   P = lower(q_i·k_j D_ij)
//!   [U | W] = (I + A)⁻¹ [β v | β e^γ k]   (a unit lower triangular solve)
//!
//! then a scan over chunks carrying the state S:
//!
//!   V' = U - W S;  O = e^γ (Q S) + P V';  S = e^{γ_C} S + (e^{γ_C - γ} K)ᵀ V'
//!
//! which is the per-token recurrence exactly (in exact arithmetic). Every piece is checked
//! where it matters for that identity: which axis of each C x C matrix is the row i and
//! which the column j, the masks (evaluated), the solve's flags, the slices. Real code's
//! spellings are read too (MaxText, torch): U and W as products of solve(I + A, I), β
//! folded into the keys or into the tokens before the chunk split, P computed in the
//! loop, masks before the exponential or by `masked_fill`, a decay matrix sliced per chunk,
//! the inverse computed row by row, roundings between the products.

use super::placed::{
    broadcast_source, is_identity, placed_matrix, placement, product_factors, row_placement, same_places,
    without_converts, LAYOUT,
};
use super::row_inverse::row_by_row_inverse;
use super::scan::{read_slice, Body, Loop, Scan};
use crate::{
    analysis::atoms::{Atoms, Axis},
    analysis::operands::{dot_axes, miss, pair_all, same_value, Miss},
    analysis::trace::{apply_layout, follow_layout, users, Node, Through, Traced, Tracer},
};
use flywheel_dialect::stablehlo::{DotDimensionNumbers, DotGeneral, Transpose};
use melior::ir::{
    attribute::{BoolAttribute, DenseI64ArrayAttribute},
    operation::{OperationLike, OperationRef},
};

/// The chunked form's body, if the loop writes a sum of two products per step (`None`
/// otherwise: then it is not this form at all).
pub(crate) fn chunked_body<'c, 'a>(
    tracer: &Tracer<'c, 'a>,
    loop_view: &Loop<'_, 'c, 'a>,
    atoms: &mut Atoms,
    axes: &[Vec<Axis>],
) -> Option<Result<Body<'c, 'a>, Miss>> {
    let (row_values, _) = follow_layout(tracer, &loop_view.write.row, LAYOUT);
    let add = tracer.producer_named(&row_values[0], "stablehlo.add")?;
    let is_product_term = |value: &Traced| {
        tracer.producer(value).is_some_and(|node| node.is(DotGeneral::NAME) || node.is("stablehlo.multiply"))
    };
    (is_product_term(&add.operand(0)) && is_product_term(&add.operand(1))).then(|| {
        match_chunks(tracer, loop_view, atoms, axes).map_err(|Miss(reason)| Miss(format!("chunked form: {reason}")))
    })
}

fn match_chunks<'c, 'a>(
    tracer: &Tracer<'c, 'a>,
    loop_view: &Loop<'_, 'c, 'a>,
    atoms: &mut Atoms,
    axes: &[Vec<Axis>],
) -> Result<Body<'c, 'a>, Miss> {
    let Loop { op, scan, state, output, ref write } = *loop_view;
    let chunk_axes = &axes[output];
    if chunk_axes.len() != 5 || axes[state].len() != 4 || write.time_axis != 0 {
        return miss("the output is not [chunks, batch, heads, chunk, value dim]");
    }
    let body = ChunkBody { tracer, op, scan, axes, state };

    // V' = U - W S.
    let (row_values, row_steps) = follow_layout(tracer, &write.row, LAYOUT);
    let output_sum = tracer.producer(&row_values[0]).expect("an add");
    let (inter_side, intra) = (0..2)
        .find_map(|side| {
            let intra = tracer.producer_named(&output_sum.operand(1 - side), DotGeneral::NAME)?;
            (!body.is_state(&intra.operand(0)) && !body.is_state(&intra.operand(1))).then_some((side, intra))
        })
        .ok_or(Miss("the output is not e^γ (Q S) + P V'".into()))?;
    // P is a sequence computed before the loop, or computed in it from the step's q, k and
    // γ (MaxText); then its axes are tied to theirs below.
    let (p_sequence, p_axes) = match body.slice(atoms, &intra.operand(0)) {
        Ok((sequence, p_axes)) => (Some(sequence), p_axes),
        Err(_) => (None, atoms.source(&intra.operand(0).shape().ok_or(Miss("dynamic shapes".into()))?)),
    };
    let intra_numbers = numbers(&intra)?;
    // P V' contracts P's column (j) axis with V''s chunk axis; P's row (i) stays.
    if intra_numbers.lhs_contracting != [3]
        || intra_numbers.rhs_contracting != [2]
        || intra_numbers.lhs_batching != [0, 1]
    {
        return miss("P V' does not contract P's columns with V''s positions");
    }
    let new_values = intra.operand(1);
    let subtract = tracer.producer_named(&new_values, "stablehlo.subtract").ok_or(Miss("V' is not U - W S".into()))?;
    let (u_sequence, u_axes) = body.slice(atoms, &subtract.operand(0))?;
    let w_state = product(tracer, &subtract.operand(1), "W S")?;
    if !body.is_state(&w_state.operand(1)) {
        return miss("V' does not subtract W S");
    }
    let (w_sequence, w_axes) = body.slice(atoms, &w_state.operand(0))?;
    let ws_axes = dot_axes(atoms, &w_axes, &axes[state], &numbers(&w_state)?)?;
    pair_all(atoms, &ws_axes, &u_axes)?;
    let intra_axes = dot_axes(atoms, &p_axes, &u_axes, &intra_numbers)?;

    let inter = body.inter_term(atoms, &output_sum.operand(inter_side))?;
    pair_all(atoms, &inter.qs_axes, &intra_axes)?;
    let row_axes = apply_layout(atoms, &intra_axes, &row_steps)?;
    write.line_up(atoms, &row_axes, chunk_axes)?;

    let (k_sequence, k_axes) = body.state_update(atoms, &new_values, inter.gamma_sequence, &intra_axes)?;
    pair_all(atoms, &k_axes, &w_axes)?;

    let gamma_tensor = body.chunk_tensor_of(inter.gamma_sequence);
    let mut decay_sequence = None;
    if p_sequence.is_none() {
        let sequences = (inter.q_sequence, k_sequence, inter.gamma_sequence);
        decay_sequence = body.check_intra_in_loop(&intra.operand(0), sequences, &gamma_tensor.0)?;
        // P's batch axes and rows are Q's, its columns K's positions.
        pair_all(atoms, &p_axes[..2], &inter.q_axes[..2])?;
        atoms.unify(&p_axes[2], &inter.q_axes[2])?;
        atoms.unify(&p_axes[3], &k_axes[2])?;
    }

    // Every sequence is sliced at the chunk the output row is written at.
    let sequences = [inter.q_sequence, k_sequence, u_sequence, w_sequence, inter.gamma_sequence];
    for sequence in sequences.into_iter().chain(p_sequence).chain(decay_sequence) {
        atoms.unify(&axes[sequence][0], &chunk_axes[0])?;
    }
    // A precomputed decay matrix is γ's, position by position.
    if let Some(decay) = decay_sequence {
        let decay_axes = body.chunk_tensor_of(decay).1;
        pair_all(atoms, &decay_axes[..decay_axes.len() - 1], &gamma_tensor.1)?;
    }

    // Outside the loop: each sequence's definition, before the scan's transpose to put the
    // chunks first (if any).
    let (q_chunks, k_chunks, gamma) =
        (body.chunk_tensor_of(inter.q_sequence), body.chunk_tensor_of(k_sequence), gamma_tensor);
    let g_chunks = cumsum_input(tracer, &gamma.0)?;
    let (u_init, w_init) = (body.chunk_tensor_of(u_sequence), body.chunk_tensor_of(w_sequence));
    let p_init = p_sequence.map(|sequence| body.chunk_tensor_of(sequence));
    let inputs = check_precompute(
        tracer,
        &PrecomputeInputs {
            q_chunks: &q_chunks.0,
            k_chunks: &k_chunks.0,
            gamma: &gamma.0,
            u: &u_init,
            w: &w_init.0,
            p: p_init.as_ref().map(|p| &p.0),
        },
    )?;
    // V's axes are U's (and β's their leading four), regrouped into tokens when the
    // weighting comes before the chunk split.
    let v_axes = match inputs.tokens {
        false => u_init.1.clone(),
        true => atoms.reshape(&u_init.1, &inputs.v.shape().ok_or(Miss("dynamic shapes".into()))?)?,
    };
    let beta_axes = v_axes[..v_axes.len() - 1].to_vec();
    let (v_chunks, beta_chunks) = (inputs.v, inputs.beta);
    let chunk_time = [atoms.leaves(&chunk_axes[0]), atoms.leaves(&chunk_axes[3])].concat();
    Ok(Body {
        inputs: vec![q_chunks, k_chunks, (v_chunks, v_axes), (g_chunks, gamma.1), (beta_chunks, beta_axes)],
        time: chunk_time,
        key_dim: k_axes.last().expect("k has axes").clone(),
        value_dim: u_axes.last().expect("u has axes").clone(),
        q_scale: 1.0,
        chunk: Some(atoms.axis_size(&chunk_axes[3])),
        readout: inter.readout,
    })
}

/// A `dot_general` computing `value`; `what` names it in the miss.
fn product<'c, 'a>(tracer: &Tracer<'c, 'a>, value: &Traced<'c, 'a>, what: &str) -> Result<Node<'c, 'a>, Miss> {
    tracer.producer_named(value, DotGeneral::NAME).ok_or_else(|| Miss(format!("{what} is not a product")))
}

fn numbers(node: &Node) -> Result<DotDimensionNumbers, Miss> {
    DotGeneral::from_operation(node.op).expect("a dot").dimension_numbers().map_err(|e| Miss(e.to_string()))
}

/// The chunk scan's body as the matcher reads it.
struct ChunkBody<'v, 'c, 'a> {
    tracer: &'v Tracer<'c, 'a>,
    op: OperationRef<'c, 'a>,
    scan: &'v Scan<'c, 'a>,
    axes: &'v [Vec<Axis>],
    state: usize,
}

/// The inter-chunk term e^γ (Q S): Q's and γ's sequences, Q's axes and Q S's, and the
/// product Q S.
struct InterTerm<'c, 'a> {
    q_sequence: usize,
    q_axes: Vec<Axis>,
    qs_axes: Vec<Axis>,
    gamma_sequence: usize,
    readout: OperationRef<'c, 'a>,
}

impl<'v, 'c, 'a> ChunkBody<'v, 'c, 'a> {
    /// `value` as the step's chunk of a sequence (through float converts): the sequence
    /// and the chunk's axes.
    fn slice(&self, atoms: &mut Atoms, value: &Traced<'c, 'a>) -> Result<(usize, Vec<Axis>), Miss> {
        match read_slice(self.tracer, self.scan, atoms, self.axes, &without_converts(self.tracer, value))? {
            slice if slice.time_axis == 0 => Ok((slice.sequence, slice.axes)),
            _ => miss("a sequence is not sliced along its first axis"),
        }
    }

    fn is_state(&self, value: &Traced<'c, 'a>) -> bool {
        self.tracer.resolve(value).value == self.scan.body_arguments[self.state]
    }

    /// A sequence's chunk tensor outside the loop, with its axes (see [`chunk_tensor`]).
    fn chunk_tensor_of(&self, sequence: usize) -> (Traced<'c, 'a>, Vec<Axis>) {
        let carried = Traced::outer(self.op.operand(sequence).expect("carried"));
        chunk_tensor(self.tracer, &carried, &self.axes[sequence])
    }

    /// The inter-chunk term `value`: e^γ (Q S), or (e^γ Q) S.
    fn inter_term(&self, atoms: &mut Atoms, value: &Traced<'c, 'a>) -> Result<InterTerm<'c, 'a>, Miss> {
        let (tracer, state) = (self.tracer, self.state);
        let slice = |atoms: &mut Atoms, value: &Traced<'c, 'a>| self.slice(atoms, value);
        let not_inter = || Miss("the output's first term is not e^γ (Q S)".into());
        match tracer.producer_named(value, DotGeneral::NAME) {
            Some(q_state) => {
                if !self.is_state(&q_state.operand(1)) {
                    return miss("the output does not read the state with Q");
                }
                let gated = tracer.producer_named(&q_state.operand(0), "stablehlo.multiply").ok_or_else(not_inter)?;
                let gate_side = (0..2)
                    .find(|&side| {
                        exponential_of_slice(tracer, &mut atoms.clone(), &gated.operand(side), &slice).is_ok()
                    })
                    .ok_or_else(not_inter)?;
                let (q_sequence, q_axes) = self.slice(atoms, &gated.operand(1 - gate_side))?;
                let (gamma_sequence, gamma_axes) =
                    exponential_of_slice(tracer, atoms, &gated.operand(gate_side), &slice)?;
                pair_all(atoms, &gamma_axes, &q_axes)?;
                let qs_axes = dot_axes(atoms, &q_axes, &self.axes[state], &numbers(&q_state)?)?;
                Ok(InterTerm { q_sequence, q_axes, qs_axes, gamma_sequence, readout: q_state.op })
            }
            None => {
                let inter = tracer.producer_named(value, "stablehlo.multiply").ok_or_else(not_inter)?;
                let (gate_side, q_state) = (0..2)
                    .find_map(|side| Some((side, tracer.producer_named(&inter.operand(1 - side), DotGeneral::NAME)?)))
                    .ok_or_else(not_inter)?;
                if !self.is_state(&q_state.operand(1)) {
                    return miss("the output does not read the state with Q");
                }
                let (q_sequence, q_axes) = self.slice(atoms, &q_state.operand(0))?;
                let qs_axes = dot_axes(atoms, &q_axes, &self.axes[state], &numbers(&q_state)?)?;
                let (gamma_sequence, gamma_axes) =
                    exponential_of_slice(tracer, atoms, &inter.operand(gate_side), &slice)?;
                pair_all(atoms, &gamma_axes, &qs_axes)?;
                Ok(InterTerm { q_sequence, q_axes, qs_axes, gamma_sequence, readout: q_state.op })
            }
        }
    }

    /// The state's update S = e^{γ_C} S + (e^{γ_C - γ} K)ᵀ V' (V' is `new_values`, with the
    /// output's `intra_axes`): K's sequence and the chunk's axes.
    fn state_update(
        &self,
        atoms: &mut Atoms,
        new_values: &Traced<'c, 'a>,
        gamma_sequence: usize,
        intra_axes: &[Axis],
    ) -> Result<(usize, Vec<Axis>), Miss> {
        let tracer = self.tracer;
        // S = e^{γ_C} S + (e^{γ_C - γ} K)ᵀ V'.
        let state_sum = tracer
            .producer_named(&Traced::outer(self.scan.returned[self.state]), "stablehlo.add")
            .ok_or(Miss("the state update is not a sum".into()))?;
        let (decay_side, carry) = (0..2)
            .find_map(|side| {
                let decayed = tracer.producer_named(&state_sum.operand(side), "stablehlo.multiply")?;
                (0..2).find(|&s| self.is_state(&decayed.operand(s))).map(|s| (side, (decayed, s)))
            })
            .ok_or(Miss("the state is not decayed across the chunk".into()))?;
        let (decayed, state_side) = carry;
        let (end_values, _) = follow_layout(tracer, &decayed.operand(1 - state_side), LAYOUT);
        let end_decay = tracer.producer_named(&end_values[0], "stablehlo.exponential");
        if end_decay.is_none_or(|exponential| {
            last_gate_of(tracer, &exponential.operand(0), gamma_sequence, self.scan).is_none()
        }) {
            return miss("the state is not decayed by e^{γ_C}, the chunk's last cumulative gate");
        }
        let write = product(tracer, &state_sum.operand(1 - decay_side), "the state's update")?;
        let write_numbers = numbers(&write)?;
        // The keys may be transposed (`swapaxes(-1, -2)`) before the product: what it
        // contracts must still be their chunk positions (axis 2 of [batch, heads, chunk, dk]).
        let (key_values, key_steps) =
            follow_layout(tracer, &write.operand(0), Through { converts: false, broadcasts: false });
        let key_places = key_values[0].shape().and_then(|shape| placement(&key_steps, &shape)).unwrap_or_default();
        let contracted: Vec<Option<usize>> =
            write_numbers.lhs_contracting.iter().map(|&d| key_places.get(d as usize).copied().flatten()).collect();
        if contracted != [Some(2)] || write_numbers.rhs_contracting != [2] || !same_value(&write.operand(1), new_values)
        {
            return miss("the state's update is not (e^{γ_C - γ} K)ᵀ V'");
        }
        let scaled_keys = tracer
            .producer_named(&key_values[0], "stablehlo.multiply")
            .ok_or(Miss("the state's update does not decay K to the chunk end".into()))?;
        let (k_sequence, k_axes) = (0..2)
            .find_map(|side| {
                let decay = follow_layout(tracer, &scaled_keys.operand(1 - side), LAYOUT).0[0].clone();
                let exponential = tracer.producer_named(&decay, "stablehlo.exponential")?;
                let difference = tracer.producer_named(&exponential.operand(0), "stablehlo.subtract")?;
                let to_end = last_gate_of(tracer, &difference.operand(0), gamma_sequence, self.scan).is_some()
                    && self.slice(&mut Atoms::new(), &difference.operand(1)).ok()?.0 == gamma_sequence;
                to_end.then(|| self.slice(atoms, &scaled_keys.operand(side)).ok()).flatten()
            })
            .ok_or(Miss("the state's update does not decay K by e^{γ_C - γ}".into()))?;
        let keys_axes = apply_layout(atoms, &k_axes, &key_steps)?;
        let write_axes = dot_axes(atoms, &keys_axes, intra_axes, &write_numbers)?;
        pair_all(atoms, &write_axes, &self.axes[self.state])?;
        Ok((k_sequence, k_axes))
    }

    /// P computed in the loop: lower(q_i·k_j exp(γ_i - γ_j)) from the step's q, k and γ
    /// (`sequences`), its decay maybe a slice of a matrix computed before the loop from the
    /// chunk tensor `gamma_tensor` (torch): that matrix's sequence, if so.
    fn check_intra_in_loop(
        &self,
        p: &Traced<'c, 'a>,
        (q_sequence, k_sequence, gamma_sequence): (usize, usize, usize),
        gamma_tensor: &Traced<'c, 'a>,
    ) -> Result<Option<usize>, Miss> {
        let tracer = self.tracer;
        let is = |sequence: usize| move |value: &Traced<'c, 'a>| self.scan.sliced(tracer, value) == Some((sequence, 0));
        let (is_q, is_k, is_gamma) = (is(q_sequence), is(k_sequence), is(gamma_sequence));
        let lower = |i: usize, j: usize| i >= j;
        // torch computes the decay matrix before the loop and slices it per chunk.
        let is_outer_gamma = |value: &Traced<'c, 'a>| same_value(&tracer.resolve(value), &tracer.resolve(gamma_tensor));
        let decay_of = |value: &Traced<'c, 'a>| -> Option<usize> {
            let Some((sequence, 0)) = self.scan.sliced(tracer, value) else { return None };
            let init = self.chunk_tensor_of(sequence).0;
            decay_matrix(tracer, &init, &is_outer_gamma, &lower).then_some(sequence)
        };
        let is_decay_slice = |value: &Traced<'c, 'a>| decay_of(value).is_some();
        let (p_terms, negated) =
            masked(tracer, p, lower).ok_or(Miss("P is not masked to its lower triangle".into()))?;
        if negated {
            return miss("P has the wrong sign");
        }
        let expected = WeightFactors {
            lhs: &is_q,
            rhs: &is_k,
            gamma: &is_gamma,
            row_weight: None,
            decay_slice: Some(&is_decay_slice),
        };
        if !factors_are(tracer, &p_terms, &expected, &lower) {
            return miss("P is not q_i·k_j exp(γ_i - γ_j)");
        }
        Ok(p_terms.iter().find_map(decay_of))
    }
}

/// `broadcast(exp(γ_t))`: the γ sequence and the broadcast's axes.
fn exponential_of_slice<'c, 'a>(
    tracer: &Tracer<'c, 'a>,
    atoms: &mut Atoms,
    value: &Traced<'c, 'a>,
    slice: &impl Fn(&mut Atoms, &Traced<'c, 'a>) -> Result<(usize, Vec<Axis>), Miss>,
) -> Result<(usize, Vec<Axis>), Miss> {
    let (values, steps) = follow_layout(tracer, value, LAYOUT);
    let exponential =
        tracer.producer_named(&values[0], "stablehlo.exponential").ok_or(Miss("a gate is not exp(γ)".into()))?;
    let (sequence, gate_axes) = slice(atoms, &exponential.operand(0))?;
    Ok((sequence, apply_layout(atoms, &gate_axes, &steps)?))
}

/// `γ[..., C-1:C]`, the chunk's last cumulative gate, as a slice of the γ sequence's step.
fn last_gate_of<'c, 'a>(
    tracer: &Tracer<'c, 'a>,
    value: &Traced<'c, 'a>,
    gamma: usize,
    scan: &Scan<'c, 'a>,
) -> Option<()> {
    let (values, _) = follow_layout(tracer, value, LAYOUT);
    let node = tracer.producer_named(&values[0], "stablehlo.slice")?;
    let input_shape = node.operand(0).shape()?;
    let array = |name: &str| -> Option<Vec<i64>> {
        let array = DenseI64ArrayAttribute::try_from(node.op.attribute(name).ok()?).ok()?;
        (0..array.len()).map(|i| array.element(i).ok()).collect()
    };
    let (start, limit, strides) = (array("start_indices")?, array("limit_indices")?, array("strides")?);
    let rank = input_shape.len();
    let last_only = (0..rank).all(|d| {
        strides[d] == 1
            && if d + 1 == rank {
                start[d] == input_shape[d] - 1 && limit[d] == input_shape[d]
            } else {
                start[d] == 0 && limit[d] == input_shape[d]
            }
    });
    (last_only && scan.sliced(tracer, &node.operand(0)) == Some((gamma, 0))).then_some(())
}

/// What the chunk scan's sequences are defined from, outside the loop.
struct PrecomputeInputs<'v, 'c, 'a> {
    q_chunks: &'v Traced<'c, 'a>,
    k_chunks: &'v Traced<'c, 'a>,
    gamma: &'v Traced<'c, 'a>,
    /// U's chunk tensor and its axes, which V's and β's share.
    u: &'v (Traced<'c, 'a>, Vec<Axis>),
    w: &'v Traced<'c, 'a>,
    /// P, when it is computed before the loop.
    p: Option<&'v Traced<'c, 'a>>,
}

/// V and β as the precompute weights them: in chunks, or as tokens before the chunk split
/// (torch weights the tokens, then splits them).
struct WeightedValues<'c, 'a> {
    v: Traced<'c, 'a>,
    beta: Traced<'c, 'a>,
    tokens: bool,
}

/// A matrix, or its negation when the flag is set (torch's row-by-row inverse starts from
/// L = -A).
type SignedMatrix<'c, 'a> = (Traced<'c, 'a>, bool);

/// Checks U, W (the triangular solve) and P, and returns V and β.
fn check_precompute<'c, 'a>(
    tracer: &Tracer<'c, 'a>,
    inputs: &PrecomputeInputs<'_, 'c, 'a>,
) -> Result<WeightedValues<'c, 'a>, Miss> {
    let PrecomputeInputs { q_chunks, k_chunks, gamma, p, .. } = inputs;
    // A of the inverse (I + A)⁻¹ the precompute solves with (or -A).
    let ((a, a_negated), weighted_values) = match columns(tracer, &inputs.u.0) {
        Some(_) => joint_solve(tracer, inputs)?,
        None => inverse_products(tracer, inputs)?,
    };

    // A = strictly_lower(β_i k_i·k_j D_ij); P = lower(q_i·k_j D_ij).
    let strictly_lower = |i: usize, j: usize| i > j;
    let (a_terms, negated) =
        masked(tracer, &a, strictly_lower).ok_or(Miss("A is not masked to its strictly lower triangle".into()))?;
    if negated != a_negated {
        return miss("A has the wrong sign");
    }
    let same_as = |target: &Traced<'c, 'a>| {
        let target = tracer.resolve(target);
        move |value: &Traced<'c, 'a>| same_value(&tracer.resolve(value), &target)
    };
    let (is_k, is_gamma, is_beta) = (same_as(k_chunks), same_as(gamma), same_as(&weighted_values.beta));
    let expected =
        WeightFactors { lhs: &is_k, rhs: &is_k, gamma: &is_gamma, row_weight: Some(&is_beta), decay_slice: None };
    if !factors_are(tracer, &a_terms, &expected, &strictly_lower) {
        return miss("A is not β_i k_i·k_j exp(γ_i - γ_j)");
    }
    if let Some(p) = p {
        let lower = |i: usize, j: usize| i >= j;
        let (p_terms, negated) =
            masked(tracer, p, lower).ok_or(Miss("P is not masked to its lower triangle".into()))?;
        if negated {
            return miss("P has the wrong sign");
        }
        let is_q = same_as(q_chunks);
        let expected = WeightFactors { lhs: &is_q, rhs: &is_k, gamma: &is_gamma, row_weight: None, decay_slice: None };
        if !factors_are(tracer, &p_terms, &expected, &lower) {
            return miss("P is not q_i·k_j exp(γ_i - γ_j)");
        }
    }

    Ok(weighted_values)
}

/// U and W as the two column blocks of one solve X = (I + A)⁻¹ [β V | β e^γ K]: A, V and
/// β.
fn joint_solve<'c, 'a>(
    tracer: &Tracer<'c, 'a>,
    inputs: &PrecomputeInputs<'_, 'c, 'a>,
) -> Result<(SignedMatrix<'c, 'a>, WeightedValues<'c, 'a>), Miss> {
    let PrecomputeInputs { u: (u, _), w, k_chunks, gamma, .. } = inputs;
    let (x, u_columns) = columns(tracer, u).ok_or(Miss("U is not the first columns of a solve".into()))?;
    let (x_again, w_columns) = columns(tracer, w).ok_or(Miss("W is not the last columns of a solve".into()))?;
    let width = x.shape().and_then(|shape| shape.last().copied()).unwrap_or(0);
    if !same_value(&x, &x_again) || u_columns.0 != 0 || u_columns.1 != w_columns.0 || w_columns.1 != width {
        return miss("U and W are not the two column blocks of one solve");
    }
    let solve = tracer
        .producer_named(&x, "stablehlo.triangular_solve")
        .ok_or(Miss("U and W do not come from a triangular solve".into()))?;

    // R = [β V | β e^γ K].
    let concatenate = tracer
        .producer_named(&solve.operand(1), "stablehlo.concatenate")
        .ok_or(Miss("the solve's right side is not [β V | β e^γ K]".into()))?;
    let rank = x.shape().map_or(0, |shape| shape.len()) as i64;
    let dimension = concatenate.op.attribute("dimension").ok().map(|a| a.to_string());
    if concatenate.operand_count() != 2 || dimension != Some(format!("{} : i64", rank - 1)) {
        return miss("the solve's right side is not two blocks side by side");
    }
    let width_of = |value: &Traced| value.shape().and_then(|shape| shape.last().copied());
    if width_of(&concatenate.operand(0)) != Some(u_columns.1) {
        return miss("the solve's first block is not as wide as U");
    }
    let (beta, v_chunks) =
        weighted(tracer, &concatenate.operand(0)).ok_or(Miss("the first block is not β V".into()))?;
    let (beta_gate, k_again) =
        weighted(tracer, &concatenate.operand(1)).ok_or(Miss("the second block is not β e^γ K".into()))?;
    if !same_value(&k_again, k_chunks) {
        return miss("the second block does not weight K");
    }
    let beta_gate_node = tracer
        .producer_named(&beta_gate, "stablehlo.multiply")
        .ok_or(Miss("the second block's weight is not β e^γ".into()))?;
    let is_beta_times_gate = (0..2).any(|side| {
        same_value(&tracer.resolve(&beta_gate_node.operand(side)), &tracer.resolve(&beta))
            && exponential_of(tracer, &beta_gate_node.operand(1 - side), gamma)
    });
    if !is_beta_times_gate {
        return miss("the second block's weight is not β e^γ");
    }
    Ok(((solved_matrix(tracer, &solve)?, false), WeightedValues { v: v_chunks, beta, tokens: false }))
}

/// A of a unit lower triangular solve with I + A (flags checked).
fn solved_matrix<'c, 'a>(tracer: &Tracer<'c, 'a>, solve: &Node<'c, 'a>) -> Result<Traced<'c, 'a>, Miss> {
    let flag =
        |name: &str| solve.op.attribute(name).ok().and_then(|a| BoolAttribute::try_from(a).ok()).map(|b| b.value());
    let untransposed = solve.op.attribute("transpose_a").is_ok_and(|a| a.to_string().contains("NO_TRANSPOSE"));
    if flag("left_side") != Some(true)
        || flag("lower") != Some(true)
        || flag("unit_diagonal") != Some(true)
        || !untransposed
    {
        return miss("the solve is not a left, lower, unit-diagonal, untransposed triangular solve");
    }
    identity_plus(tracer, &solve.operand(0)).ok_or(Miss("the solve's matrix is not I + A".into()))
}

/// U = T (β V) and W = T (β e^γ K) as two products of one inverse T = (I + A)⁻¹ I, each
/// possibly rounded to the model's dtype and back (MaxText's `jax_chunk_gated_delta_rule`;
/// FlyWheel computes them in f32), β V and β K possibly weighted before the chunk split
/// (torch), the inverse solved or computed row by row: A (or -A), V and β.
fn inverse_products<'c, 'a>(
    tracer: &Tracer<'c, 'a>,
    inputs: &PrecomputeInputs<'_, 'c, 'a>,
) -> Result<(SignedMatrix<'c, 'a>, WeightedValues<'c, 'a>), Miss> {
    let PrecomputeInputs { u: (u, _), w, k_chunks, gamma, .. } = inputs;
    let product = |value: &Traced<'c, 'a>, what: &str| -> Result<(Node<'c, 'a>, Traced<'c, 'a>), Miss> {
        let fail = || Miss(format!("{what} is not a product of the inverse (I + A)⁻¹"));
        let node = tracer.producer_named(&without_converts(tracer, value), DotGeneral::NAME).ok_or_else(fail)?;
        let numbers = DotGeneral::from_operation(node.op).and_then(|d| d.dimension_numbers().ok()).ok_or_else(fail)?;
        let rank = node.result().shape().map_or(0, |shape| shape.len()) as i64;
        let batch: Vec<i64> = (0..rank - 2).collect();
        let rows_by_columns = numbers.lhs_batching == batch
            && numbers.rhs_batching == batch
            && numbers.lhs_contracting == [rank - 1]
            && numbers.rhs_contracting == [rank - 2];
        rows_by_columns.then(|| (node.clone(), without_converts(tracer, &node.operand(1)))).ok_or_else(fail)
    };
    let (u_product, u_right) = product(u, "U")?;
    let (w_product, w_right) = product(w, "W")?;
    if !same_value(&tracer.resolve(&u_product.operand(0)), &tracer.resolve(&w_product.operand(0))) {
        return miss("U and W are not products of one inverse");
    }
    let inverse = u_product.operand(0);
    let a = match tracer.producer_named(&inverse, "stablehlo.triangular_solve") {
        Some(solve) => {
            let identity = placed_matrix(tracer, &solve.operand(1)).is_some_and(|matrix| is_identity(&matrix));
            if !identity {
                return miss("the inverse does not solve for the identity");
            }
            (solved_matrix(tracer, &solve)?, false)
        }
        None => {
            let negated_a = row_by_row_inverse(tracer, &inverse)
                .ok_or(Miss("U and W do not come from a triangular solve or a row-by-row inverse".into()))?;
            (negated_a, true)
        }
    };
    let weighted_values = match weighted(tracer, &u_right) {
        Some((beta, v)) => WeightedValues { v, beta, tokens: false },
        None => {
            let (beta, v) = weighted_tokens(tracer, &u_right).ok_or(Miss("U's right side is not β V".into()))?;
            WeightedValues { v, beta, tokens: true }
        }
    };
    // W's right side: K, β and e^γ multiplied, in any grouping (β K maybe before the split).
    let is_row = |factor: &Traced<'c, 'a>, test: &dyn Fn(&Traced<'c, 'a>) -> bool| {
        let (source, steps) = broadcast_source(tracer, factor);
        test(&source) && row_placement(&steps, &source).is_some_and(|leading| leading)
    };
    let is_beta = |value: &Traced<'c, 'a>| same_value(&tracer.resolve(value), &tracer.resolve(&weighted_values.beta));
    let is_gate = |value: &Traced<'c, 'a>| exponential_of(tracer, value, gamma);
    let is_k = |value: &Traced<'c, 'a>| same_value(&tracer.resolve(value), &tracer.resolve(k_chunks));
    let (mut keys, mut betas, mut gates) = (0, 0, 0);
    let (factors, negated) = product_factors(tracer, &w_right);
    if negated {
        return miss("W's right side is negated");
    }
    for factor in factors {
        if is_k(&factor) {
            keys += 1;
        } else if is_row(&factor, &is_beta) {
            betas += 1;
        } else if is_row(&factor, &is_gate) {
            gates += 1;
        } else if weighted_tokens(tracer, &factor)
            .is_some_and(|(weight, x)| is_beta(&weight) && split_accepted(tracer, &x, &factor, &is_k))
        {
            (keys, betas) = (keys + 1, betas + 1);
        } else {
            return miss("W's right side is not β e^γ K");
        }
    }
    if (keys, betas, gates) != (1, 1, 1) {
        return miss("W's right side is not β e^γ K");
    }
    Ok((a, weighted_values))
}

/// `A` of a solve's matrix `I + A`, or `I - (-A)` as torch writes it. The solve reads only
/// the strictly lower triangle (unit diagonal, lower), so "I" is any matrix zero there.
fn identity_plus<'c, 'a>(tracer: &Tracer<'c, 'a>, matrix: &Traced<'c, 'a>) -> Option<Traced<'c, 'a>> {
    let is_identity =
        |value: &Traced<'c, 'a>| placed_matrix(tracer, value).is_some_and(|identity| strictly_lower_is_zero(&identity));
    if let Some(sum) = tracer.producer_named(matrix, "stablehlo.add") {
        return (0..2).find(|&side| is_identity(&sum.operand(1 - side))).map(|side| sum.operand(side));
    }
    let difference = tracer.producer_named(matrix, "stablehlo.subtract")?;
    let negated = tracer.producer_named(&difference.operand(1), "stablehlo.negate")?;
    is_identity(&difference.operand(0)).then(|| negated.operand(0))
}

/// `reshape(β x)` with β weighting x's tokens, before they are split into chunks: `(β, x)`.
fn weighted_tokens<'c, 'a>(
    tracer: &Tracer<'c, 'a>,
    value: &Traced<'c, 'a>,
) -> Option<(Traced<'c, 'a>, Traced<'c, 'a>)> {
    let split = tracer.producer_named(value, "stablehlo.reshape")?;
    weighted(tracer, &split.operand(0))
}

/// Whether the program splits `x` as `like` is split (a reshape of `x` to `like`'s shape)
/// into a value `accept` takes.
fn split_accepted<'c, 'a>(
    tracer: &Tracer<'c, 'a>,
    x: &Traced<'c, 'a>,
    like: &Traced<'c, 'a>,
    accept: Reads<'_, 'c, 'a>,
) -> bool {
    let x = tracer.resolve(x);
    users(x.value).into_iter().any(|user| {
        let Ok(result) = user.result(0) else { return false };
        let split = Traced { value: result.into(), calls: x.calls.clone() };
        user.name().as_string_ref().as_str() == Ok("stablehlo.reshape")
            && split.shape() == like.shape()
            && accept(&split)
    })
}

/// Whether `value` is `exp(γ)`.
fn exponential_of<'c, 'a>(tracer: &Tracer<'c, 'a>, value: &Traced<'c, 'a>, gamma: &Traced<'c, 'a>) -> bool {
    tracer
        .producer_named(value, "stablehlo.exponential")
        .is_some_and(|e| same_value(&tracer.resolve(&e.operand(0)), &tracer.resolve(gamma)))
}

/// A scan sequence as the chunk tensor it transposes (the chunks moved among the leading,
/// batch-like axes: MaxText's `transpose(1, 0, 2, ...)`), with that tensor's axes; the
/// sequence itself otherwise.
fn chunk_tensor<'c, 'a>(tracer: &Tracer<'c, 'a>, init: &Traced<'c, 'a>, axes: &[Axis]) -> (Traced<'c, 'a>, Vec<Axis>) {
    let permutation = tracer
        .producer_named(init, Transpose::NAME)
        .and_then(|node| Some((Transpose::from_operation(node.op)?.permutation().ok()?, node.operand(0))));
    match permutation {
        Some((permutation, source)) if permutation.iter().enumerate().skip(3).all(|(i, &p)| p as usize == i) => {
            let mut source_axes = vec![Vec::new(); axes.len()];
            for (axis, &from) in permutation.iter().enumerate() {
                source_axes[from as usize] = axes[axis].clone();
            }
            (source, source_axes)
        }
        _ => (init.clone(), axes.to_vec()),
    }
}

/// `x[..., a:b]` of a `stablehlo.slice` taking whole extents elsewhere: `x` and `(a, b)`.
fn columns<'c, 'a>(tracer: &Tracer<'c, 'a>, value: &Traced<'c, 'a>) -> Option<(Traced<'c, 'a>, (i64, i64))> {
    let node = tracer.producer_named(value, "stablehlo.slice")?;
    let shape = node.operand(0).shape()?;
    let array = |name: &str| -> Option<Vec<i64>> {
        let array = DenseI64ArrayAttribute::try_from(node.op.attribute(name).ok()?).ok()?;
        (0..array.len()).map(|i| array.element(i).ok()).collect()
    };
    let (start, limit, strides) = (array("start_indices")?, array("limit_indices")?, array("strides")?);
    let last = shape.len() - 1;
    let whole = (0..last).all(|d| start[d] == 0 && limit[d] == shape[d] && strides[d] == 1);
    (whole && strides[last] == 1).then(|| (node.operand(0), (start[last], limit[last])))
}

/// `broadcast(w) * x` where `w` has x's leading axes (a per-position weight): `(w, x)`.
fn weighted<'c, 'a>(tracer: &Tracer<'c, 'a>, value: &Traced<'c, 'a>) -> Option<(Traced<'c, 'a>, Traced<'c, 'a>)> {
    let multiply = tracer.producer_named(value, "stablehlo.multiply")?;
    (0..2).find_map(|side| {
        let (source, steps) = broadcast_source(tracer, &multiply.operand(side));
        (!steps.is_empty() && row_placement(&steps, &source)?).then(|| (source, multiply.operand(1 - side)))
    })
}

/// `where(mask, x, 0)`, or `where(mask, 0, x)` (torch's `masked_fill(mask, 0)`), with the
/// C x C mask placed on the last two axes and `keep(i, j)` true exactly where `x` is
/// kept, maybe negated: the factors of `x` (a product), and whether the whole is negated.
fn masked<'c, 'a>(
    tracer: &Tracer<'c, 'a>,
    value: &Traced<'c, 'a>,
    keep: impl Fn(usize, usize) -> bool,
) -> Option<(Vec<Traced<'c, 'a>>, bool)> {
    if let Some(negate) = tracer.producer_named(value, "stablehlo.negate") {
        return masked(tracer, &negate.operand(0), keep).map(|(factors, negated)| (factors, !negated));
    }
    let select = tracer.producer_named(value, "stablehlo.select")?;
    let (kept_side, kept) = zero_select(tracer, &select)?;
    covers(&kept, &keep, true).then(|| product_factors(tracer, &select.operand(kept_side)))
}

/// `where(mask, x, 0)` or `where(mask, 0, x)` with a C x C mask on the last two axes:
/// which operand is `x`, and where it is kept (1) or zeroed (0), row-major.
fn zero_select(tracer: &Tracer, select: &Node) -> Option<(usize, Vec<f64>)> {
    let is_zero = |side: usize| {
        let (values, _) = follow_layout(tracer, &select.operand(side), Through { converts: true, broadcasts: true });
        tracer.splat(&values[0]) == Some(0.0)
    };
    let kept_side = match (is_zero(1), is_zero(2)) {
        (false, true) => 1,
        (true, false) => 2,
        _ => return None,
    };
    let mask = placed_matrix(tracer, &select.operand(0))?;
    let kept = mask.iter().map(|&m| f64::from(u8::from((m != 0.0) == (kept_side == 1)))).collect();
    Some((kept_side, kept))
}

/// Whether a C x C matrix of kept positions (non-zero) keeps everything `keep` keeps, and,
/// if `exact`, nothing else.
fn covers(kept: &[f64], keep: &dyn Fn(usize, usize) -> bool, exact: bool) -> bool {
    let n = (kept.len() as f64).sqrt() as usize;
    (0..n).all(|i| {
        (0..n).all(|j| match (kept[i * n + j] != 0.0, keep(i, j)) {
            (false, true) => false,
            (true, false) => !exact,
            _ => true,
        })
    })
}

/// A test of which value a factor reads.
type Reads<'p, 'c, 'a> = &'p dyn Fn(&Traced<'c, 'a>) -> bool;

/// What the factors of a C x C weight matrix over [..., i, j] must read: the pairwise
/// product's two sides, the cumulative gates of exp(γ_i - γ_j) and, if any, a per-row
/// weight β_i (which MaxText folds into the product's left side, (β k)_i·k_j).
struct WeightFactors<'p, 'c, 'a> {
    lhs: Reads<'p, 'c, 'a>,
    rhs: Reads<'p, 'c, 'a>,
    gamma: Reads<'p, 'c, 'a>,
    row_weight: Option<Reads<'p, 'c, 'a>>,
    /// A factor that is the decay matrix itself, computed before the loop and sliced.
    decay_slice: Option<Reads<'p, 'c, 'a>>,
}

/// Whether `factors` are exactly lhs_i·rhs_j, exp(γ_i - γ_j) and the row weight, where
/// `keep` says which (i, j) the matrix keeps.
fn factors_are<'c, 'a>(
    tracer: &Tracer<'c, 'a>,
    factors: &[Traced<'c, 'a>],
    expected: &WeightFactors<'_, 'c, 'a>,
    keep: &dyn Fn(usize, usize) -> bool,
) -> bool {
    let (mut products, mut decays, mut weights, mut weight_in_product) = (0, 0, 0, false);
    for factor in factors {
        if let Some(weighted_lhs) = pairwise(tracer, factor, expected) {
            products += 1;
            weight_in_product |= weighted_lhs;
        } else if decay_matrix(tracer, factor, expected.gamma, keep)
            || expected.decay_slice.is_some_and(|test| test(factor))
        {
            decays += 1;
        } else if expected.row_weight.is_some_and(|test| {
            let (source, steps) = broadcast_source(tracer, factor);
            test(&source) && row_placement(&steps, &source) == Some(true)
        }) {
            weights += 1;
        } else {
            return false;
        }
    }
    let separate_weight = usize::from(expected.row_weight.is_some() && !weight_in_product);
    products == 1 && decays == 1 && weights == separate_weight
}

/// Whether `value` is the pairwise product lhs_i·rhs_j over [batch..., i, j]: each side a
/// layout of a [batch..., C, D] tensor, batched over the leading axes in order and
/// contracting D. `Some(true)` when the left side is the row-weighted `β lhs`.
fn pairwise<'c, 'a>(
    tracer: &Tracer<'c, 'a>,
    value: &Traced<'c, 'a>,
    expected: &WeightFactors<'_, 'c, 'a>,
) -> Option<bool> {
    let dot = tracer.producer_named(value, DotGeneral::NAME)?;
    let numbers = DotGeneral::from_operation(dot.op)?.dimension_numbers().ok()?;
    let rank = dot.result().shape()?.len();
    // Where an operand's axes come from in the nearest value along its layout chain that
    // `reads` accepts.
    let places = |operand: &Traced<'c, 'a>, reads: &dyn Fn(&Traced<'c, 'a>) -> bool| {
        let (values, steps) = follow_layout(tracer, operand, Through { converts: true, broadcasts: false });
        let nearest = (0..values.len()).rev().find(|&i| reads(&values[i]))?;
        placement(&steps[nearest..], &values[nearest].shape()?)
    };
    let side_is = |side: usize, places: &[Option<usize>], batching: &[i64], contracting: &[i64]| {
        let sizes = dot.operand(side).shape().unwrap_or_default();
        let at = |dims: &[i64]| -> (Vec<Option<usize>>, Vec<i64>) {
            dims.iter().map(|&d| (places[d as usize], sizes[d as usize])).unzip()
        };
        let free: Vec<i64> = (0..rank as i64).filter(|d| !batching.contains(d) && !contracting.contains(d)).collect();
        let is = |dims: &[i64], want: &[Option<usize>]| {
            let (got, sizes) = at(dims);
            same_places(&got, want, &sizes)
        };
        places.len() == rank
            && sizes.len() == rank
            && is(batching, &(0..rank - 2).map(Some).collect::<Vec<_>>())
            && is(contracting, &[Some(rank - 1)])
            && is(&free, &[Some(rank - 2)])
    };
    let weighted_lhs = |candidate: &Traced<'c, 'a>| {
        expected.row_weight.is_some_and(|is_weight| {
            weighted(tracer, candidate).is_some_and(|(weight, x)| is_weight(&weight) && (expected.lhs)(&x))
                || weighted_tokens(tracer, candidate).is_some_and(|(weight, x)| {
                    is_weight(&weight) && split_accepted(tracer, &x, candidate, expected.lhs)
                })
        })
    };
    let (lhs_places, row_weighted) = match places(&dot.operand(0), expected.lhs) {
        Some(places) => (places, false),
        None => (places(&dot.operand(0), &weighted_lhs)?, true),
    };
    let rhs_places = places(&dot.operand(1), expected.rhs)?;
    (side_is(0, &lhs_places, &numbers.lhs_batching, &numbers.lhs_contracting)
        && side_is(1, &rhs_places, &numbers.rhs_batching, &numbers.rhs_contracting))
    .then_some(row_weighted)
}

/// `exp(γ_i - γ_j)` over [batch..., i, j], or MaxText's `exp(where(mask, γ_i - γ_j, fill))`
/// with a mask that keeps at least what `keep` keeps (the same matrix there).
fn decay_matrix<'c, 'a>(
    tracer: &Tracer<'c, 'a>,
    value: &Traced<'c, 'a>,
    is_gamma: Reads<'_, 'c, 'a>,
    keep: &dyn Fn(usize, usize) -> bool,
) -> bool {
    // Masked after the exponential too (torch's `tril(exp(tril(γ_i - γ_j)))`), by a mask
    // that keeps at least what `keep` keeps.
    let mut value = value.clone();
    while let Some(select) = tracer.producer_named(&value, "stablehlo.select") {
        let Some((kept_side, kept)) = zero_select(tracer, &select) else { return false };
        if !covers(&kept, keep, false) {
            return false;
        }
        value = select.operand(kept_side);
    }
    let Some(exponential) = tracer.producer_named(&value, "stablehlo.exponential") else { return false };
    let mut exponent = exponential.operand(0);
    if let Some(select) = tracer.producer_named(&exponent, "stablehlo.select") {
        let Some(mask) = placed_matrix(tracer, &select.operand(0)) else { return false };
        if !covers(&mask, keep, false) {
            return false;
        }
        exponent = select.operand(1);
    }
    let Some(difference) = tracer.producer_named(&exponent, "stablehlo.subtract") else { return false };
    let Some(rank) = difference.result().shape().map(|shape| shape.len()) else { return false };
    let placed_as = |side: usize, want: &[Option<usize>]| {
        let (source, steps) = broadcast_source(tracer, &difference.operand(side));
        let sizes = difference.operand(side).shape().unwrap_or_default();
        is_gamma(&source)
            && source
                .shape()
                .and_then(|shape| placement(&steps, &shape))
                .is_some_and(|got| same_places(&got, want, &sizes))
    };
    let leading: Vec<Option<usize>> = (0..rank - 1).map(Some).collect();
    let rows = [leading.clone(), vec![None]].concat();
    let columns = [leading[..rank - 2].to_vec(), vec![None, Some(rank - 2)]].concat();
    placed_as(0, &rows) && placed_as(1, &columns)
}

/// The input of `γ = cumsum(g)` along the chunk axis (the last), as `lax.cumsum` lowers
/// it: a `reduce_window` add with a window over the whole chunk, padded before.
fn cumsum_input<'c, 'a>(tracer: &Tracer<'c, 'a>, gamma: &Traced<'c, 'a>) -> Result<Traced<'c, 'a>, Miss> {
    let fail = || Miss("γ is not the cumulative sum of g over each chunk".into());
    let window = tracer.producer_named(gamma, "stablehlo.reduce_window").ok_or_else(fail)?;
    let shape = window.operand(0).shape().ok_or_else(fail)?;
    let rank = shape.len();
    let chunk = shape[rank - 1];
    let array = |name: &str| -> Option<Vec<i64>> {
        let array = DenseI64ArrayAttribute::try_from(window.op.attribute(name).ok()?).ok()?;
        (0..array.len()).map(|i| array.element(i).ok()).collect()
    };
    let ones = vec![1; rank];
    let mut dimensions = ones.clone();
    dimensions[rank - 1] = chunk;
    let mut padding: Vec<String> = vec!["[0, 0]".into(); rank];
    padding[rank - 1] = format!("[{}, 0]", chunk - 1);
    let padding_text = format!("dense<[{}]> : tensor<{rank}x2xi64>", padding.join(", "));
    let optional_ones = |name: &str| array(name).is_none_or(|values| values == ones);
    let body_adds = window
        .op
        .region(0)
        .ok()
        .and_then(|region| melior::ir::RegionLike::first_block(&region))
        .and_then(|block| melior::ir::BlockLike::first_operation(&block))
        .is_some_and(|op| op.name().as_string_ref().as_str() == Ok("stablehlo.add"));
    let ok = array("window_dimensions") == Some(dimensions)
        && array("window_strides") == Some(ones.clone())
        && optional_ones("base_dilations")
        && optional_ones("window_dilations")
        && window.op.attribute("padding").is_ok_and(|p| p.to_string() == padding_text)
        && tracer.splat(&window.operand(1)) == Some(0.0)
        && window.operand_count() == 2
        && body_adds;
    ok.then(|| window.operand(0)).ok_or_else(fail)
}

fn strictly_lower_is_zero(matrix: &[f64]) -> bool {
    let n = (matrix.len() as f64).sqrt() as usize;
    n * n == matrix.len() && (0..n).all(|i| (0..i).all(|j| matrix[i * n + j] == 0.0))
}
