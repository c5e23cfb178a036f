//! The loop the Gated DeltaNet raiser reads, per token or per chunk: a `lax.scan`-shaped
//! `stablehlo.while`, its state and output, and the step's slices of its sequences.

use crate::analysis::{
    atoms::{Atom, Atoms, Axis},
    operands::Miss,
    trace::{apply_layout, follow_layout, last_operation, Node, Through, Traced, Tracer},
};
use flywheel_dialect::stablehlo::{Compare, ComparisonDirection};
use melior::ir::{
    attribute::DenseI64ArrayAttribute,
    operation::{OperationLike, OperationRef},
    BlockLike, RegionLike, Value,
};

/// A `lax.scan`-shaped while loop: a step counter from 0 to `steps`, loop-invariant
/// sequences sliced at the step, and the other carried values.
pub(crate) struct Scan<'c, 'a> {
    pub(crate) counter: usize,
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
    Some(Scan { counter, steps, body_arguments, returned, invariant })
}

impl<'c, 'a> Scan<'c, 'a> {
    /// The loop-invariant sequence `value` is the step's slice of: `xs[t]`, as
    /// `reshape(dynamic_slice(xs, t, 0, ...))` (JAX's `dynamic_index_in_dim`).
    pub(crate) fn sliced(&self, tracer: &Tracer<'c, 'a>, value: &Traced<'c, 'a>) -> Option<usize> {
        let reshape = tracer.producer_named(value, "stablehlo.reshape")?;
        let slice = tracer.producer_named(&reshape.operand(0), "stablehlo.dynamic_slice")?;
        let sequence = self.body_arguments.iter().position(|&a| a == tracer.resolve(&slice.operand(0)).value)?;
        let at_step = tracer.resolve(&slice.operand(1)).value == self.body_arguments[self.counter];
        let rest_zero = (2..slice.operand_count()).all(|i| tracer.splat(&slice.operand(i)) == Some(0.0));
        let sizes = DenseI64ArrayAttribute::try_from(slice.op.attribute("slice_sizes").ok()?).ok()?;
        let shape = slice.operand(0).shape()?;
        let one_row = sizes.element(0).ok()? == 1 && (1..shape.len()).all(|i| sizes.element(i).ok() == Some(shape[i]));
        (self.invariant[sequence] && at_step && rest_zero && one_row && reshape.result().shape()? == shape[1..])
            .then_some(sequence)
    }
}

/// What a loop body computes, tied to atoms: the op's five inputs (values outside the
/// loop, with their axes), and the roles of the state's axes.
pub(crate) struct Body<'c, 'a> {
    pub(crate) inputs: Vec<(Traced<'c, 'a>, Vec<Axis>)>,
    pub(crate) time: Vec<Atom>,
    pub(crate) key_dim: Axis,
    pub(crate) value_dim: Axis,
    /// The chunk length a chunked program already uses.
    pub(crate) chunk: Option<i64>,
}

/// A scan loop with its state and output found.
pub(crate) struct Loop<'s, 'c, 'a> {
    pub op: OperationRef<'c, 'a>,
    pub scan: &'s Scan<'c, 'a>,
    pub state: usize,
    pub output: usize,
    /// The `dynamic_update_slice` writing the output row.
    pub update: Node<'c, 'a>,
}

/// The per-token body: S1 = exp(g_t) S, u = beta_t (v_t - S1ᵀ k_t), S2 = S1 + k_t uᵀ,
/// o_t = S2ᵀ q_t.
/// A per-step slice: which sequence, and its axes (the sequence's without time).
pub(crate) struct Slice {
    pub(crate) sequence: usize,
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
    let (index, sequence) = values
        .iter()
        .enumerate()
        .find_map(|(i, v)| scan.sliced(tracer, v).map(|sequence| (i, sequence)))
        .ok_or(Miss("an input of the rule is not the step's slice of a sequence".into()))?;
    let slice_axes = apply_layout(atoms, &axes[sequence][1..], &steps[index..])?;
    Ok(Slice { sequence, axes: slice_axes })
}
