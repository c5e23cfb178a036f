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
//! which the column j, the masks (evaluated), the solve's flags, the slices.

use super::scan::{read_slice, Body, Loop, Scan};
use crate::{
    analysis::atoms::{Atoms, Axis},
    analysis::operands::{dot_axes, miss, pair_all, same_value, Miss},
    analysis::trace::{apply_layout, follow_layout, layout_step, LayoutStep, Node, Through, Traced, Tracer},
};
use flywheel_dialect::stablehlo::{Compare, ComparisonDirection, DotDimensionNumbers, DotGeneral, Iota};
use melior::ir::{
    attribute::{BoolAttribute, DenseI64ArrayAttribute},
    operation::OperationLike,
};

const LAYOUT: Through = Through { converts: false, broadcasts: true };

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
    let slice = |atoms: &mut Atoms, value: &Traced<'c, 'a>| -> Result<(usize, Vec<Axis>), Miss> {
        match read_slice(tracer, scan, atoms, axes, value)? {
            slice if slice.time_axis == 0 => Ok((slice.sequence, slice.axes)),
            _ => miss("a sequence is not sliced along its first axis"),
        }
    };
    let state_value = scan.body_arguments[state];
    let is_state = |value: &Traced<'c, 'a>| tracer.resolve(value).value == state_value;
    let dot = |value: &Traced<'c, 'a>, what: &str| {
        tracer.producer_named(value, DotGeneral::NAME).ok_or_else(|| Miss(format!("{what} is not a product")))
    };
    let numbers = |node: &Node| {
        DotGeneral::from_operation(node.op).expect("a dot").dimension_numbers().map_err(|e| Miss(e.to_string()))
    };

    // V' = U - W S.
    let (row_values, row_steps) = follow_layout(tracer, &write.row, LAYOUT);
    let output_sum = tracer.producer(&row_values[0]).expect("an add");
    let (inter_side, intra) = (0..2)
        .find_map(|side| {
            let intra = tracer.producer_named(&output_sum.operand(1 - side), DotGeneral::NAME)?;
            (!is_state(&intra.operand(0)) && !is_state(&intra.operand(1))).then_some((side, intra))
        })
        .ok_or(Miss("the output is not e^γ (Q S) + P V'".into()))?;
    let (p_sequence, p_axes) = slice(atoms, &intra.operand(0))?;
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
    let (u_sequence, u_axes) = slice(atoms, &subtract.operand(0))?;
    let w_state = dot(&subtract.operand(1), "W S")?;
    if !is_state(&w_state.operand(1)) {
        return miss("V' does not subtract W S");
    }
    let (w_sequence, w_axes) = slice(atoms, &w_state.operand(0))?;
    let ws_axes = dot_axes(atoms, &w_axes, &axes[state], &numbers(&w_state)?)?;
    pair_all(atoms, &ws_axes, &u_axes)?;
    let intra_axes = dot_axes(atoms, &p_axes, &u_axes, &intra_numbers)?;

    // The inter-chunk term e^γ (Q S).
    let inter = tracer
        .producer_named(&output_sum.operand(inter_side), "stablehlo.multiply")
        .ok_or(Miss("the output's first term is not e^γ (Q S)".into()))?;
    let (gate_side, q_state) = (0..2)
        .find_map(|side| Some((side, tracer.producer_named(&inter.operand(1 - side), DotGeneral::NAME)?)))
        .ok_or(Miss("the output's first term is not e^γ (Q S)".into()))?;
    if !is_state(&q_state.operand(1)) {
        return miss("the output does not read the state with Q");
    }
    let (q_sequence, q_axes) = slice(atoms, &q_state.operand(0))?;
    let qs_axes = dot_axes(atoms, &q_axes, &axes[state], &numbers(&q_state)?)?;
    let (gamma_sequence, gamma_axes) = exponential_of_slice(tracer, atoms, &inter.operand(gate_side), &slice)?;
    pair_all(atoms, &gamma_axes, &qs_axes)?;
    pair_all(atoms, &qs_axes, &intra_axes)?;
    let row_axes = apply_layout(atoms, &intra_axes, &row_steps)?;
    write.line_up(atoms, &row_axes, chunk_axes)?;

    // S = e^{γ_C} S + (e^{γ_C - γ} K)ᵀ V'.
    let state_sum = tracer
        .producer_named(&Traced::outer(scan.returned[state]), "stablehlo.add")
        .ok_or(Miss("the state update is not a sum".into()))?;
    let (decay_side, carry) = (0..2)
        .find_map(|side| {
            let decayed = tracer.producer_named(&state_sum.operand(side), "stablehlo.multiply")?;
            (0..2).find(|&s| is_state(&decayed.operand(s))).map(|s| (side, (decayed, s)))
        })
        .ok_or(Miss("the state is not decayed across the chunk".into()))?;
    let (decayed, state_side) = carry;
    let (end_values, _) = follow_layout(tracer, &decayed.operand(1 - state_side), LAYOUT);
    let end_decay = tracer.producer_named(&end_values[0], "stablehlo.exponential");
    if end_decay.is_none_or(|exponential| last_gate_of(tracer, &exponential.operand(0), gamma_sequence, scan).is_none())
    {
        return miss("the state is not decayed by e^{γ_C}, the chunk's last cumulative gate");
    }
    let write = dot(&state_sum.operand(1 - decay_side), "the state's update")?;
    let write_numbers = numbers(&write)?;
    if write_numbers.lhs_contracting != [2]
        || write_numbers.rhs_contracting != [2]
        || !same_value(&write.operand(1), &new_values)
    {
        return miss("the state's update is not (e^{γ_C - γ} K)ᵀ V'");
    }
    let scaled_keys = tracer
        .producer_named(&write.operand(0), "stablehlo.multiply")
        .ok_or(Miss("the state's update does not decay K to the chunk end".into()))?;
    let (k_sequence, k_axes) = (0..2)
        .find_map(|side| {
            let decay = follow_layout(tracer, &scaled_keys.operand(1 - side), LAYOUT).0[0].clone();
            let exponential = tracer.producer_named(&decay, "stablehlo.exponential")?;
            let difference = tracer.producer_named(&exponential.operand(0), "stablehlo.subtract")?;
            let to_end = last_gate_of(tracer, &difference.operand(0), gamma_sequence, scan).is_some()
                && slice(&mut Atoms::new(), &difference.operand(1)).ok()?.0 == gamma_sequence;
            to_end.then(|| slice(atoms, &scaled_keys.operand(side)).ok()).flatten()
        })
        .ok_or(Miss("the state's update does not decay K by e^{γ_C - γ}".into()))?;
    let write_axes = dot_axes(atoms, &k_axes, &intra_axes, &write_numbers)?;
    pair_all(atoms, &write_axes, &axes[state])?;
    pair_all(atoms, &k_axes, &w_axes)?;

    // Every sequence is sliced at the chunk the output row is written at.
    for sequence in [q_sequence, k_sequence, u_sequence, w_sequence, gamma_sequence, p_sequence] {
        atoms.unify(&axes[sequence][0], &chunk_axes[0])?;
    }

    // Outside the loop: each sequence's definition.
    let init = |sequence: usize| Traced::outer(op.operand(sequence).expect("carried"));
    let (q_chunks, k_chunks) = (init(q_sequence), init(k_sequence));
    let gamma = init(gamma_sequence);
    let g_chunks = cumsum_input(tracer, &gamma)?;
    let (u_init, w_init, p_init) = (init(u_sequence), init(w_sequence), init(p_sequence));
    let inputs = check_precompute(
        tracer,
        axes,
        &PrecomputeInputs {
            q_chunks: &q_chunks,
            k_chunks: &k_chunks,
            gamma: &gamma,
            u: (u_sequence, &u_init),
            w: &w_init,
            p: &p_init,
        },
    )?;
    let (v_chunks, v_axes, beta_chunks, beta_axes) = inputs;
    let chunk_time = [atoms.leaves(&chunk_axes[0]), atoms.leaves(&chunk_axes[3])].concat();
    Ok(Body {
        inputs: vec![
            (q_chunks, axes[q_sequence].clone()),
            (k_chunks, axes[k_sequence].clone()),
            (v_chunks, v_axes),
            (g_chunks, axes[gamma_sequence].clone()),
            (beta_chunks, beta_axes),
        ],
        time: chunk_time,
        key_dim: k_axes.last().expect("k has axes").clone(),
        value_dim: u_axes.last().expect("u has axes").clone(),
        q_scale: 1.0,
        chunk: Some(atoms.axis_size(&chunk_axes[3])),
    })
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
    /// U's sequence (whose axes V and β share) and initial value.
    u: (usize, &'v Traced<'c, 'a>),
    w: &'v Traced<'c, 'a>,
    p: &'v Traced<'c, 'a>,
}

/// Checks U, W (the triangular solve) and P, and returns the chunked V and β with their
/// axes.
#[allow(clippy::type_complexity)]
fn check_precompute<'c, 'a>(
    tracer: &Tracer<'c, 'a>,
    axes: &[Vec<Axis>],
    inputs: &PrecomputeInputs<'_, 'c, 'a>,
) -> Result<(Traced<'c, 'a>, Vec<Axis>, Traced<'c, 'a>, Vec<Axis>), Miss> {
    let PrecomputeInputs { q_chunks, k_chunks, gamma, u, w, p } = inputs;
    // U = X[..., :dv], W = X[..., dv:], X = (I + A)⁻¹ R.
    let (x, u_columns) = columns(tracer, u.1).ok_or(Miss("U is not the first columns of a solve".into()))?;
    let (x_again, w_columns) = columns(tracer, w).ok_or(Miss("W is not the last columns of a solve".into()))?;
    let width = x.shape().and_then(|shape| shape.last().copied()).unwrap_or(0);
    if !same_value(&x, &x_again) || u_columns.0 != 0 || u_columns.1 != w_columns.0 || w_columns.1 != width {
        return miss("U and W are not the two column blocks of one solve");
    }
    let solve = tracer
        .producer_named(&x, "stablehlo.triangular_solve")
        .ok_or(Miss("U and W do not come from a triangular solve".into()))?;
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
            && tracer
                .producer_named(&beta_gate_node.operand(1 - side), "stablehlo.exponential")
                .is_some_and(|e| same_value(&tracer.resolve(&e.operand(0)), &tracer.resolve(gamma)))
    });
    if !is_beta_times_gate {
        return miss("the second block's weight is not β e^γ");
    }

    // I + A with A = strictly_lower(β_i k_i·k_j D_ij); P = lower(q_i·k_j D_ij).
    let matrix = tracer
        .producer_named(&solve.operand(0), "stablehlo.add")
        .ok_or(Miss("the solve's matrix is not I + A".into()))?;
    let a_side = (0..2).find(|&side| {
        let (source, steps) = broadcast_source(tracer, &matrix.operand(1 - side));
        let rank = matrix.result().shape().map_or(0, |shape| shape.len());
        let on_last_two = source
            .shape()
            .and_then(|shape| placement(&steps, &shape))
            .is_some_and(|placed| placed.len() == rank && placed[rank - 2] == Some(0) && placed[rank - 1] == Some(1));
        on_last_two && evaluate(tracer, &source).is_some_and(|identity| strictly_lower_is_zero(&identity))
    });
    let a_side = a_side.ok_or(Miss("the solve's matrix is not I + A".into()))?;
    let a_terms = masked(tracer, &matrix.operand(a_side), |i, j| i > j)
        .ok_or(Miss("A is not masked to its strictly lower triangle".into()))?;
    let a_ok = factors_are(tracer, &a_terms, k_chunks, k_chunks, gamma, Some(&beta));
    if !a_ok {
        return miss("A is not β_i k_i·k_j exp(γ_i - γ_j)");
    }
    let p_terms = masked(tracer, p, |i, j| i >= j).ok_or(Miss("P is not masked to its lower triangle".into()))?;
    if !factors_are(tracer, &p_terms, q_chunks, k_chunks, gamma, None) {
        return miss("P is not q_i·k_j exp(γ_i - γ_j)");
    }

    // β V and β multiply V's and β's [chunks, batch, heads, chunk] positions as U has them.
    let u_axes = &axes[u.0];
    let beta_axes = u_axes[..4].to_vec();
    Ok((v_chunks, u_axes.clone(), beta, beta_axes))
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
        let rank = source.shape()?.len();
        let placed = placement(&steps, &source.shape()?)?;
        let leading = placed.iter().take(rank).enumerate().all(|(i, p)| *p == Some(i))
            && placed[rank..].iter().all(Option::is_none);
        (leading && !steps.is_empty()).then(|| (source, multiply.operand(1 - side)))
    })
}

/// The value `value` broadcasts (through `broadcast_in_dim`s only), and the steps.
fn broadcast_source<'c, 'a>(tracer: &Tracer<'c, 'a>, value: &Traced<'c, 'a>) -> (Traced<'c, 'a>, Vec<LayoutStep>) {
    let mut current = value.clone();
    let mut steps = Vec::new();
    while let Some(node) = tracer.producer_named(&current, "stablehlo.broadcast_in_dim") {
        match layout_step(&node, LAYOUT) {
            Some(step) => steps.push(step),
            None => break,
        }
        current = node.operand(0);
    }
    steps.reverse();
    (current, steps)
}

/// Where each axis of a layout chain's result comes from in its source (`None`: a
/// broadcast axis). Reshapes may only add or drop size-1 axes.
fn placement(steps: &[LayoutStep], source_shape: &[i64]) -> Option<Vec<Option<usize>>> {
    let mut labels: Vec<Option<usize>> = (0..source_shape.len()).map(Some).collect();
    let mut shape = source_shape.to_vec();
    for step in steps {
        match step {
            LayoutStep::Transpose(permutation) => {
                labels = permutation.iter().map(|&p| labels[p as usize]).collect();
                shape = permutation.iter().map(|&p| shape[p as usize]).collect();
            }
            LayoutStep::BroadcastInDim { dimensions, shape: to } => {
                let mut next = vec![None; to.len()];
                for (j, &d) in dimensions.iter().enumerate() {
                    if shape[j] == to[d as usize] {
                        next[d as usize] = labels[j];
                    }
                }
                labels = next;
                shape = to.clone();
            }
            LayoutStep::Reshape(to) => {
                let kept: Vec<Option<usize>> =
                    labels.iter().zip(&shape).filter(|(_, &s)| s != 1).map(|(l, _)| *l).collect();
                if to.iter().filter(|&&s| s != 1).copied().collect::<Vec<_>>()
                    != shape.iter().filter(|&&s| s != 1).copied().collect::<Vec<_>>()
                {
                    return None;
                }
                let mut kept = kept.into_iter();
                labels = to.iter().map(|&s| if s == 1 { None } else { kept.next().flatten() }).collect();
                shape = to.clone();
            }
            LayoutStep::Convert => {}
        }
    }
    Some(labels)
}

/// `where(mask, x, 0)` with the C x C mask placed on the last two axes and `keep(i, j)`
/// true exactly where the mask is: the factors of `x` (a product).
fn masked<'c, 'a>(
    tracer: &Tracer<'c, 'a>,
    value: &Traced<'c, 'a>,
    keep: impl Fn(usize, usize) -> bool,
) -> Option<Vec<Traced<'c, 'a>>> {
    let select = tracer.producer_named(value, "stablehlo.select")?;
    let (fill_values, _) = follow_layout(tracer, &select.operand(2), Through { converts: true, broadcasts: true });
    if tracer.splat(&fill_values[0]) != Some(0.0) {
        return None;
    }
    let (mask_source, steps) = broadcast_source(tracer, &select.operand(0));
    let shape = mask_source.shape()?;
    let rank = select.result().shape()?.len();
    let placed = placement(&steps, &shape)?;
    if shape.len() != 2
        || placed[rank - 2] != Some(0)
        || placed[rank - 1] != Some(1)
        || placed[..rank - 2].iter().any(Option::is_some)
    {
        return None;
    }
    let mask = evaluate(tracer, &mask_source)?;
    let n = shape[0] as usize;
    let exact = (0..n).all(|i| (0..n).all(|j| (mask[i * n + j] != 0.0) == keep(i, j)));
    exact.then(|| product_factors(tracer, &select.operand(1)))
}

/// The factors of a tree of multiplies.
fn product_factors<'c, 'a>(tracer: &Tracer<'c, 'a>, value: &Traced<'c, 'a>) -> Vec<Traced<'c, 'a>> {
    match tracer.producer_named(value, "stablehlo.multiply") {
        Some(node) => [product_factors(tracer, &node.operand(0)), product_factors(tracer, &node.operand(1))].concat(),
        None => vec![value.clone()],
    }
}

/// Whether `factors` are exactly lhs_i·rhs_j, exp(γ_i - γ_j) and (if given) β_i, over
/// [chunks, batch, heads, i, j].
fn factors_are<'c, 'a>(
    tracer: &Tracer<'c, 'a>,
    factors: &[Traced<'c, 'a>],
    lhs: &Traced<'c, 'a>,
    rhs: &Traced<'c, 'a>,
    gamma: &Traced<'c, 'a>,
    row_weight: Option<&Traced<'c, 'a>>,
) -> bool {
    let expected = 2 + usize::from(row_weight.is_some());
    if factors.len() != expected {
        return false;
    }
    let is_products = |f: &Traced<'c, 'a>| {
        tracer.producer_named(f, DotGeneral::NAME).is_some_and(|dot| {
            let numbers = DotGeneral::from_operation(dot.op).and_then(|d| d.dimension_numbers().ok());
            let pairwise = DotDimensionNumbers {
                lhs_batching: vec![0, 1, 2],
                rhs_batching: vec![0, 1, 2],
                lhs_contracting: vec![4],
                rhs_contracting: vec![4],
            };
            numbers == Some(pairwise)
                && same_value(&tracer.resolve(&dot.operand(0)), &tracer.resolve(lhs))
                && same_value(&tracer.resolve(&dot.operand(1)), &tracer.resolve(rhs))
        })
    };
    let is_decay = |f: &Traced<'c, 'a>| decay_matrix(tracer, f, gamma);
    let is_row_weight = |f: &Traced<'c, 'a>| {
        row_weight.is_some_and(|weight| {
            let (source, steps) = broadcast_source(tracer, f);
            let shape = source.shape().unwrap_or_default();
            same_value(&tracer.resolve(&source), &tracer.resolve(weight))
                && placement(&steps, &shape) == Some(vec![Some(0), Some(1), Some(2), Some(3), None])
        })
    };
    let count = |test: &dyn Fn(&Traced<'c, 'a>) -> bool| factors.iter().filter(|f| test(f)).count();
    count(&is_products) == 1 && count(&is_decay) == 1 && (row_weight.is_none() || count(&is_row_weight) == 1)
}

/// `exp(γ_i - γ_j)` over [chunks, batch, heads, i, j].
fn decay_matrix<'c, 'a>(tracer: &Tracer<'c, 'a>, value: &Traced<'c, 'a>, gamma: &Traced<'c, 'a>) -> bool {
    let Some(exponential) = tracer.producer_named(value, "stablehlo.exponential") else { return false };
    let Some(difference) = tracer.producer_named(&exponential.operand(0), "stablehlo.subtract") else { return false };
    let placed = |side: usize| {
        let (source, steps) = broadcast_source(tracer, &difference.operand(side));
        let shape = source.shape()?;
        same_value(&tracer.resolve(&source), &tracer.resolve(gamma)).then(|| placement(&steps, &shape)).flatten()
    };
    placed(0) == Some(vec![Some(0), Some(1), Some(2), Some(3), None])
        && placed(1) == Some(vec![Some(0), Some(1), Some(2), None, Some(3)])
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

/// Evaluates a small 2-D integer or boolean expression of iotas and constants (a mask),
/// row-major; `None` for anything else.
fn evaluate(tracer: &Tracer, value: &Traced) -> Option<Vec<f64>> {
    let shape = value.shape()?;
    let (rows, columns) = match shape.as_slice() {
        [r, c] => (*r as usize, *c as usize),
        _ => return None,
    };
    if rows * columns > 1 << 16 {
        return None;
    }
    if let Some(splat) = tracer.splat(value) {
        return Some(vec![splat; rows * columns]);
    }
    let node = tracer.producer(value)?;
    let both = |f: fn(f64, f64) -> f64| -> Option<Vec<f64>> {
        let (a, b) = (evaluate(tracer, &node.operand(0))?, evaluate(tracer, &node.operand(1))?);
        Some(a.iter().zip(&b).map(|(&x, &y)| f(x, y)).collect())
    };
    match node.name().as_str() {
        Iota::NAME => {
            let dimension = Iota::from_operation(node.op)?.iota_dimension().ok()?;
            Some(
                (0..rows * columns)
                    .map(|k| if dimension == 0 { (k / columns) as f64 } else { (k % columns) as f64 })
                    .collect(),
            )
        }
        "stablehlo.convert" => evaluate(tracer, &node.operand(0)),
        "stablehlo.add" => both(|x, y| x + y),
        "stablehlo.subtract" => both(|x, y| x - y),
        "stablehlo.and" => both(|x, y| f64::from(u8::from(x != 0.0 && y != 0.0))),
        "stablehlo.or" => both(|x, y| f64::from(u8::from(x != 0.0 || y != 0.0))),
        Compare::NAME => {
            let direction = Compare::from_operation(node.op)?.direction().ok()?;
            let test: fn(f64, f64) -> bool = match direction {
                ComparisonDirection::Eq => |x, y| x == y,
                ComparisonDirection::Ne => |x, y| x != y,
                ComparisonDirection::Ge => |x, y| x >= y,
                ComparisonDirection::Gt => |x, y| x > y,
                ComparisonDirection::Le => |x, y| x <= y,
                ComparisonDirection::Lt => |x, y| x < y,
            };
            let (a, b) = (evaluate(tracer, &node.operand(0))?, evaluate(tracer, &node.operand(1))?);
            Some(a.iter().zip(&b).map(|(&x, &y)| f64::from(u8::from(test(x, y)))).collect())
        }
        "stablehlo.select" => {
            let (p, a, b) = (
                evaluate(tracer, &node.operand(0))?,
                evaluate(tracer, &node.operand(1))?,
                evaluate(tracer, &node.operand(2))?,
            );
            Some((0..p.len()).map(|k| if p[k] != 0.0 { a[k] } else { b[k] }).collect())
        }
        _ => None,
    }
}

fn strictly_lower_is_zero(matrix: &[f64]) -> bool {
    let n = (matrix.len() as f64).sqrt() as usize;
    n * n == matrix.len() && (0..n).all(|i| (0..i).all(|j| matrix[i * n + j] == 0.0))
}
