//! Reading and rewriting FlyWheel tile IR (the kernel modules `flywheel-tile` writes):
//! finding the kernels, following values to their users, and building ops in place.

use flywheel_dialect::ir::string_attribute;
use flywheel_dialect::{
    ops::{AttentionOp, GatedDeltaOp},
    stablehlo::splat_value,
};
use melior::ir::{
    attribute::{FlatSymbolRefAttribute, IntegerAttribute},
    operation::{Operation, OperationBuilder, OperationLike, OperationMutLike, OperationRef, WalkOrder, WalkResult},
    Attribute, BlockLike, BlockRef, Location, RegionLike, Type, TypeLike, Value, ValueLike,
};
use melior::{ir::Module, Context};
use std::{cell::RefCell, collections::HashMap, rc::Rc};

/// Every `flywheel.attention` under `root`, in post-order, as raw handles: a pass that
/// erases or edits one keeps the others valid.
pub fn attention_ops(root: OperationRef) -> Vec<mlir_sys::MlirOperation> {
    raw_ops_where(root, |op| AttentionOp::from_operation(op).is_some())
}

/// Every `flywheel.gated_delta` under `root`, like `attention_ops`.
pub fn gated_delta_ops(root: OperationRef) -> Vec<mlir_sys::MlirOperation> {
    raw_ops_where(root, |op| GatedDeltaOp::from_operation(op).is_some())
}

fn raw_ops_where(root: OperationRef, wanted: impl Fn(OperationRef) -> bool) -> Vec<mlir_sys::MlirOperation> {
    let mut ops = Vec::new();
    root.walk(WalkOrder::PostOrder, |op| {
        if wanted(op) {
            ops.push(op.to_raw());
        }
        WalkResult::Advance
    });
    ops
}

/// The kernel functions named `name` (with Mosaic's `window_params`) of the kernel
/// modules directly in `root`, each with the module's symbol.
pub fn kernel_functions<'c, 'a>(root: OperationRef<'c, 'a>, name: &str) -> Vec<(String, OperationRef<'c, 'a>)> {
    let mut kernels = Vec::new();
    for module in children(root) {
        if module.name().as_string_ref().as_str() != Ok("builtin.module")
            || module.attribute("stable_mosaic.version").is_err()
        {
            continue;
        }
        let symbol = symbol_name(&module).unwrap_or_default();
        kernels.extend(
            children(module)
                .into_iter()
                .filter(|function| {
                    function.attribute("window_params").is_ok() && symbol_name(function).as_deref() == Some(name)
                })
                .map(|function| (symbol.clone(), function)),
        );
    }
    kernels
}

fn symbol_name(op: &OperationRef) -> Option<String> {
    op.attribute("sym_name").ok().and_then(string_attribute)
}

/// Where each kernel module is called from (the attention it came from).
pub fn kernel_call_locations<'c>(root: OperationRef<'c, '_>) -> HashMap<String, Location<'c>> {
    let mut calls = HashMap::new();
    root.walk(WalkOrder::PreOrder, |op| {
        if let Some(symbol) = op.attribute("kernel").ok().and_then(|a| FlatSymbolRefAttribute::try_from(a).ok()) {
            calls.insert(symbol.value().to_owned(), op.location().to_raw());
        }
        WalkResult::Advance
    });
    // SAFETY: locations are owned by the context, which outlives the pass.
    calls.into_iter().map(|(symbol, location)| (symbol, unsafe { Location::from_raw(location) })).collect()
}

/// The outermost op above `op` (the program's module).
pub fn top_module<'c, 'a>(op: OperationRef<'c, 'a>) -> Option<OperationRef<'c, 'a>> {
    let mut top = op.parent_operation()?;
    while let Some(parent) = top.parent_operation() {
        top = parent;
    }
    Some(top)
}

/// The ops directly in `op`'s first region's first block.
fn children<'c, 'a>(op: OperationRef<'c, 'a>) -> Vec<OperationRef<'c, 'a>> {
    op.region(0).ok().and_then(|region| region.first_block()).map(block_ops).unwrap_or_default()
}

/// The ops of `block`, in order.
pub fn block_ops<'c, 'a>(block: BlockRef<'c, 'a>) -> Vec<OperationRef<'c, 'a>> {
    let mut ops = Vec::new();
    let mut next = block.first_operation();
    while let Some(op) = next {
        ops.push(op);
        next = op.next_in_block();
    }
    ops
}

/// Every op named `name` inside `op`, in program order.
pub fn ops_named<'c, 'a>(op: OperationRef<'c, 'a>, name: &str) -> Vec<OperationRef<'c, 'a>> {
    nested_ops(op).into_iter().filter(|inner| inner.name().as_string_ref().as_str() == Ok(name)).collect()
}

/// `op` and every op nested in its regions, in pre-order.
pub fn nested_ops<'c, 'a>(op: OperationRef<'c, 'a>) -> Vec<OperationRef<'c, 'a>> {
    let mut found = Vec::new();
    op.walk(melior::ir::operation::WalkOrder::PreOrder, |inner| {
        found.push(inner.to_raw());
        melior::ir::operation::WalkResult::Advance
    });
    // SAFETY: the ops were just found live in `op`, which outlives the returned refs.
    found.into_iter().map(|raw| unsafe { OperationRef::from_raw(raw) }).collect()
}

/// The ops using `value`, with the operand position of each use.
pub fn users<'c, 'a>(value: Value<'c, 'a>) -> Vec<(OperationRef<'c, 'a>, usize)> {
    use mlir_sys::{
        mlirOpOperandGetNextUse, mlirOpOperandGetOperandNumber, mlirOpOperandGetOwner, mlirOpOperandIsNull,
        mlirValueGetFirstUse,
    };
    let mut uses = Vec::new();
    // SAFETY: the use list of a live value; each owner is a live op.
    unsafe {
        let mut operand = mlirValueGetFirstUse(value.to_raw());
        while !mlirOpOperandIsNull(operand) {
            uses.push((
                OperationRef::from_raw(mlirOpOperandGetOwner(operand)),
                mlirOpOperandGetOperandNumber(operand) as usize,
            ));
            operand = mlirOpOperandGetNextUse(operand);
        }
    }
    uses
}

/// The ops using `value`, each once (an op using it at several operands is listed once).
pub fn distinct_users<'c, 'a>(value: Value<'c, 'a>) -> Vec<OperationRef<'c, 'a>> {
    let mut distinct: Vec<OperationRef> = Vec::new();
    for (user, _) in users(value) {
        if !distinct.contains(&user) {
            distinct.push(user);
        }
    }
    distinct
}

/// The name of `op`, e.g. `arith.mulf`.
pub fn op_name(op: OperationRef) -> String {
    op.name().as_string_ref().as_str().unwrap_or("").to_owned()
}

/// A detached copy of `op` (regions included), for the caller to insert.
pub fn cloned<'c>(op: OperationRef<'c, '_>) -> Operation<'c> {
    // SAFETY: a fresh clone of a live op, owned by the returned Operation until inserted.
    unsafe { Operation::from_raw(mlir_sys::mlirOperationClone(op.to_raw())) }
}

/// The defining op of `value` if it is named `name`.
pub fn defined_by<'c, 'a>(value: Value<'c, 'a>, name: &str) -> Option<OperationRef<'c, 'a>> {
    defining_op(value).filter(|op| op.name().as_string_ref().as_str() == Ok(name))
}

/// The op whose result `value` is (None for a block argument).
pub fn defining_op<'c, 'a>(value: Value<'c, 'a>) -> Option<OperationRef<'c, 'a>> {
    let is_result = unsafe { mlir_sys::mlirValueIsAOpResult(value.to_raw()) };
    is_result.then(|| unsafe { OperationRef::from_raw(mlir_sys::mlirOpResultGetOwner(value.to_raw())) })
}

/// The op right after `value`'s definition (the first op of its block for a block
/// argument): where to put what every use of `value` shares.
pub fn after_definition<'c: 'a, 'a>(value: Value<'c, 'a>) -> OperationRef<'c, 'a> {
    match defining_op(value) {
        Some(op) => op.next_in_block().expect("a terminator follows every op"),
        None => {
            // SAFETY: a value without a defining op is a block argument of a live block.
            let block = unsafe { BlockRef::from_raw(mlir_sys::mlirBlockArgumentGetOwner(value.to_raw())) };
            block.first_operation().expect("a block with arguments has ops")
        }
    }
}

/// The value of an `arith.constant` splat of floats.
pub fn float_splat(value: Value) -> Option<f64> {
    splat_value(defined_by(value, "arith.constant")?.attribute("value").ok()?)
}

/// Inserts `name(operands) {attributes}` of one result of `result` before `anchor`
/// (attributes as MLIR text); returns the result.
pub fn insert_before<'c, 'a>(
    anchor: OperationRef<'c, 'a>,
    name: &str,
    operands: &[Value<'c, 'a>],
    result: Type<'c>,
    attributes: &[(&str, String)],
) -> Value<'c, 'a> {
    let op = OperationBuilder::new(name, anchor.location())
        .add_operands(operands)
        .add_results(&[result])
        .build()
        .expect("a tile IR op builds");
    let block = anchor.block().expect("the anchor is in a block");
    let op = block.insert_operation_before(anchor, op);
    for (key, text) in attributes {
        set_attribute(op, key, text);
    }
    op.result(0).expect("one result").into()
}

/// Sets attribute `name` of `op` to the attribute written `text` in MLIR syntax.
pub fn set_attribute(op: OperationRef, name: &str, text: &str) {
    // The ContextRef must outlive the &Context made from it.
    let context = op.context();
    let attribute =
        Attribute::parse(unsafe { context.to_ref() }, text).unwrap_or_else(|| panic!("attribute {text} parses"));
    mutable(op).set_attribute(name, attribute);
}

/// The predicate of a comparison (`arith.cmpi`, `arith.cmpf`): 3 is `sle` for cmpi.
pub fn predicate(comparison: OperationRef) -> Option<i64> {
    IntegerAttribute::try_from(comparison.attribute("predicate").ok()?).ok().map(|predicate| predicate.value())
}

/// An `arith.constant` splat of `value` of vector type `r#type`, before `anchor`.
pub fn splat_before<'c, 'a>(anchor: OperationRef<'c, 'a>, value: f64, r#type: Type<'c>) -> Value<'c, 'a> {
    insert_before(anchor, "arith.constant", &[], r#type, &[("value", format!("dense<{}> : {type}", float_text(value)))])
}

fn float_text(value: f64) -> String {
    crate::writer::float(value)
}

/// Whether `op` only computes its results from its operands (arithmetic, math and
/// vector reshaping): erasable once nothing uses them.
pub fn computes_only(op: OperationRef) -> bool {
    let name = op_name(op);
    op.region_count() == 0
        && op.result_count() > 0
        && [
            "arith.",
            "math.",
            "vector.extract_strided_slice",
            "vector.broadcast",
            "vector.transpose",
            "vector.shape_cast",
            "vector.multi_reduction",
            "tpu.concatenate",
            "tpu.iota",
        ]
        .iter()
        .any(|prefix| name.starts_with(prefix))
}

/// Erases the op defining `value` if it `computes_only` and nothing uses its results,
/// then likewise the ops its operands come from.
pub fn erase_dead(value: Value) {
    let Some(op) = defining_op(value).filter(|op| computes_only(*op)) else { return };
    if (0..op.result_count()).any(|index| op.result(index).is_ok_and(|result| !users(result.into()).is_empty())) {
        return;
    }
    let mut operands: Vec<Value> = Vec::new();
    // An operand used twice is looked at once: the second look would find it erased.
    op.operands().for_each(|operand| {
        if !operands.contains(&operand) {
            operands.push(operand)
        }
    });
    // SAFETY: nothing uses the op's results.
    unsafe { mlir_sys::mlirOperationDestroy(op.to_raw()) };
    operands.into_iter().for_each(erase_dead);
}

/// Replaces every use of `op`'s result with `with` and erases `op`.
pub fn replace_op(op: OperationRef, with: Value) {
    let result = op.result(0).expect("one result");
    // SAFETY: `op` is live; after its uses move to `with` nothing refers to it.
    unsafe {
        mlir_sys::mlirValueReplaceAllUsesOfWith(result.to_raw(), with.to_raw());
        mlir_sys::mlirOperationDestroy(op.to_raw());
    }
}

/// `op` as a mutable reference, to change its operands or attributes in place.
pub fn mutable<'c, 'a>(op: OperationRef<'c, 'a>) -> melior::ir::operation::OperationRefMut<'c, 'a> {
    // SAFETY: tile IR rewrites hold no other borrow of the op while they change it.
    unsafe { melior::ir::operation::OperationRefMut::from_raw(op.to_raw()) }
}

/// The element type of a shaped (vector or memref) type.
pub fn element_type(r#type: Type) -> Type {
    // SAFETY: callers pass shaped types.
    unsafe { Type::from_raw(mlir_sys::mlirShapedTypeGetElementType(r#type.to_raw())) }
}

/// Parses a kernel module's text (the kernel builders' output) in `context`. Text that
/// does not parse or verify gives MLIR's own diagnostics, each with its line and column
/// in the text, instead of reaching the caller's handler at a place in no file.
pub fn parse_kernel_module<'c>(context: &'c Context, text: &str) -> Result<Module<'c>, String> {
    let errors = Rc::new(RefCell::new(Vec::new()));
    let sink = Rc::clone(&errors);
    let id = context.attach_diagnostic_handler(move |diagnostic| {
        let place = diagnostic.location().to_string();
        sink.borrow_mut().push(format!("{diagnostic} ({} of the kernel text)", place.trim_start_matches("loc(")));
        true
    });
    let parsed = Module::parse(context, text);
    context.detach_diagnostic_handler(id);
    let errors = errors.borrow().join("; ");
    parsed.ok_or_else(|| format!("the kernel module does not parse: {errors}"))
}

#[cfg(test)]
mod tests {
    use super::parse_kernel_module;

    #[test]
    fn a_kernel_that_does_not_parse_says_why_and_where() {
        let context = flywheel_dialect::create_context();
        let error = parse_kernel_module(
            &context,
            "\"builtin.module\"() ({\n  %0 = \"arith.constant\"() : () -> f32\n}) : () -> ()",
        )
        .err()
        .unwrap_or_default();
        assert!(error.starts_with("the kernel module does not parse: "), "{error}");
        assert!(error.contains("'arith.constant' op requires attribute 'value'") && error.contains(":2:"), "{error}");
        assert!(parse_kernel_module(&context, "module {\n}").is_ok());
    }
}
