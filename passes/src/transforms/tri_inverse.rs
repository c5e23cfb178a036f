//! `flywheel-tri-inverse` (see [`PASS`]): in Gated DeltaNet kernels (FlyWheel tile IR), replaces the
//! forward substitution that inverts I + A (A strictly lower triangular, C x C) — an
//! `scf.for` of X ← I - A X from X = I, C - 1 serial products — by a blocked inverse:
//!
//! - the diagonal blocks of `block` rows (8 or 16), N = A restricted to them, by the
//!   doubling product (I - N)(I + N²)(I + N⁴)... (log2(block) levels, 2 log2(block) - 2
//!   products: the same sum of powers of -N, safe on blocks this small, where the powers
//!   stay bounded) or, with `diagonal=substitution`, by the same forward substitution:
//!   `block` - 1 steps, each still one C x C product; straight-line code either way;
//! - then merges that double the solved blocks, as MXU products: with Y the inverse of
//!   the diagonal blocks of size s and E the lower-left blocks of A inside each 2s block,
//!   (I + A)⁻¹ on the 2s blocks is Y - Y E Y (per 2s block: X21 = -X22 A21 X11).
//!
//! A may itself be block diagonal (A's select also keeps `row / n == column / n`: several
//! heads' n x n inverses stacked, as the Gated DeltaNet kernel does); then the loop needs
//! only n - 1 steps and the merges stop at n, and with `side-by-side` the inverse is
//! solved on those blocks laid side by side (n x size), n rows per product instead of size.
//!
//! Exact in exact arithmetic, and never a product or Neumann form over the whole chunk
//! (those overflow for correlated keys with β near 1). A loop is rewritten only when it is
//! certainly this inverse: X starts as the identity, each step yields I - A X with A
//! defined outside the loop as a select under the strict lower triangle, and the loop
//! runs at least C - 1 steps; anything else is left alone (with a remark if asked).

use crate::{
    options::Options,
    pass::{external_pass, Anchor, PassId, PassInfo},
};
use flywheel_dialect::diagnostics::{emit_error, emit_remark};
use flywheel_kernels::tile_ir::{
    block_ops, defined_by, float_splat, insert_before, kernel_call_locations, kernel_functions, nested_ops, ops_named,
    predicate, replace_op, splat_before,
};
use melior::ir::{
    attribute::{DenseI32ArrayAttribute, IntegerAttribute},
    operation::{OperationLike, OperationRef},
    BlockLike, RegionLike, Type, Value, ValueLike,
};
use melior::{pass::Pass, ContextRef};
use std::collections::HashSet;

static PASS_ID: PassId = PassId;

crate::pass_options! {
    pub struct TriInverseOptions {
        /// Rows of the diagonal blocks inverted alone (with doubling, 16 is faster but its powers N^8 cost accuracy
        /// with correlated keys)
        block: DiagonalBlock = ("block", "8"),
        /// How the diagonal blocks are inverted: forward substitution (block - 1 serial products) or the doubling
        /// product (I - N)(I + N^2)(I + N^4)... (log2(block) levels)
        diagonal: Diagonal = ("diagonal", "doubling"),
        /// With several heads' inverses stacked on the diagonal (flywheel-tile's gdn-heads), work on their blocks side
        /// by side (C x size, not size x size): each product pushes C rows through the MXU instead of size
        side_by_side: bool = ("side-by-side", "true"),
        /// Solve the inverses of consecutive loops (a grid step's chunks) together, product by product, so their
        /// independent chains share each product's latency; ops between that use an earlier inverse move after the last
        /// loop
        interleave: bool = ("interleave", "true"),
        /// In groups of at least this many inverses solved together (0: never), take the blocked inverse's products in
        /// one bf16 pass, then one Newton step at the loop's precision: X <- X + X R, R = I - (I + A) X (R is of the
        /// order of the one-pass error, so X R takes one pass too), on diagonal blocks of 4 (one step leaves blocks of
        /// 8 with the one-pass error of their powers N^4); only where the loop's products take more than one pass. The
        /// step's two serial products pay only where enough inverses share their latency
        refine_from: i64 = ("refine-from", "0"),
        /// Remark on each inverse rewritten and each loop left alone
        remarks: bool = ("remarks", "false"),
    }
}

pub const PASS: PassInfo = PassInfo {
    name: "flywheel-tri-inverse",
    summary: "Blocked triangular inverse in Gated DeltaNet kernels: small diagonal blocks by forward substitution, merged by MXU products",
    options: TriInverseOptions::SPECS,
    description: "In Gated DeltaNet kernels (FlyWheel tile IR), replaces the forward substitution that inverts \
I + A (A strictly lower triangular, C x C; C - 1 serial products) by a blocked inverse: small diagonal blocks \
inverted alone (by the doubling product (I - N)(I + N²)(I + N⁴)... or by substitution), then merges that double the \
solved blocks as MXU products (X21 = -X22 A21 X11). Exact in exact arithmetic, and never a product or Neumann form \
over the whole chunk, which overflows for correlated keys with β near 1. With refine-from, groups of inverses solved \
together take one bf16 pass and a Newton step. A loop is rewritten only when it is certainly this inverse; anything \
else is left alone, with a remark if asked.",
    create: |text| Ok(create(TriInverseOptions::parse(text)?)),
};

crate::choice! {
    /// Rows of the diagonal blocks inverted alone.
    pub enum DiagonalBlock {
        Eight = "8",
        Sixteen = "16",
    }
}

crate::choice! {
    /// How the diagonal blocks are inverted.
    pub enum Diagonal {
        Substitution = "substitution",
        Doubling = "doubling",
    }
}

fn create(options: TriInverseOptions) -> Pass {
    let block = match options.block {
        DiagonalBlock::Eight => 8,
        DiagonalBlock::Sixteen => 16,
    };
    let doubling = options.diagonal == Diagonal::Doubling;
    let TriInverseOptions { side_by_side, interleave, remarks, refine_from, .. } = options;
    external_pass(&PASS, &PASS_ID, Anchor::Any, move |op: OperationRef| {
        let Ok(refine_from) = usize::try_from(refine_from) else {
            emit_error(
                op.location(),
                &format!("flywheel-tri-inverse: refine-from must be at least 0, not {refine_from}"),
            );
            return false;
        };
        tri_inverse(op, Method { block, doubling, side_by_side, refine_from }, interleave, remarks)
    })
}

/// The diagonal blocks of a refined inverse: with blocks of 8, the one-pass error of their
/// powers N^4 survives the Newton step with correlated keys (`gated_delta::refined`;
/// docs/kernels/gated_delta.md has the errors).
const REFINED_BLOCK: i64 = 4;

/// How the blocked inverse is computed (the pass's options of those names).
#[derive(Clone, Copy)]
pub struct Method {
    pub block: i64,
    pub doubling: bool,
    pub side_by_side: bool,
    /// The fewest inverses solved together that are refined (0: none).
    pub refine_from: usize,
}

/// Rewrites every forward-substitution inverse in the Gated DeltaNet kernels directly in
/// `root`.
pub fn tri_inverse(root: OperationRef, method: Method, interleave: bool, remarks: bool) -> bool {
    let Method { block, doubling, side_by_side, .. } = method;
    let calls = kernel_call_locations(root);
    for (symbol, kernel) in kernel_functions(root, flywheel_kernels::gated_delta::KERNEL_NAME) {
        let location = calls.get(&symbol).copied().unwrap_or_else(|| kernel.location());
        let mut solvable = Vec::new();
        for for_op in ops_named(kernel, "scf.for") {
            match forward_substitution(for_op) {
                Ok(inverse) if inverse.blocks <= block => {
                    if remarks {
                        emit_remark(
                            location,
                            &format!(
                                "@{symbol}: a {0} x {0} inverse is already one diagonal block of {block}",
                                inverse.blocks
                            ),
                        );
                    }
                }
                Ok(inverse) if inverse.blocks % block != 0 => {
                    emit_error(
                        location,
                        &format!(
                            "@{symbol}: flywheel-tri-inverse: blocks of {block} do not tile a {0} x {0} inverse",
                            inverse.blocks
                        ),
                    );
                    return false;
                }
                Ok(inverse) => solvable.push(inverse),
                Err(reason) => {
                    if remarks {
                        emit_remark(location, &format!("@{symbol}: loop left alone: {reason}"));
                    }
                }
            }
        }
        let mut groups: Vec<Vec<ForwardSubstitution>> = Vec::new();
        for inverse in solvable {
            match groups.last_mut() {
                Some(group) if interleave && joins(group, &inverse) => group.push(inverse),
                _ => groups.push(vec![inverse]),
            }
        }
        for group in groups {
            let refined = method.refine_from > 0 && group.len() >= method.refine_from && refinable(&group[0]);
            let block = if refined { REFINED_BLOCK } else { block };
            if remarks {
                let inverse = &group[0];
                let merges = (inverse.blocks / block).ilog2();
                let heads = inverse.size / inverse.blocks;
                let diagonal = match (heads, side_by_side) {
                    (1, _) => String::new(),
                    (_, true) => format!(" ({heads} of them on the diagonal, solved side by side)"),
                    (_, false) => format!(" ({heads} of them on the diagonal)"),
                };
                let diagonal_method = if doubling { "the doubling product" } else { "forward substitution" };
                let together =
                    if group.len() > 1 { format!(", {} loops solved together", group.len()) } else { String::new() };
                let refinement = match (refined, method.refine_from) {
                    (true, _) => ", products in one bf16 pass and one Newton step".to_owned(),
                    (false, 0) => String::new(),
                    _ if !refinable(inverse) => ", not refined (its products already take one pass)".to_owned(),
                    (false, from) => format!(", not refined ({} solved together, fewer than {from})", group.len()),
                };
                emit_remark(location, &format!("@{symbol}: {0} x {0} triangular inverse{diagonal} blocked: diagonal blocks of {block} by {diagonal_method}, {merges} merge(s){together}{refinement}", inverse.blocks));
            }
            blocked(&group, Method { block, ..method }, refined);
        }
    }
    true
}

/// Whether `next` can be solved together with `group` (the inverses of earlier loops):
/// the same shape and precision, in the same block, and every op between the group's
/// last loop and `next` that uses the group's results (directly or through each other)
/// free of memory writes and regions, and not needed by `next`. Those ops are then moved
/// after `next`, so the group's results are used only after it.
fn joins(group: &[ForwardSubstitution], next: &ForwardSubstitution) -> bool {
    let last = group.last().expect("a group is never empty");
    if (last.size, last.blocks, &last.product_attributes) != (next.size, next.blocks, &next.product_attributes) {
        return false;
    }
    let (Some(block), Some(next_block)) = (last.for_op.block(), next.for_op.block()) else { return false };
    if block.to_raw().ptr != next_block.to_raw().ptr {
        return false;
    }
    let ops = block_ops(block);
    let position = |op: OperationRef| ops.iter().position(|other| other.to_raw().ptr == op.to_raw().ptr);
    let (Some(from), Some(to)) = (position(last.for_op), position(next.for_op)) else { return false };
    if from > to {
        return false;
    }
    let mut slice: HashSet<usize> =
        group.iter().map(|inverse| inverse.for_op.result(0).expect("one result").to_raw().ptr as usize).collect();
    let uses_slice = |op: OperationRef, slice: &HashSet<usize>| {
        nested_ops(op).iter().any(|nested| {
            (0..nested.operand_count())
                .any(|i| slice.contains(&(nested.operand(i).expect("counted").to_raw().ptr as usize)))
        })
    };
    let mut dependent = Vec::new();
    for &op in &ops[from + 1..to] {
        if !uses_slice(op, &slice) {
            continue;
        }
        let name = op.name().as_string_ref().as_str().unwrap_or_default().to_owned();
        if op.region_count() > 0 || name.contains("store") || name.contains("write") {
            return false;
        }
        slice.extend((0..op.result_count()).map(|i| op.result(i).expect("counted").to_raw().ptr as usize));
        dependent.push(op);
    }
    if uses_slice(next.for_op, &slice) {
        return false;
    }
    // Moved in reverse, each right after `next`: they keep their order.
    for op in dependent.iter().rev() {
        // SAFETY: live ops of one block, moved within it after every op they use.
        unsafe { mlir_sys::mlirOperationMoveAfter(op.to_raw(), next.for_op.to_raw()) };
    }
    true
}

/// Whether the loop's products take more than one pass (f32, without a precision, or
/// bf16x3), so that refining one-pass products pays.
fn refinable(inverse: &ForwardSubstitution) -> bool {
    !inverse.product_attributes.iter().any(|(name, value)| name == "precision" && value == "\"bf16\"")
}

/// A matched forward substitution: the loop, A, and the identity it starts from.
struct ForwardSubstitution<'c, 'a> {
    for_op: OperationRef<'c, 'a>,
    a: Value<'c, 'a>,
    identity: Value<'c, 'a>,
    /// The step's `flywheel.matmul` attributes besides transpose_rhs (its precision), as
    /// (name, MLIR text), for the products that replace it.
    product_attributes: Vec<(String, String)>,
    /// A is size x size, zero outside diagonal blocks of `blocks` rows.
    size: i64,
    blocks: i64,
}

fn integer(value: Value) -> Option<i64> {
    let constant = defined_by(value, "arith.constant")?;
    IntegerAttribute::try_from(constant.attribute("value").ok()?).ok().map(|integer| integer.value())
}

/// The `tpu.iota` dimension that produces `value`.
fn iota_dimension(value: Value) -> Option<i32> {
    let iota = defined_by(value, "tpu.iota")?;
    DenseI32ArrayAttribute::try_from(iota.attribute("dimensions").ok()?).ok()?.element(0).ok()
}

/// The `arith.cmpi` predicate of `value` when it compares the row index with the column
/// index of the same tile (iota 0 against iota 1).
fn row_column_test(value: Value) -> Option<i64> {
    let cmpi = defined_by(value, "arith.cmpi")?;
    let sides = (iota_dimension(cmpi.operand(0).ok()?)?, iota_dimension(cmpi.operand(1).ok()?)?);
    (sides == (0, 1)).then(|| predicate(cmpi))?
}

/// The diagonal blocks a select condition keeps A to: `row > column` (the whole tile),
/// or `row > column` and `row / n == column / n` (blocks of n).
fn strictly_lower_blocks(condition: Value, size: i64) -> Option<i64> {
    if row_column_test(condition) == Some(4) {
        return Some(size);
    }
    let and = defined_by(condition, "arith.andi")?;
    let (x, y) = (and.operand(0).ok()?, and.operand(1).ok()?);
    let (strict, same) = if row_column_test(x) == Some(4) { (x, y) } else { (y, x) };
    (row_column_test(strict) == Some(4)).then_some(())?;
    same_block(same).filter(|&n| n > 0 && size % n == 0)
}

/// n when `value` is `row / n == column / n` (iota 0 and iota 1, each divided by a
/// splat n).
fn same_block(value: Value) -> Option<i64> {
    let cmpi = defined_by(value, "arith.cmpi")?;
    (predicate(cmpi)? == 0).then_some(())?;
    let divided = |side: usize, dimension: i32| -> Option<f64> {
        let division = defined_by(cmpi.operand(side).ok()?, "arith.divsi")?;
        (iota_dimension(division.operand(0).ok()?)? == dimension).then_some(())?;
        float_splat(division.operand(1).ok()?)
    };
    let (rows, columns) = (divided(0, 0)?, divided(1, 1)?);
    (rows == columns).then_some(rows as i64)
}

/// `select(row <predicate> column, x, 0)`: returns x.
fn selected_by<'c: 'a, 'a>(value: Value<'c, 'a>, predicate: i64) -> Option<Value<'c, 'a>> {
    let select = defined_by(value, "arith.select")?;
    let kept = select.operand(1).ok()?;
    (row_column_test(select.operand(0).ok()?)? == predicate && float_splat(select.operand(2).ok()?)? == 0.0)
        .then_some(kept)
}

fn is_identity(value: Value) -> bool {
    selected_by(value, 0).and_then(float_splat) == Some(1.0)
}

/// Square f32 vector size of `r#type`, if it is one.
fn square_size(r#type: Type) -> Option<i64> {
    let text = r#type.to_string();
    let inner = text.strip_prefix("vector<")?.strip_suffix("xf32>")?;
    let (rows, columns) = inner.split_once('x')?;
    (rows == columns).then(|| rows.parse().ok())?
}

fn forward_substitution<'c: 'a, 'a>(for_op: OperationRef<'c, 'a>) -> Result<ForwardSubstitution<'c, 'a>, String> {
    let miss = |reason: &str| Err(reason.to_owned());
    if for_op.operand_count() != 4 || for_op.result_count() != 1 {
        return miss("not a loop carrying one value");
    }
    let operand = |i: usize| for_op.operand(i).expect("counted");
    let Some(size) = square_size(operand(3).r#type()) else {
        return miss("the carried value is not a square f32 tile");
    };
    if !is_identity(operand(3)) {
        return miss("the carried value does not start as the identity");
    }
    let (Some(lower), Some(upper), Some(1)) = (integer(operand(0)), integer(operand(1)), integer(operand(2))) else {
        return miss("the bounds are not constants with step 1");
    };
    let body = for_op.region(0).ok().and_then(|region| region.first_block()).ok_or("no body")?;
    let ops = block_ops(body);
    let Some(yield_op) = ops.last().filter(|op| op.name().as_string_ref().as_str() == Ok("scf.yield")) else {
        return miss("no yield");
    };
    let next = yield_op.operand(0).map_err(|_| "the loop yields nothing")?;
    let subtraction = defined_by(next, "arith.subf").ok_or("the step is not I - A X")?;
    if !is_identity(subtraction.operand(0).expect("binary")) {
        return miss("the step does not subtract from the identity");
    }
    let product =
        defined_by(subtraction.operand(1).expect("binary"), "flywheel.matmul").ok_or("the step is not I - A X")?;
    let transposed = product
        .attribute("transpose_rhs")
        .ok()
        .and_then(|a| IntegerAttribute::try_from(a).ok())
        .is_none_or(|flag| flag.value() != 0);
    let carried: Value = body.argument(1).map_err(|_| "no carried argument")?.into();
    let (a, x, accumulator) =
        (product.operand(0).expect("lhs"), product.operand(1).expect("rhs"), product.operand(2).expect("acc"));
    if transposed || x != carried || float_splat(accumulator) != Some(0.0) {
        return miss("the step's product is not A X");
    }
    let select = defined_by(a, "arith.select").ok_or("A is not a select")?;
    let blocks = (float_splat(select.operand(2).expect("ternary")) == Some(0.0))
        .then(|| strictly_lower_blocks(select.operand(0).expect("ternary"), size))
        .flatten()
        .ok_or("A is not selected under the strict lower triangle")?;
    if select.parent_operation() == Some(for_op) {
        return miss("A is computed inside the loop");
    }
    // A block of n rows is nilpotent of index n: n - 1 steps settle it.
    if upper - lower < blocks - 1 {
        return miss(&format!("{} steps do not settle all {blocks} rows", upper - lower));
    }
    let product_attributes = product
        .attributes()
        .filter(|(name, _)| name.as_string_ref().as_str() != Ok("transpose_rhs"))
        .map(|(name, value)| (name.as_string_ref().as_str().unwrap_or_default().to_owned(), value.to_string()))
        .collect();
    Ok(ForwardSubstitution { for_op, a, identity: operand(3), product_attributes, size, blocks })
}

/// Replaces matched forward substitutions (of one shape and precision, all defined
/// before the last loop and used after it) by their blocked inverses, straight-line code
/// where the last loop was (no loop, so the scheduler can interleave it with independent
/// work); several are solved together, product by product, so each product's latency is
/// shared by independent chains.
///
/// With several heads' inverses on the diagonal and `side_by_side`, the work is done on
/// those blocks laid side by side, `blocks` x size (row i, columns of head h: row h
/// blocks + i of the stacked tile): a product of two block-diagonal tiles is the
/// side-by-side left one times the stacked right one, so each product pushes `blocks`
/// rows through the MXU instead of size; the right operands are stacked back (copies
/// masked to the diagonal blocks), and so is the result.
///
/// Refined (`refine`: at least `refine_from` inverses, products of more than one pass, on
/// diagonal blocks of `REFINED_BLOCK`), the products take one bf16 pass and one Newton
/// step at the loop's precision restores the accuracy: the residual
/// R = I - (I + A) X of the one-pass inverse X is of the order of bf16's rounding, and
/// X + X R has an error of the order of its square.
fn blocked<'c: 'a, 'a>(inverses: &[ForwardSubstitution<'c, 'a>], method: Method, refine: bool) {
    let Method { block, doubling, side_by_side, .. } = method;
    let last = inverses.last().expect("at least one inverse");
    let solver = Solver::new(last, side_by_side);
    let a: Vec<Value> = inverses.iter().map(|inverse| solver.side_by_side_of(inverse.a)).collect();
    let identity = solver.identities(inverses);
    // The products' attributes: at the loop's precision (`precise`), or, refining, one
    // bf16 pass.
    let mut precise = vec![("transpose_rhs", "false".to_owned())];
    precise.extend(last.product_attributes.iter().map(|(name, value)| (name.as_str(), value.clone())));
    let mut one_pass: Vec<(&str, String)> = precise.iter().filter(|(name, _)| *name != "precision").cloned().collect();
    one_pass.push(("precision", "\"bf16\"".to_owned()));
    let attributes = if refine { &one_pass } else { &precise };
    let x = solver.diagonal_blocks(&a, &identity, block, doubling, attributes);
    let mut x = solver.merged(&a, x, block, attributes);
    if refine {
        x = solver.refined(&a, &identity, x, &precise, &one_pass);
    }
    solver.replace_loops(inverses, x);
}

/// A blocked inverse being written before `at` (the last loop): its shapes, index tiles
/// and stackers. Each step works on one tile per inverse, `rows` x `size`: the heads'
/// diagonal blocks of `blocks` rows side by side when `heads` > 1.
struct Solver<'c, 'a> {
    at: OperationRef<'c, 'a>,
    size: i64,
    blocks: i64,
    heads: i64,
    rows: i64,
    /// Columns of the side-by-side tiles one product takes: a lane tile of 128 (whole
    /// heads) where such tiles divide the row, so each product's right operand is a 128 x
    /// 128 block diagonal tile, not size x size; the groups' products are independent and
    /// issued together.
    group: i64,
    /// f32, i32 and i1 `rows` x `size` tiles, and f32 `rows` x `group` parts of them.
    tile: Type<'c>,
    ints: Type<'c>,
    bools: Type<'c>,
    part: Type<'c>,
    /// A tile's row and column indices, the column counted within a head's block.
    row: Value<'c, 'a>,
    column: Value<'c, 'a>,
    /// Side-by-side tiles stacked back, whole and (when `group` < `size`) a part.
    stacked: Stacker<'c, 'a>,
    stacked_group: Option<Stacker<'c, 'a>>,
}

/// Stacks back a `rows` x `width` tile of heads' blocks side by side: copies of it
/// masked to the diagonal blocks of a `width` x `width` tile (with one head, the tile
/// itself).
struct Stacker<'c, 'a> {
    at: OperationRef<'c, 'a>,
    square: Type<'c>,
    copies: usize,
    diagonal_blocks: Option<Value<'c, 'a>>,
}

impl<'c, 'a> Stacker<'c, 'a> {
    fn new(at: OperationRef<'c, 'a>, context: &ContextRef<'c>, width: i64, heads: i64, blocks: i64) -> Self {
        let (square, ints, bools) = (
            vector_type(context, width, width, "f32"),
            vector_type(context, width, width, "i32"),
            vector_type(context, width, width, "i1"),
        );
        let diagonal_blocks =
            (heads > 1).then(|| same_span_mask(at, (iota(at, 0, ints), iota(at, 1, ints)), blocks, ints, bools));
        Stacker { at, square, copies: (width / blocks) as usize, diagonal_blocks }
    }

    fn stack(&self, value: Value<'c, 'a>) -> Value<'c, 'a> {
        let Some(diagonal_blocks) = self.diagonal_blocks else { return value };
        let (at, square) = (self.at, self.square);
        let copies =
            insert_before(at, "tpu.concatenate", &vec![value; self.copies], square, &[("dimension", "0 : i32".into())]);
        insert_before(at, "arith.select", &[diagonal_blocks, copies, splat_before(at, 0.0, square)], square, &[])
    }
}

fn vector_type<'c>(context: &ContextRef<'c>, rows: i64, columns: i64, element: &str) -> Type<'c> {
    // SAFETY: `context` is the live context of the ops being rewritten.
    Type::parse(unsafe { context.to_ref() }, &format!("vector<{rows}x{columns}x{element}>")).expect("a vector type")
}

fn int_splat<'c, 'a>(at: OperationRef<'c, 'a>, value: i64, r#type: Type<'c>) -> Value<'c, 'a> {
    insert_before(at, "arith.constant", &[], r#type, &[("value", format!("dense<{value}> : {type}"))])
}

fn iota<'c, 'a>(at: OperationRef<'c, 'a>, dimension: i32, r#type: Type<'c>) -> Value<'c, 'a> {
    insert_before(at, "tpu.iota", &[], r#type, &[("dimensions", format!("array<i32: {dimension}>"))])
}

/// `index / span`.
fn block_index<'c, 'a>(at: OperationRef<'c, 'a>, index: Value<'c, 'a>, span: i64, r#type: Type<'c>) -> Value<'c, 'a> {
    insert_before(at, "arith.divsi", &[index, int_splat(at, span, r#type)], r#type, &[])
}

/// `row / span == column / span`.
fn same_span_mask<'c, 'a>(
    at: OperationRef<'c, 'a>,
    (row, column): (Value<'c, 'a>, Value<'c, 'a>),
    span: i64,
    r#type: Type<'c>,
    bools: Type<'c>,
) -> Value<'c, 'a> {
    insert_before(
        at,
        "arith.cmpi",
        &[block_index(at, row, span, r#type), block_index(at, column, span, r#type)],
        bools,
        &[("predicate", "0 : i64".into())],
    )
}

impl<'c, 'a> Solver<'c, 'a> {
    /// The shapes of `last`'s inverse, its row and column indices, and the stackers.
    fn new(last: &ForwardSubstitution<'c, 'a>, side_by_side: bool) -> Self {
        let (size, blocks) = (last.size, last.blocks);
        let heads = if side_by_side { size / blocks } else { 1 };
        let rows = size / heads;
        let context = last.for_op.context();
        let (tile, ints, bools) = (
            vector_type(&context, rows, size, "f32"),
            vector_type(&context, rows, size, "i32"),
            vector_type(&context, rows, size, "i1"),
        );
        let at = last.for_op;
        let (row, mut column) = (iota(at, 0, ints), iota(at, 1, ints));
        if heads > 1 {
            let head_start = insert_before(
                at,
                "arith.muli",
                &[block_index(at, column, blocks, ints), int_splat(at, blocks, ints)],
                ints,
                &[],
            );
            column = insert_before(at, "arith.subi", &[column, head_start], ints, &[]);
        }
        let group = if heads > 1 && 128 % blocks == 0 && size % 128 == 0 { 128 } else { size };
        let stacked = Stacker::new(at, &context, size, heads, blocks);
        let stacked_group = (group < size).then(|| Stacker::new(at, &context, group, heads, blocks));
        let part = vector_type(&context, rows, group, "f32");
        Solver { at, size, blocks, heads, rows, group, tile, ints, bools, part, row, column, stacked, stacked_group }
    }

    /// `row / span == column / span` within each head's block.
    fn same_span(&self, span: i64) -> Value<'c, 'a> {
        same_span_mask(self.at, (self.row, self.column), span, self.ints, self.bools)
    }

    /// An f32 elementwise op on one tile per inverse.
    fn each(&self, name: &str, xs: &[Value<'c, 'a>], ys: &[Value<'c, 'a>]) -> Vec<Value<'c, 'a>> {
        xs.iter().zip(ys).map(|(&x, &y)| self.binary(name, x, y)).collect()
    }

    fn binary(&self, name: &str, x: Value<'c, 'a>, y: Value<'c, 'a>) -> Value<'c, 'a> {
        insert_before(self.at, name, &[x, y], self.tile, &[("fastmath", "#arith.fastmath<none>".into())])
    }

    /// A stacked tile's diagonal blocks side by side: the sum of its row blocks (zero off
    /// the diagonal blocks).
    fn side_by_side_of(&self, stacked: Value<'c, 'a>) -> Value<'c, 'a> {
        let (at, rows, size) = (self.at, self.rows, self.size);
        if self.heads == 1 {
            return stacked;
        }
        let row_block = |head: i64| {
            let attributes = [
                ("offsets", format!("[{}, 0]", head * rows)),
                ("sizes", format!("[{rows}, {size}]")),
                ("strides", "[1, 1]".to_owned()),
            ];
            insert_before(at, "vector.extract_strided_slice", &[stacked], self.tile, &attributes)
        };
        (1..self.heads).fold(row_block(0), |sum, head| self.binary("arith.addf", sum, row_block(head)))
    }

    /// The inverses' identities, each laid side by side once.
    fn identities(&self, inverses: &[ForwardSubstitution<'c, 'a>]) -> Vec<Value<'c, 'a>> {
        let mut identities: Vec<(Value, Value)> = Vec::new();
        inverses
            .iter()
            .map(|inverse| match identities.iter().find(|(stacked, _)| *stacked == inverse.identity) {
                Some(&(_, side)) => side,
                None => {
                    let side = self.side_by_side_of(inverse.identity);
                    identities.push((inverse.identity, side));
                    side
                }
            })
            .collect()
    }

    /// Each of `a` where `keep`, else zero.
    fn masked(&self, a: &[Value<'c, 'a>], keep: Value<'c, 'a>) -> Vec<Value<'c, 'a>> {
        let (at, tile) = (self.at, self.tile);
        a.iter()
            .map(|&a| insert_before(at, "arith.select", &[keep, a, splat_before(at, 0.0, tile)], tile, &[]))
            .collect()
    }

    /// Columns `first` .. `first` + `group` of a side-by-side tile.
    fn columns(&self, value: Value<'c, 'a>, first: i64) -> Value<'c, 'a> {
        let attributes = [
            ("offsets", format!("[0, {first}]")),
            ("sizes", format!("[{}, {}]", self.rows, self.group)),
            ("strides", "[1, 1]".to_owned()),
        ];
        insert_before(self.at, "vector.extract_strided_slice", &[value], self.part, &attributes)
    }

    /// x y per inverse, both block diagonal, x (and the product) side by side when there
    /// are several heads, in products taking `attributes`: one per `group` columns where
    /// those are fewer than `size`.
    fn product(&self, attributes: &[(&str, String)], xs: &[Value<'c, 'a>], ys: &[Value<'c, 'a>]) -> Vec<Value<'c, 'a>> {
        let at = self.at;
        let Some(stacked_group) = &self.stacked_group else {
            return xs
                .iter()
                .zip(ys)
                .map(|(&x, &y)| {
                    insert_before(
                        at,
                        "flywheel.matmul",
                        &[x, self.stacked.stack(y), splat_before(at, 0.0, self.tile)],
                        self.tile,
                        attributes,
                    )
                })
                .collect();
        };
        let mut products = vec![Vec::new(); xs.len()];
        for index in 0..self.size / self.group {
            for (inverse, (&x, &y)) in xs.iter().zip(ys).enumerate() {
                let (x, y) = (self.columns(x, index * self.group), self.columns(y, index * self.group));
                products[inverse].push(insert_before(
                    at,
                    "flywheel.matmul",
                    &[x, stacked_group.stack(y), splat_before(at, 0.0, self.part)],
                    self.part,
                    attributes,
                ));
            }
        }
        products
            .iter()
            .map(|parts| insert_before(at, "tpu.concatenate", parts, self.tile, &[("dimension", "1 : i32".into())]))
            .collect()
    }

    /// The inverses of the diagonal blocks of `block` rows (N: A restricted to them,
    /// nilpotent of index `block`): `block` - 1 steps of X ← I - N X, or the doubling
    /// product (I - N)(I + N²)(I + N⁴)... (the same sum of powers of -N, on blocks small
    /// enough that the powers stay bounded).
    fn diagonal_blocks(
        &self,
        a: &[Value<'c, 'a>],
        identity: &[Value<'c, 'a>],
        block: i64,
        doubling: bool,
        attributes: &[(&str, String)],
    ) -> Vec<Value<'c, 'a>> {
        let diagonal = self.masked(a, self.same_span(block));
        if doubling {
            let mut x = self.each("arith.subf", identity, &diagonal);
            let (mut power, mut exponent) = (diagonal, 1);
            while 2 * exponent < block {
                power = self.product(attributes, &power, &power);
                exponent *= 2;
                x = self.product(attributes, &x, &self.each("arith.addf", identity, &power));
            }
            x
        } else {
            let mut x = identity.to_vec();
            for _ in 1..block {
                x = self.each("arith.subf", identity, &self.product(attributes, &diagonal, &x));
            }
            x
        }
    }

    /// Merges of the solved diagonal blocks of `block` rows up to `blocks`: X ← X - X (E
    /// X), E the lower-left s-blocks of A inside each 2s block.
    fn merged(
        &self,
        a: &[Value<'c, 'a>],
        mut x: Vec<Value<'c, 'a>>,
        block: i64,
        attributes: &[(&str, String)],
    ) -> Vec<Value<'c, 'a>> {
        let mut span = block;
        while span < self.blocks {
            let apart = insert_before(
                self.at,
                "arith.xori",
                &[self.same_span(2 * span), self.same_span(span)],
                self.bools,
                &[],
            );
            let lower_left = self.masked(a, apart);
            x = self.each("arith.subf", &x, &self.product(attributes, &x, &self.product(attributes, &lower_left, &x)));
            span *= 2;
        }
        x
    }

    /// One Newton step X + X R, R = I - (I + A) X at the loop's precision (`precise`),
    /// after a blocked inverse in `one_pass` products.
    fn refined(
        &self,
        a: &[Value<'c, 'a>],
        identity: &[Value<'c, 'a>],
        x: Vec<Value<'c, 'a>>,
        precise: &[(&str, String)],
        one_pass: &[(&str, String)],
    ) -> Vec<Value<'c, 'a>> {
        let residual = self.each("arith.subf", &self.each("arith.subf", identity, &x), &self.product(precise, a, &x));
        self.each("arith.addf", &x, &self.product(one_pass, &x, &residual))
    }

    /// Each loop replaced by its inverse stacked back, and its bound constants erased
    /// unless something else uses them.
    fn replace_loops(&self, inverses: &[ForwardSubstitution<'c, 'a>], x: Vec<Value<'c, 'a>>) {
        for (inverse, x) in inverses.iter().zip(x) {
            let x = self.stacked.stack(x);
            let for_op = inverse.for_op;
            let mut bounds: Vec<Value> = (0..3).map(|i| for_op.operand(i).expect("a loop's bounds")).collect();
            bounds.sort_by_key(|bound| bound.to_raw().ptr as usize);
            bounds.dedup_by_key(|bound| bound.to_raw().ptr as usize);
            replace_op(for_op, x);
            for bound in bounds {
                if let Some(constant) =
                    defined_by(bound, "arith.constant").filter(|_| flywheel_kernels::tile_ir::users(bound).is_empty())
                {
                    // SAFETY: an op without uses, erased once (the bounds are distinct values).
                    unsafe { mlir_sys::mlirOperationDestroy(constant.to_raw()) };
                }
            }
        }
    }
}
