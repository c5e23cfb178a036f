//! The loop the Gated DeltaNet raiser reads, per token or per chunk: a `lax.scan`-shaped
//! `stablehlo.while`, its state and output, and the step's slices of its sequences.

use crate::analysis::{
    atoms::{Atom, Atoms, Axis},
    operands::Miss,
    trace::{apply_layout, follow_layout, last_operation, Through, Traced, Tracer},
};
use flywheel_dialect::stablehlo::{Compare, ComparisonDirection, Scatter, Select};
use melior::ir::{
    attribute::DenseI64ArrayAttribute,
    operation::{OperationLike, OperationRef},
    BlockLike, RegionLike, Value,
};

/// A `lax.scan`-shaped while loop: a step counter from 0 to `steps`, loop-invariant
/// sequences sliced at the step, and the other carried values.
pub(crate) struct Scan<'c, 'a> {
    /// Every carried value equal to the step: the counter, and any other carried integer
    /// that starts at 0 and adds 1 each step (a `fori_loop`'s index inside its scan).
    pub(crate) step_arguments: Vec<usize>,
    /// Every carried scalar integer that adds 1 each step, with the constant it starts at
    /// (a `fori_loop(1, n)`'s index starts at 1).
    pub(crate) indices: Vec<(usize, i64)>,
    pub(crate) steps: i64,
    pub(crate) body_arguments: Vec<Value<'c, 'a>>,
    pub(crate) returned: Vec<Value<'c, 'a>>,
    pub(crate) invariant: Vec<bool>,
}

pub(crate) fn read_scan<'c, 'a>(tracer: &Tracer<'c, 'a>, op: OperationRef<'c, 'a>) -> Option<Scan<'c, 'a>> {
    let block = |index: usize| op.region(index).ok()?.first_block();
    let (condition, body) = (block(0)?, block(1)?);
    let arguments = |block: melior::ir::BlockRef<'c, 'a>| -> Vec<Value<'c, 'a>> {
        (0..block.argument_count()).map(|i| block.argument(i).expect("in range").into()).collect()
    };
    let (condition_arguments, body_arguments) = (arguments(condition), arguments(body));
    let returned: Vec<Value> = last_operation(body)?.operands().collect();
    // StableHLO is unregistered here, so nothing has checked that the loop's parts agree.
    let carried = op.operand_count();
    if [condition_arguments.len(), body_arguments.len(), returned.len(), op.result_count()] != [carried; 4] {
        return None;
    }
    let test = tracer.producer(&Traced::outer(last_operation(condition)?.operand(0).ok()?))?;
    let compare = Compare::from_operation(test.op)?;
    if compare.direction().ok()? != ComparisonDirection::Lt {
        return None;
    }
    let counter = condition_arguments.iter().position(|&argument| argument == compare.lhs())?;
    let steps = tracer.splat(&test.operand(1))? as i64;
    let init = Traced::outer(op.operand(counter).ok()?);
    let increment = tracer.producer_named(&Traced::outer(returned[counter]), "stablehlo.add")?;
    let counts_up = (0..2).any(|side| {
        tracer.resolve(&increment.operand(side)).value == body_arguments[counter]
            && tracer.splat(&increment.operand(1 - side)) == Some(1.0)
    });
    if tracer.splat(&init) != Some(0.0) || !counts_up {
        return None;
    }
    let invariant = returned.iter().zip(&body_arguments).map(|(r, a)| r == a).collect();
    let counts_with_the_step = |index: usize| {
        let start = tracer.splat(&Traced::outer(op.operand(index).ok()?))?;
        let increment = tracer.producer_named(&Traced::outer(returned[index]), "stablehlo.add")?;
        let adds_one = (0..2).any(|side| {
            tracer.resolve(&increment.operand(side)).value == body_arguments[index]
                && tracer.splat(&increment.operand(1 - side)) == Some(1.0)
        });
        let scalar = Traced::outer(body_arguments[index]).shape().is_some_and(|shape| shape.is_empty());
        let integer = start.fract() == 0.0 && start.abs() < 2f64.powi(31);
        (adds_one && scalar && integer).then_some((index, start as i64))
    };
    let indices: Vec<(usize, i64)> = (0..returned.len()).filter_map(counts_with_the_step).collect();
    let step_arguments = indices.iter().filter(|&&(_, start)| start == 0).map(|&(index, _)| index).collect();
    Some(Scan { step_arguments, indices, steps, body_arguments, returned, invariant })
}

impl<'c, 'a> Scan<'c, 'a> {
    /// Whether `value` is a carried index that starts at `start` (≥ 0) and adds 1 each step,
    /// through integer converts and JAX's negative-index wrap (never taken: the index is
    /// never negative).
    pub(crate) fn is_index(&self, tracer: &Tracer<'c, 'a>, value: &Traced<'c, 'a>, start: i64) -> bool {
        let value = tracer.resolve(value);
        let counts = |&(index, from): &(usize, i64)| from == start && self.body_arguments[index] == value.value;
        if start < 0 {
            return false;
        }
        if self.indices.iter().any(counts) {
            return true;
        }
        let Some(node) = tracer.producer(&value) else { return false };
        if node.is("stablehlo.convert") {
            let integer = |traced: &Traced| {
                traced.element_type().is_some_and(|e| matches!(e.as_str(), "i32" | "i64" | "ui32" | "ui64"))
            };
            return integer(&node.operand(0))
                && integer(&node.result())
                && self.is_index(tracer, &node.operand(0), start);
        }
        let Some(select) = Select::from_operation(node.op) else { return false };
        let Some(test) = tracer.producer(&Traced { value: select.pred(), calls: node.calls.clone() }) else {
            return false;
        };
        let Some(compare) = Compare::from_operation(test.op) else { return false };
        let on_false = node.operand(2);
        compare.direction().ok() == Some(ComparisonDirection::Lt)
            && tracer.resolve(&test.operand(0)).value == tracer.resolve(&on_false).value
            && tracer.splat(&test.operand(1)) == Some(0.0)
            && self.is_index(tracer, &on_false, start)
    }

    /// The axis a start-index list of a tensor of `rank` addresses at the index that starts
    /// at `start`, when every other index is 0 (and there is one index per axis).
    fn index_axis(
        &self,
        tracer: &Tracer<'c, 'a>,
        indices: &[Traced<'c, 'a>],
        rank: usize,
        start: i64,
    ) -> Option<usize> {
        if indices.len() != rank {
            return None;
        }
        let axis = indices.iter().position(|index| self.is_index(tracer, index, start))?;
        let rest_zero = indices.iter().enumerate().all(|(i, index)| i == axis || tracer.splat(index) == Some(0.0));
        rest_zero.then_some(axis)
    }

    /// The loop-invariant sequence `value` is the step's slice of, and the sliced axis:
    /// `xs[..., t, ...]`, as `reshape(dynamic_slice(xs, 0, .., t, .., 0))` with the unit
    /// axis dropped (JAX's `dynamic_index_in_dim`).
    pub(crate) fn sliced(&self, tracer: &Tracer<'c, 'a>, value: &Traced<'c, 'a>) -> Option<(usize, usize)> {
        self.indexed(tracer, value, 0).filter(|&(sequence, _)| self.invariant[sequence])
    }

    /// The carried value `value` is a row of at the index that starts at `start`, and the
    /// axis it is sliced along (as `sliced`, for any carried value).
    pub(crate) fn indexed(
        &self,
        tracer: &Tracer<'c, 'a>,
        value: &Traced<'c, 'a>,
        start: i64,
    ) -> Option<(usize, usize)> {
        let reshape = tracer.producer_named(value, "stablehlo.reshape")?;
        let slice = tracer.producer_named(&reshape.operand(0), "stablehlo.dynamic_slice")?;
        let sequence = self.body_arguments.iter().position(|&a| a == tracer.resolve(&slice.operand(0)).value)?;
        let shape = slice.operand(0).shape()?;
        let indices: Vec<Traced> = (1..slice.operand_count()).map(|i| slice.operand(i)).collect();
        let time_axis = self.index_axis(tracer, &indices, shape.len(), start)?;
        let sizes = DenseI64ArrayAttribute::try_from(slice.op.attribute("slice_sizes").ok()?).ok()?;
        let one_row = (0..shape.len())
            .all(|axis| sizes.element(axis).ok() == Some(if axis == time_axis { 1 } else { shape[axis] }));
        let mut row_shape = shape.clone();
        row_shape.remove(time_axis);
        (one_row && reshape.result().shape()? == row_shape).then_some((sequence, time_axis))
    }

    /// How the loop writes one output row per step into the carried value `index`, if it
    /// does: `ys.at[..., t, ...].set(row)` as a `dynamic_update_slice` or a `scatter`.
    pub(crate) fn written_row(&self, tracer: &Tracer<'c, 'a>, index: usize) -> Option<Write<'c, 'a>> {
        self.written_row_at(tracer, index, 0)
    }

    /// How the loop writes one row per step into the carried value `index` at the index that
    /// starts at `start`.
    pub(crate) fn written_row_at(&self, tracer: &Tracer<'c, 'a>, index: usize, start: i64) -> Option<Write<'c, 'a>> {
        let node = tracer.producer(&Traced::outer(self.returned[index]))?;
        let into = tracer.resolve(&node.operand(0)).value == self.body_arguments[index];
        let shape = node.operand(0).shape()?;
        if node.is("stablehlo.dynamic_update_slice") {
            let indices: Vec<Traced> = (2..node.operand_count()).map(|i| node.operand(i)).collect();
            let time_axis = self.index_axis(tracer, &indices, shape.len(), start)?;
            let mut row_shape = shape.clone();
            row_shape[time_axis] = 1;
            let row = node.operand(1);
            let whole_row = row.shape()? == row_shape;
            return (into && whole_row).then_some(Write { time_axis, row, unit_axis: true });
        }
        let scatter = Scatter::from_operation(node.op)?;
        let numbers = scatter.dimension_numbers().ok()?;
        let [time_axis] = numbers.inserted_window_dims[..] else { return None };
        let time_axis = time_axis as usize;
        // One index, the step, addressing a whole row along `time_axis`.
        let index = tracer.producer_named(&node.operand(1), "stablehlo.reshape")?;
        let one_index = node.operand(1).shape()? == [1] && self.is_index(tracer, &index.operand(0), start);
        let mut row_shape = shape.clone();
        row_shape.remove(time_axis);
        let row = node.operand(2);
        let windows: Vec<i64> = (0..row_shape.len() as i64).collect();
        let addresses_row = numbers.scatter_dims_to_operand_dims == [time_axis as i64]
            && numbers.update_window_dims == windows
            && numbers.input_batching_dims.is_empty()
            && row.shape()? == row_shape;
        (into && one_index && addresses_row && scatter.overwrites()).then_some(Write {
            time_axis,
            row,
            unit_axis: false,
        })
    }
}

/// The output row a loop writes each step.
pub(crate) struct Write<'c, 'a> {
    /// The output's axis the steps run along.
    pub(crate) time_axis: usize,
    /// The value written.
    pub(crate) row: Traced<'c, 'a>,
    /// Whether the row keeps the time axis, of size 1 (`dynamic_update_slice`).
    pub(crate) unit_axis: bool,
}

impl Write<'_, '_> {
    /// Ties the axes of the written row to the output's.
    pub(crate) fn line_up(&self, atoms: &mut Atoms, row: &[Axis], output: &[Axis]) -> Result<(), Miss> {
        let mut expected = output.to_vec();
        if self.unit_axis {
            expected[self.time_axis] = Vec::new();
        } else {
            expected.remove(self.time_axis);
        }
        if row.len() != expected.len() {
            return Err(Miss("the output row does not line up with the output".into()));
        }
        for (r, y) in row.iter().zip(&expected) {
            atoms.unify(r, y)?;
        }
        Ok(())
    }
}

/// What a loop body computes, tied to atoms: the op's five inputs (values outside the
/// loop, with their axes), and the roles of the state's axes.
pub(crate) struct Body<'c, 'a> {
    pub(crate) inputs: Vec<(Traced<'c, 'a>, Vec<Axis>)>,
    pub(crate) time: Vec<Atom>,
    pub(crate) key_dim: Axis,
    pub(crate) value_dim: Axis,
    /// A constant the body scales q_t by.
    pub(crate) q_scale: f64,
    /// The chunk length a chunked program already uses.
    pub(crate) chunk: Option<i64>,
    /// The product that reads the state with q (`o_t = Sᵀ q_t`, or a chunk's Q S).
    pub(crate) readout: OperationRef<'c, 'a>,
}

/// A scan loop with its state and output found.
pub(crate) struct Loop<'s, 'c, 'a> {
    pub op: OperationRef<'c, 'a>,
    pub scan: &'s Scan<'c, 'a>,
    pub state: usize,
    pub output: usize,
    /// How the output row is written.
    pub write: Write<'c, 'a>,
}

/// A per-step slice: which sequence, the sequence's axis the steps run along, the row
/// sliced (the sequence's axes without that one) and the axes where it is read (after
/// the layout ops between).
pub(crate) struct Slice {
    pub(crate) sequence: usize,
    pub(crate) time_axis: usize,
    pub(crate) row: Vec<Axis>,
    pub(crate) axes: Vec<Axis>,
}

/// `value` as the step's slice of a sequence, through layout ops.
pub(crate) fn read_slice<'c, 'a>(
    tracer: &Tracer<'c, 'a>,
    scan: &Scan<'c, 'a>,
    atoms: &mut Atoms,
    axes: &[Vec<Axis>],
    value: &Traced<'c, 'a>,
) -> Result<Slice, Miss> {
    // The slice is itself a reshape, so the layout chain may run through it.
    let (values, steps) = follow_layout(tracer, value, Through { converts: false, broadcasts: true });
    let (index, (sequence, time_axis)) = values
        .iter()
        .enumerate()
        .find_map(|(i, v)| scan.sliced(tracer, v).map(|sliced| (i, sliced)))
        .ok_or(Miss("an input of the rule is not the step's slice of a sequence".into()))?;
    let mut row_axes = axes[sequence].clone();
    row_axes.remove(time_axis);
    let slice_axes = apply_layout(atoms, &row_axes, &steps[index..])?;
    Ok(Slice { sequence, time_axis, row: row_axes, axes: slice_axes })
}

/// `value` as the step's slice times splat constants (`(q_t * scale)[..., None]`): the
/// slice, and the constants' product.
pub(crate) fn read_scaled_slice<'c, 'a>(
    tracer: &Tracer<'c, 'a>,
    scan: &Scan<'c, 'a>,
    atoms: &mut Atoms,
    axes: &[Vec<Axis>],
    value: &Traced<'c, 'a>,
) -> Result<(Slice, f64), Miss> {
    let (values, steps) = follow_layout(tracer, value, Through { converts: false, broadcasts: true });
    if let Some(multiply) = tracer.producer_named(&values[0], "stablehlo.multiply") {
        if let Some((side, factor)) = (0..2).find_map(|side| Some((side, tracer.splat(&multiply.operand(side))?))) {
            let (inner, scale) = read_scaled_slice(tracer, scan, atoms, axes, &multiply.operand(1 - side))?;
            let slice_axes = apply_layout(atoms, &inner.axes, &steps)?;
            return Ok((Slice { axes: slice_axes, ..inner }, scale * factor));
        }
    }
    Ok((read_slice(tracer, scan, atoms, axes, value)?, 1.0))
}
