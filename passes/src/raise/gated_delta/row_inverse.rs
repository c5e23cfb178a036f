//! The inverse (I + A)⁻¹ of the chunked form computed row by row (forward substitution),
//! as torch's and MaxText's reference code write it instead of a triangular solve.

use super::placed::{
    broadcast_source, constant_vector, is_identity, placed_mask, placed_matrix, placement, product_factors,
    same_places, static_slice, Binding,
};
use super::scan::read_scan;
use crate::analysis::{
    operands::same_value,
    product::Product,
    trace::{follow_layout, Through, Traced, Tracer},
};
use flywheel_dialect::stablehlo::Scatter;
use melior::ir::{operation::OperationLike, Value};

/// L = -A of `(I + A)⁻¹` computed row by row, as torch's `torch_chunk_gated_delta_rule`
/// does: M = L, then for i = 1 .. C-1 in turn
/// `M[..., i, :i] = row + (row[..., None] * M[..., :i, :i]).sum(-2)` with
/// `row = M[..., i, :i]`, and the inverse `M + I`; the steps unrolled (each checked at its
/// row) or a `fori_loop` (MaxText's naive rule: `fori_row_inverse`).
pub(super) fn row_by_row_inverse<'c, 'a>(tracer: &Tracer<'c, 'a>, inverse: &Traced<'c, 'a>) -> Option<Traced<'c, 'a>> {
    let sum = tracer.producer_named(inverse, "stablehlo.add")?;
    let identity_side =
        (0..2).find(|&side| placed_matrix(tracer, &sum.operand(side)).is_some_and(|m| is_identity(&m)))?;
    let shape = inverse.shape()?;
    let rank = shape.len();
    let n = shape[rank - 1] as usize;
    let mut matrix = sum.operand(1 - identity_side);
    if tracer.producer_named(&matrix, "stablehlo.while").is_some() {
        return fori_row_inverse(tracer, &matrix, n);
    }
    for i in (1..n).rev() {
        matrix = row_step(tracer, &matrix, i, &shape)?;
    }
    Some(matrix)
}

/// The matrix a `fori_loop` over the rows starts from, if the loop computes the row-by-row
/// inverse: for i = 1 .. n-1 (or from 0: row 0 is left as it is)
///
///   row = M[..., i, :] * (c < i);  sub = M * (r < i & c < i)
///   M[..., i, :] = where(c < i, row + (row[..., None] * sub).sum(-2), M[..., i, :])
///
/// (MaxText's `naive_jax_chunk_gated_delta_rule`), torch's step on the columns c < i. The
/// masks (any product of them, in any spelling) are evaluated at every i.
fn fori_row_inverse<'c, 'a>(tracer: &Tracer<'c, 'a>, value: &Traced<'c, 'a>, n: usize) -> Option<Traced<'c, 'a>> {
    let node = tracer.producer_named(value, "stablehlo.while")?;
    let carried =
        (0..node.op.result_count()).find(|&k| node.op.result(k).ok().map(Value::from) == Some(value.value))?;
    let scan = read_scan(tracer, node.op)?;
    let rank = value.shape()?.len();
    let (row_axis, column_axis) = (rank - 2, rank - 1);
    // The row index: a carried index from `start` with `start + steps == n`.
    let (index, start) =
        scan.indices.iter().copied().find(|&(_, start)| (0..=1).contains(&start) && start + scan.steps == n as i64)?;
    let write = scan.written_row_at(tracer, carried, start)?;
    if write.time_axis != row_axis || write.unit_axis {
        return None;
    }
    let matrix = scan.body_arguments[carried];
    let is_row = |value: &Traced<'c, 'a>| scan.indexed(tracer, value, start) == Some((carried, row_axis));
    let is_matrix = |value: &Traced<'c, 'a>| tracer.resolve(value).value == matrix;

    // where(keep, updated, M[..., i, :]), or with the sides swapped and the mask inverted.
    let select = tracer.producer_named(&write.row, "stablehlo.select")?;
    let (updated_side, kept_when) = match (is_row(&select.operand(2)), is_row(&select.operand(1))) {
        (true, false) => (1, 1.0),
        (false, true) => (2, 0.0),
        _ => return None,
    };
    let updated = tracer.producer_named(&select.operand(updated_side), "stablehlo.add")?;
    let keep = select.operand(0);

    // updated = row + (row[..., None] * sub).sum(-2).
    let broadcast_row: Vec<Option<usize>> = (0..column_axis).map(Some).chain([None]).collect();
    let (row, sub) = (0..2).find_map(|side| {
        let row = updated.operand(side);
        let product = Product::of(tracer, &updated.operand(1 - side))?;
        if product.contracted() != 1 || product.summed_axes() != [row_axis] {
            return None;
        }
        let row_side = (0..2).find(|&s| {
            let (source, steps) = broadcast_source(tracer, &product.operand(s));
            let sizes = product.operand(s).shape().unwrap_or_default();
            same_value(&tracer.resolve(&source), &tracer.resolve(&row))
                && source
                    .shape()
                    .and_then(|shape| placement(&steps, &shape))
                    .is_some_and(|placed| same_places(&placed, &broadcast_row, &sizes))
        })?;
        Some((row, product.operand(1 - row_side)))
    })?;
    // row = M[..., i, :] times 1-D masks; sub = M times 2-D masks.
    let (row_factors, row_negated) = product_factors(tracer, &row);
    let (sub_factors, sub_negated) = product_factors(tracer, &sub);
    let row_masks = masks_beside(&row_factors, &is_row)?;
    let sub_masks = masks_beside(&sub_factors, &is_matrix)?;
    if row_negated || sub_negated {
        return None;
    }
    let bound = scan.body_arguments[index];
    for i in start..n as i64 {
        let binding = Some((bound, i as f64));
        let i = i as usize;
        let keep = placed_mask(tracer, &keep, 1, binding)?;
        let row_mask = mask_product(tracer, &row_masks, 1, binding, n)?;
        let sub_mask = mask_product(tracer, &sub_masks, 2, binding, n * n)?;
        let keeps = (0..n).all(|c| (keep[c] == kept_when) == (c < i));
        let row_ok = (0..n).all(|r| row_mask[r] == f64::from(u8::from(r < i)));
        let sub_ok = (0..i).all(|r| (0..i).all(|c| sub_mask[r * n + c] == 1.0));
        if !(keeps && row_ok && sub_ok) {
            return None;
        }
    }
    Some(node.operand(carried))
}

/// The factors of a product other than the one `is_main` accepts (which must be there,
/// once).
fn masks_beside<'c, 'a>(
    factors: &[Traced<'c, 'a>],
    is_main: &dyn Fn(&Traced<'c, 'a>) -> bool,
) -> Option<Vec<Traced<'c, 'a>>> {
    let main = factors.iter().position(is_main)?;
    let rest: Vec<Traced> = factors.iter().enumerate().filter(|&(k, _)| k != main).map(|(_, f)| f.clone()).collect();
    rest.iter().all(|f| !is_main(f)).then_some(rest)
}

/// The elementwise product of masks placed on a value's last `rank` axes (all ones if
/// there are none), evaluated with `binding`.
fn mask_product<'c, 'a>(
    tracer: &Tracer<'c, 'a>,
    masks: &[Traced<'c, 'a>],
    rank: usize,
    binding: Binding<'c, 'a>,
    count: usize,
) -> Option<Vec<f64>> {
    masks.iter().try_fold(vec![1.0; count], |product, mask| {
        let values = placed_mask(tracer, mask, rank, binding)?;
        (values.len() == count).then(|| product.iter().zip(&values).map(|(a, b)| a * b).collect())
    })
}

/// The matrix before step `i` of the row-by-row inverse, if `value` is that step.
fn row_step<'c, 'a>(
    tracer: &Tracer<'c, 'a>,
    value: &Traced<'c, 'a>,
    i: usize,
    shape: &[i64],
) -> Option<Traced<'c, 'a>> {
    let rank = shape.len();
    let scatter = tracer.producer_named(value, "stablehlo.scatter")?;
    let numbers = Scatter::from_operation(scatter.op)?.dimension_numbers().ok()?;
    let (row_axis, column_axis) = ((rank - 2) as i64, (rank - 1) as i64);
    let writes_row = numbers.update_window_dims == (0..column_axis).collect::<Vec<_>>()
        && numbers.inserted_window_dims == [row_axis]
        && numbers.scatter_dims_to_operand_dims == [row_axis, column_axis]
        && numbers.input_batching_dims.is_empty()
        && Scatter::from_operation(scatter.op)?.overwrites();
    // The start index (i, 0), a constant (or the concatenation of two).
    let index = constant_vector(tracer, &scatter.operand(1))?;
    if !writes_row || index != [i as f64, 0.0] {
        return None;
    }
    let before = scatter.operand(0);
    // The new row: row + (row[..., None] * M[..., :i, :i]).sum(-2).
    let update = tracer.producer_named(&scatter.operand(2), "stablehlo.add")?;
    let corner = |value: &Traced<'c, 'a>, rows: (i64, i64)| -> bool {
        let mut start = vec![0; rank];
        let mut limit = shape.to_vec();
        (start[rank - 2], limit[rank - 2], limit[rank - 1]) = (rows.0, rows.1, i as i64);
        start[rank - 1] = 0;
        static_slice(tracer, value)
            .is_some_and(|(source, s, l)| same_value(&source, &before) && s == start && l == limit)
    };
    let is_row = |value: &Traced<'c, 'a>| {
        let (values, _) = follow_layout(tracer, value, Through { converts: false, broadcasts: false });
        values.iter().any(|v| corner(v, (i as i64, i as i64 + 1)))
    };
    (0..2).find_map(|side| {
        let row = update.operand(side);
        let product = Product::of(tracer, &update.operand(1 - side))?;
        let summed_ok = product.contracted() == 1 && product.summed_axes() == [rank - 2];
        // row[..., None]: the row's columns (the slice's last axis) along the summed axis.
        let broadcast_row: Vec<Option<usize>> = (0..rank - 2).map(Some).chain([Some(rank - 1), None]).collect();
        let row_side = (0..2).find(|&s| {
            let (source, steps) = broadcast_source(tracer, &product.operand(s));
            let sizes = product.operand(s).shape().unwrap_or_default();
            corner(&source, (i as i64, i as i64 + 1))
                && source
                    .shape()
                    .and_then(|shape| placement(&steps, &shape))
                    .is_some_and(|placed| same_places(&placed, &broadcast_row, &sizes))
        })?;
        let sub_ok = corner(&product.operand(1 - row_side), (0, i as i64));
        (is_row(&row) && summed_ok && sub_ok).then(|| before.clone())
    })
}
