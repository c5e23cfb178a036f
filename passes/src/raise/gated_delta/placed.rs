//! Where a layout chain puts a value's axes, and the small masks it broadcasts (evaluated):
//! the Gated DeltaNet raiser reads C x C masks, identities and slices through these.

use crate::analysis::trace::{layout_step, LayoutStep, Through, Traced, Tracer};
use flywheel_dialect::stablehlo::{BroadcastInDim, Compare, ComparisonDirection, Iota, Slice};
use melior::ir::Value;

/// Layout ops a value is read through: reshapes, transposes, broadcasts.
pub(super) const LAYOUT: Through = Through { converts: false, broadcasts: true };

/// Whether a square matrix (row-major) is the identity.
pub(super) fn is_identity(matrix: &[f64]) -> bool {
    let n = (matrix.len() as f64).sqrt() as usize;
    (0..n).all(|i| (0..n).all(|j| matrix[i * n + j] == f64::from(u8::from(i == j))))
}

/// A small 1-D integer constant's values, through a concatenation of constants.
pub(super) fn constant_vector(tracer: &Tracer, value: &Traced) -> Option<Vec<f64>> {
    let node = tracer.producer(value)?;
    if node.is("stablehlo.concatenate") {
        let parts: Option<Vec<Vec<f64>>> =
            (0..node.operand_count()).map(|k| constant_vector(tracer, &node.operand(k))).collect();
        return parts.map(|parts| parts.concat());
    }
    let length = value.shape()?.first().copied()? as usize;
    tracer.splat(value).map(|splat| vec![splat; length])
}

/// A `stablehlo.slice` with unit strides: its source, start and limit indices.
pub(super) fn static_slice<'c, 'a>(
    tracer: &Tracer<'c, 'a>,
    value: &Traced<'c, 'a>,
) -> Option<(Traced<'c, 'a>, Vec<i64>, Vec<i64>)> {
    let node = tracer.producer_named(value, Slice::NAME)?;
    let slice = Slice::from_operation(node.op)?;
    let unit_strides = slice.strides().ok()?.iter().all(|&s| s == 1);
    unit_strides.then(|| Some((node.operand(0), slice.start_indices().ok()?, slice.limit_indices().ok()?))).flatten()
}

/// Whether a layout chain from `source` places its axes first, in order, and broadcasts
/// one more (a per-row weight `x[..., None]` of a [..., C] tensor); `None` if the chain
/// cannot be followed.
pub(super) fn row_placement(steps: &[LayoutStep], source: &Traced) -> Option<bool> {
    let shape = source.shape()?;
    let placed = placement(steps, &shape)?;
    let want: Vec<Option<usize>> = (0..shape.len()).map(Some).chain([None]).collect();
    let sizes: Vec<i64> = shape.iter().copied().chain([0]).collect();
    Some(same_places(&placed, &want, &sizes))
}

/// The 2-D matrix `value` broadcasts onto its last two axes (evaluated, row-major).
pub(super) fn placed_matrix(tracer: &Tracer, value: &Traced) -> Option<Vec<f64>> {
    placed_mask(tracer, value, 2, None)
}

/// The `rank`-D mask `value` broadcasts onto its last `rank` axes, evaluated with `index`
/// bound (row-major).
pub(super) fn placed_mask<'c, 'a>(
    tracer: &Tracer<'c, 'a>,
    value: &Traced<'c, 'a>,
    rank: usize,
    index: Binding<'c, 'a>,
) -> Option<Vec<f64>> {
    let (source, steps) = broadcast_source(tracer, value);
    let shape = value.shape()?;
    let source_shape = source.shape()?;
    let placed = placement(&steps, &source_shape)?;
    let leading = shape.len().checked_sub(rank)?;
    let want: Vec<Option<usize>> = vec![None; leading].into_iter().chain((0..rank).map(Some)).collect();
    let sizes: Vec<i64> = shape.iter().enumerate().map(|(i, &n)| if i < leading { 0 } else { n }).collect();
    let on_last = source_shape.len() == rank && same_places(&placed, &want, &sizes);
    on_last.then(|| evaluate(tracer, &source, index)).flatten()
}

/// `value` before any float converts (the rule's products run in f32 whatever the source
/// rounds them to).
pub(super) fn without_converts<'c, 'a>(tracer: &Tracer<'c, 'a>, value: &Traced<'c, 'a>) -> Traced<'c, 'a> {
    let is_float =
        |traced: &Traced| traced.element_type().is_some_and(|e| matches!(e.as_str(), "f32" | "bf16" | "f16"));
    match tracer.producer_named(value, "stablehlo.convert") {
        Some(convert) if is_float(&convert.operand(0)) && is_float(value) => {
            without_converts(tracer, &convert.operand(0))
        }
        _ => value.clone(),
    }
}

/// The value `value` broadcasts, and the steps: through `broadcast_in_dim`s and reshapes
/// that only add or drop unit axes, but not into a step's slice (itself such a reshape).
pub(super) fn broadcast_source<'c, 'a>(
    tracer: &Tracer<'c, 'a>,
    value: &Traced<'c, 'a>,
) -> (Traced<'c, 'a>, Vec<LayoutStep>) {
    let mut current = value.clone();
    let mut steps = Vec::new();
    while let Some(node) = tracer.producer(&current) {
        let non_unit = |traced: &Traced| -> Option<Vec<i64>> {
            Some(traced.shape()?.into_iter().filter(|&size| size != 1).collect())
        };
        let unit_reshape = node.is("stablehlo.reshape")
            && non_unit(&node.operand(0)).is_some_and(|before| Some(before) == non_unit(&node.result()))
            && tracer.producer_named(&node.operand(0), "stablehlo.dynamic_slice").is_none();
        if !(node.is("stablehlo.broadcast_in_dim") || unit_reshape) {
            break;
        }
        match layout_step(&node, LAYOUT) {
            Some(step) => steps.push(step),
            None => break,
        }
        current = node.operand(0);
    }
    steps.reverse();
    (current, steps)
}

/// Whether placements agree, an axis of size 1 (one element: JAX squeezes and re-adds
/// them freely, and a reshape keeps no label for them) matching anything.
pub(super) fn same_places(got: &[Option<usize>], want: &[Option<usize>], sizes: &[i64]) -> bool {
    got.len() == want.len() && got.iter().zip(want).zip(sizes).all(|((got, want), &size)| size == 1 || got == want)
}

/// Where each axis of a layout chain's result comes from in its source (`None`: a
/// broadcast axis). Reshapes may only add or drop size-1 axes.
pub(super) fn placement(steps: &[LayoutStep], source_shape: &[i64]) -> Option<Vec<Option<usize>>> {
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

/// The factors of a tree of multiplies and negations, through float converts, and whether
/// the product is negated (an odd number of negations).
pub(super) fn product_factors<'c, 'a>(tracer: &Tracer<'c, 'a>, value: &Traced<'c, 'a>) -> (Vec<Traced<'c, 'a>>, bool) {
    let value = without_converts(tracer, value);
    if let Some(node) = tracer.producer_named(&value, "stablehlo.negate") {
        let (factors, negated) = product_factors(tracer, &node.operand(0));
        return (factors, !negated);
    }
    match tracer.producer_named(&value, "stablehlo.multiply") {
        Some(node) => {
            let (left, left_negated) = product_factors(tracer, &node.operand(0));
            let (right, right_negated) = product_factors(tracer, &node.operand(1));
            ([left, right].concat(), left_negated != right_negated)
        }
        None => (vec![value], false),
    }
}

/// A loop index bound to a value while a mask is evaluated.
pub(super) type Binding<'c, 'a> = Option<(Value<'c, 'a>, f64)>;

/// Evaluates a small integer or boolean expression of iotas, constants and (bound to a
/// value) a loop's index — a mask —, row-major; `None` for anything else.
pub(super) fn evaluate<'c, 'a>(
    tracer: &Tracer<'c, 'a>,
    value: &Traced<'c, 'a>,
    index: Binding<'c, 'a>,
) -> Option<Vec<f64>> {
    let shape = value.shape()?;
    let count = shape.iter().try_fold(1usize, |count, &n| count.checked_mul(usize::try_from(n).ok()?))?;
    if count > 1 << 16 {
        return None;
    }
    if let Some((bound, at)) = index {
        if tracer.resolve(value).value == bound {
            return Some(vec![at; count]);
        }
    }
    if let Some(splat) = tracer.splat(value) {
        return Some(vec![splat; count]);
    }
    // A mask carried into the loop unchanged (torch code's closure constants).
    if let Some(init) = tracer.loop_invariant_init(value) {
        return evaluate(tracer, &init, index);
    }
    let node = tracer.producer(value)?;
    let operand = |k: usize| evaluate(tracer, &node.operand(k), index);
    let both = |f: fn(f64, f64) -> f64| -> Option<Vec<f64>> {
        let (a, b) = (operand(0)?, operand(1)?);
        (a.len() == count && b.len() == count).then(|| a.iter().zip(&b).map(|(&x, &y)| f(x, y)).collect())
    };
    let strides = row_major_strides(&shape);
    match node.name().as_str() {
        Iota::NAME => {
            let dimension = usize::try_from(Iota::from_operation(node.op)?.iota_dimension().ok()?).ok()?;
            let size = *shape.get(dimension)? as usize;
            Some((0..count).map(|k| ((k / strides[dimension]) % size) as f64).collect())
        }
        "stablehlo.convert" | "stablehlo.reshape" => operand(0).filter(|values| values.len() == count),
        BroadcastInDim::NAME => {
            let source = operand(0)?;
            let from = node.operand(0).shape()?;
            let dimensions: Vec<usize> = BroadcastInDim::from_operation(node.op)?
                .broadcast_dimensions()
                .ok()?
                .into_iter()
                .map(|d| d as usize)
                .collect();
            let from_strides = row_major_strides(&from);
            Some(
                (0..count)
                    .map(|k| {
                        let at: usize = (0..from.len())
                            .map(|j| {
                                if from[j] == 1 {
                                    0
                                } else {
                                    (k / strides[dimensions[j]]) % shape[dimensions[j]] as usize * from_strides[j]
                                }
                            })
                            .sum();
                        source[at]
                    })
                    .collect(),
            )
        }
        "stablehlo.add" => both(|x, y| x + y),
        "stablehlo.subtract" => both(|x, y| x - y),
        "stablehlo.and" => both(|x, y| f64::from(u8::from(x != 0.0 && y != 0.0))),
        "stablehlo.or" => both(|x, y| f64::from(u8::from(x != 0.0 || y != 0.0))),
        "stablehlo.not" => {
            let boolean = node.result().element_type().as_deref() == Some("i1");
            boolean.then(|| operand(0)).flatten().map(|a| a.iter().map(|&x| f64::from(u8::from(x == 0.0))).collect())
        }
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
            let (a, b) = (operand(0)?, operand(1)?);
            (a.len() == b.len()).then(|| a.iter().zip(&b).map(|(&x, &y)| f64::from(u8::from(test(x, y)))).collect())
        }
        "stablehlo.select" => {
            let (p, a, b) = (operand(0)?, operand(1)?, operand(2)?);
            let p = if p.len() == 1 { vec![p[0]; count] } else { p };
            (p.len() == count && a.len() == count && b.len() == count)
                .then(|| (0..count).map(|k| if p[k] != 0.0 { a[k] } else { b[k] }).collect())
        }
        _ => None,
    }
}

/// How far apart, in a row-major buffer of `shape`, consecutive indices along each axis are.
fn row_major_strides(shape: &[i64]) -> Vec<usize> {
    (0..shape.len()).map(|d| shape[d + 1..].iter().map(|&n| n as usize).product()).collect()
}
