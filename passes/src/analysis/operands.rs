//! What the raising passes share: following an operand back through layout ops (and
//! constant scalings) to the source a FlyWheel op should take, choosing among the
//! candidates the one whose axes are whole roles, extending a result past the layout ops
//! that only rearrange it, and recording the ops a match covers.

use crate::{
    analysis::atoms::{Atom, Atoms, Axis, Mismatch},
    analysis::trace::{apply_layout, layout_step, LayoutStep, Node, Traced, Tracer, ANY_LAYOUT},
};
use flywheel_dialect::stablehlo::DotDimensionNumbers;
use melior::ir::{operation::OperationRef, Value, ValueLike};

/// Why a candidate was not raised.
#[derive(Debug)]
pub struct Miss(pub String);

impl From<Mismatch> for Miss {
    fn from(mismatch: Mismatch) -> Self {
        Miss(format!("axes do not line up ({mismatch})"))
    }
}

pub fn miss<T>(message: impl Into<String>) -> Result<T, Miss> {
    Err(Miss(message.into()))
}

/// A Q, K or V operand of a product, followed back through layout ops (and, for Q and
/// K, constant scalings): `values[0]` is the furthest source, the last value the product's
/// operand.
pub struct Chain<'c, 'a> {
    pub values: Vec<Traced<'c, 'a>>,
    pub axes: Vec<Vec<Axis>>,
    /// The factor the step into `values[i + 1]` multiplies by.
    pub scales: Vec<f64>,
}

impl Chain<'_, '_> {
    pub fn at_product(&self) -> &[Axis] {
        self.axes.last().expect("a chain has its operand")
    }
}

/// The operand a new op takes: a value, its axes, and the scale between it and the
/// original product.
pub struct Operand<'c, 'a> {
    pub value: Traced<'c, 'a>,
    pub axes: Vec<Axis>,
    pub scale: f64,
}

pub fn same_value(a: &Traced, b: &Traced) -> bool {
    a.value == b.value && a.calls == b.calls
}

/// Records the ops producing `values` (or the outermost call they sit in) as matched.
pub fn note<'c, 'a>(matched: &mut Vec<OperationRef<'c, 'a>>, values: &[Traced<'c, 'a>]) {
    for value in values {
        if let Some(&call) = value.calls.first() {
            matched.push(call);
        } else if let Some(result) = flywheel_dialect::ir::op_result(value.value) {
            matched.push(result.owner());
        }
    }
}

pub fn note_nodes<'c, 'a>(matched: &mut Vec<OperationRef<'c, 'a>>, nodes: &[&Node<'c, 'a>]) {
    matched.extend(nodes.iter().map(|node| node.calls.first().copied().unwrap_or(node.op)));
}

/// An operand followed back through layout ops and what `follow` allows.
/// What `operand_chain` may step through besides layout ops.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Follow {
    /// Widening converts (exact, so the op may take the narrower source).
    pub converts: bool,
    /// Multiplications and divisions by a constant, gathered into `Operand::scale`.
    pub scales: bool,
}

pub fn operand_chain<'c, 'a>(
    tracer: &Tracer<'c, 'a>,
    atoms: &mut Atoms,
    operand: &Traced<'c, 'a>,
    follow: Follow,
) -> Result<Chain<'c, 'a>, Miss> {
    let scales = follow.scales;
    let mut values = vec![operand.clone()];
    let mut steps = Vec::new();
    let mut factors = Vec::new();
    loop {
        let current = values.last().expect("non-empty").clone();
        let Some(node) = tracer.producer(&current) else { break };
        let (step, factor) = match node.name().as_str() {
            "stablehlo.transpose" | "stablehlo.reshape" | "stablehlo.broadcast_in_dim" => {
                match layout_step(&node, ANY_LAYOUT) {
                    Some(step) => (step, 1.0),
                    None => break,
                }
            }
            "stablehlo.convert" if follow.converts && widens(&node) => (LayoutStep::Convert, 1.0),
            "stablehlo.multiply" if scales => match (tracer.splat(&node.operand(1)), tracer.splat(&node.operand(0))) {
                (Some(factor), _) => (LayoutStep::Convert, factor),
                (None, Some(factor)) => {
                    values.push(node.operand(1));
                    steps.push(LayoutStep::Convert);
                    factors.push(factor);
                    continue;
                }
                _ => break,
            },
            "stablehlo.divide" if scales => match tracer.splat(&node.operand(1)) {
                Some(divisor) => (LayoutStep::Convert, 1.0 / divisor),
                None => break,
            },
            _ => break,
        };
        values.push(node.operand(0));
        steps.push(step);
        factors.push(factor);
    }
    values.reverse();
    steps.reverse();
    factors.reverse();
    let mut axes = vec![atoms.source(&values[0].shape().ok_or(Miss("dynamic shapes".into()))?)];
    for step in &steps {
        let next = apply_layout(atoms, axes.last().expect("non-empty"), std::slice::from_ref(step))?;
        axes.push(next);
    }
    Ok(Chain { values, axes, scales: factors })
}

pub fn widens(convert: &Node) -> bool {
    let width = |element: Option<String>| match element.as_deref() {
        Some("bf16" | "f16") => 16,
        Some("f32") => 32,
        Some("f64") => 64,
        _ => 0,
    };
    let (from, to) = (width(convert.operand(0).element_type()), width(convert.result().element_type()));
    from > 0 && to >= from
}

/// Extends a result past the layout ops (and, if asked, converts) that only rearrange it,
/// so the new op replaces the whole output rearrangement.
pub fn extend_root<'c, 'a>(
    atoms: &mut Atoms,
    result: Value<'c, 'a>,
    axes: Vec<Axis>,
    matched: &mut Vec<OperationRef<'c, 'a>>,
    through_converts: bool,
) -> Result<(Value<'c, 'a>, Vec<Axis>), Miss> {
    let mut root = result;
    let mut axes = axes;
    while let Some(user) = single_user(root) {
        let node = Node { op: user, calls: Vec::new() };
        let layout = matches!(node.name().as_str(), "stablehlo.transpose" | "stablehlo.reshape");
        if !(layout || through_converts && node.is("stablehlo.convert")) {
            break;
        }
        // A transpose whose permutation does not check out is not followed.
        let Some(step) = layout_step(&node, ANY_LAYOUT) else { break };
        axes = apply_layout(atoms, &axes, std::slice::from_ref(&step))?;
        matched.push(user);
        root = user.result(0).expect("one result").into();
    }
    Ok((root, axes))
}

pub fn single_user<'c, 'a>(value: Value<'c, 'a>) -> Option<OperationRef<'c, 'a>> {
    use mlir_sys::{mlirOpOperandGetNextUse, mlirOpOperandGetOwner, mlirOpOperandIsNull, mlirValueGetFirstUse};
    unsafe {
        let first = mlirValueGetFirstUse(value.to_raw());
        if mlirOpOperandIsNull(first) || !mlirOpOperandIsNull(mlirOpOperandGetNextUse(first)) {
            return None;
        }
        OperationRef::from_option_raw(mlirOpOperandGetOwner(first))
    }
}

/// The furthest-back value of a chain whose every axis is one of `groups` (the atoms of
/// each role, size-1 axes allowed, every non-empty group present), with the scale
/// between it and the product. `name` names the operand in the reason for a miss.
pub fn choose_source<'c, 'a>(
    atoms: &Atoms,
    groups: &[Vec<Atom>],
    chain: &Chain<'c, 'a>,
    name: &str,
) -> Result<Operand<'c, 'a>, Miss> {
    for (index, axes) in chain.axes.iter().enumerate() {
        let mut used = Vec::new();
        let clean = axes.iter().all(|axis| {
            let leaves = atoms.leaves(axis);
            if leaves.is_empty() {
                return true;
            }
            match groups.iter().position(|group| *group == leaves) {
                Some(role) if !used.contains(&role) => {
                    used.push(role);
                    true
                }
                _ => false,
            }
        });
        let complete = groups.iter().enumerate().all(|(role, group)| group.is_empty() || used.contains(&role));
        if clean && complete && axes.len() <= groups.len() {
            let scale = chain.scales[index..].iter().product();
            return Ok(Operand { value: chain.values[index].clone(), axes: axes.clone(), scale });
        }
    }
    miss(format!("{name} is not a rearrangement of a tensor with one axis per role"))
}

/// The order of `roles` along an operand's axes when it has one axis per role (size-1
/// axes take the roles without atoms, in the given order), else `None`.
pub fn role_order<R: Copy + PartialEq>(atoms: &Atoms, roles: &[(R, Vec<Atom>)], operand: &Operand) -> Option<Vec<R>> {
    if operand.axes.len() != roles.len() {
        return None;
    }
    let mut order: Vec<Option<R>> = vec![None; roles.len()];
    let mut free = Vec::new();
    for (role, group) in roles {
        match operand.axes.iter().position(|axis| !axis.is_empty() && atoms.leaves(axis) == *group) {
            Some(position) => order[position] = Some(*role),
            None => free.push(*role),
        }
    }
    free.reverse();
    order.into_iter().map(|slot| slot.or_else(|| free.pop())).collect()
}

/// The axes of a `dot_general` result: batch, then lhs free, then rhs free.
pub fn dot_axes(
    atoms: &mut Atoms,
    lhs: &[Axis],
    rhs: &[Axis],
    numbers: &DotDimensionNumbers,
) -> Result<Vec<Axis>, Miss> {
    let mut axes = Vec::new();
    for (&l, &r) in numbers.lhs_batching.iter().zip(&numbers.rhs_batching) {
        axes.push(atoms.pair(&lhs[l as usize], &rhs[r as usize])?);
    }
    for (&l, &r) in numbers.lhs_contracting.iter().zip(&numbers.rhs_contracting) {
        atoms.unify(&lhs[l as usize], &rhs[r as usize])?;
    }
    let free = |axes_of: &[Axis], batch: &[i64], contracting: &[i64]| -> Vec<Axis> {
        (0..axes_of.len() as i64)
            .filter(|i| !batch.contains(i) && !contracting.contains(i))
            .map(|i| axes_of[i as usize].clone())
            .collect()
    };
    axes.extend(free(lhs, &numbers.lhs_batching, &numbers.lhs_contracting));
    axes.extend(free(rhs, &numbers.rhs_batching, &numbers.rhs_contracting));
    Ok(axes)
}

/// Pairs two tensors' axes position by position (broadcast atoms match anything).
pub fn pair_all(atoms: &mut Atoms, a: &[Axis], b: &[Axis]) -> Result<(), Miss> {
    if a.len() != b.len() {
        return miss("ranks do not match");
    }
    for (x, y) in a.iter().zip(b) {
        atoms.pair(x, y)?;
    }
    Ok(())
}
