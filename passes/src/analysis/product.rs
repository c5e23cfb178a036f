//! A product of two tensors however a program spells it: a `dot_general`, or an
//! elementwise `multiply` of broadcasts, summed over some axes by a `reduce` (JAX's
//! `(h * k[..., None]).sum(-2)`) or not at all (an outer product,
//! `k[..., :, None] * u[..., None, :]`). Matchers read both the same way: which axes
//! contract, and the result's axes.

use crate::analysis::{
    atoms::{Atoms, Axis},
    operands::{dot_axes, miss, Miss},
    trace::{Node, Traced, Tracer},
};
use flywheel_dialect::stablehlo::{DotDimensionNumbers, DotGeneral, Reduce, Reducer};

pub struct Product<'c, 'a> {
    /// The `dot_general` or the `multiply`.
    pub node: Node<'c, 'a>,
    form: Form,
}

enum Form {
    Dot(DotDimensionNumbers),
    /// The multiply's axes the `reduce` sums over (none when nothing reduces it).
    Multiply {
        summed: Vec<usize>,
    },
}

impl<'c, 'a> Product<'c, 'a> {
    /// The product that computes `value`, if it is one.
    pub fn of(tracer: &Tracer<'c, 'a>, value: &Traced<'c, 'a>) -> Option<Self> {
        let node = tracer.producer(value)?;
        if node.is(DotGeneral::NAME) {
            let numbers = DotGeneral::from_operation(node.op)?.dimension_numbers().ok()?;
            return Some(Product { node, form: Form::Dot(numbers) });
        }
        if node.is("stablehlo.multiply") {
            return Some(Product { node, form: Form::Multiply { summed: Vec::new() } });
        }
        let reduce = Reduce::from_operation(node.op)?;
        if reduce.reducer() != Some(Reducer::Add) || tracer.splat(&node.operand(1)) != Some(0.0) {
            return None;
        }
        let multiply = tracer.producer_named(&node.operand(0), "stablehlo.multiply")?;
        let summed = reduce.dimensions().ok()?.into_iter().map(|d| d as usize).collect();
        Some(Product { node: multiply, form: Form::Multiply { summed } })
    }

    pub fn operand(&self, side: usize) -> Traced<'c, 'a> {
        self.node.operand(side)
    }

    /// How many axes the product sums over.
    pub fn contracted(&self) -> usize {
        match &self.form {
            Form::Dot(numbers) => numbers.lhs_contracting.len(),
            Form::Multiply { summed } => summed.len(),
        }
    }

    /// The axes a multiply's `reduce` sums (empty for a `dot_general`).
    pub fn summed_axes(&self) -> Vec<usize> {
        match &self.form {
            Form::Dot(_) => Vec::new(),
            Form::Multiply { summed } => summed.clone(),
        }
    }

    /// The result's axes from the operands' `lhs` and `rhs`, with contracted and batch
    /// axes unified.
    pub fn axes(&self, atoms: &mut Atoms, lhs: &[Axis], rhs: &[Axis]) -> Result<Vec<Axis>, Miss> {
        match &self.form {
            Form::Dot(numbers) => dot_axes(atoms, lhs, rhs, numbers),
            Form::Multiply { summed } => multiply_axes(atoms, summed, lhs, rhs),
        }
    }
}

/// The axes of `reduce(lhs * rhs, summed)`. A summed axis must vary in both operands:
/// summing one operand's broadcast is not a product.
fn multiply_axes(atoms: &mut Atoms, summed: &[usize], lhs: &[Axis], rhs: &[Axis]) -> Result<Vec<Axis>, Miss> {
    if lhs.len() != rhs.len() {
        return miss("a product's operands differ in rank");
    }
    let varies = |atoms: &Atoms, axis: &Axis| {
        let leaves = atoms.leaves(axis);
        !leaves.is_empty() && leaves.iter().all(|&atom| !atoms.is_broadcast(atom))
    };
    let mut result = Vec::new();
    for (position, (l, r)) in lhs.iter().zip(rhs).enumerate() {
        if summed.contains(&position) {
            if !varies(atoms, l) || !varies(atoms, r) {
                return miss("a product sums an axis only one operand has");
            }
            atoms.unify(l, r)?;
        } else {
            result.push(atoms.pair(l, r)?);
        }
    }
    Ok(result)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::atoms::broadcast_in_dim;

    /// `(h * k[..., None]).sum(-2)` on [H, K, V] and [H, K]: contracts K, keeps H and V.
    #[test]
    fn multiply_summed_is_a_contraction() {
        let mut atoms = Atoms::new();
        let h = atoms.source(&[4, 8, 16]);
        let k = atoms.source(&[4, 8]);
        let k_wide = broadcast_in_dim(&mut atoms, &k, &[0, 1], &[4, 8, 16]);
        let axes = multiply_axes(&mut atoms, &[1], &h, &k_wide).unwrap();
        assert_eq!(axes.len(), 2);
        assert!(atoms.same(&axes[0], &h[0]) && atoms.same(&axes[0], &k[0]));
        assert!(atoms.same(&axes[1], &h[2]));
        assert!(atoms.same(&h[1], &k[1]));
        // Summing over V, which k does not have, is not a product.
        let mut atoms = Atoms::new();
        let h = atoms.source(&[4, 8, 16]);
        let k = atoms.source(&[4, 8]);
        let k_wide = broadcast_in_dim(&mut atoms, &k, &[0, 1], &[4, 8, 16]);
        assert!(multiply_axes(&mut atoms, &[2], &h, &k_wide).is_err());
        // Not summed: an outer product of k [H, K] and u [H, V] keeps every axis.
        let mut atoms = Atoms::new();
        let (k, u) = (atoms.source(&[4, 8]), atoms.source(&[4, 16]));
        let k_wide = broadcast_in_dim(&mut atoms, &k, &[0, 1], &[4, 8, 16]);
        let u_wide = broadcast_in_dim(&mut atoms, &u, &[0, 2], &[4, 8, 16]);
        let outer = multiply_axes(&mut atoms, &[], &k_wide, &u_wide).unwrap();
        assert!(atoms.same(&outer[1], &k[1]) && atoms.same(&outer[2], &u[1]) && atoms.same(&k[0], &u[0]));
    }
}
