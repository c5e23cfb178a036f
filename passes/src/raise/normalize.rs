//! `flywheel-normalize` (see [`PASS`]): brings the spellings JAX and its libraries use to
//! one form before the raising passes match meaning. JAX outlines helpers (`jnp.where`,
//! `jnp.tril`, `jnp.einsum`...) as private functions, and a Python float in them becomes a
//! `convert` of a constant; a scale written `1 / jnp.sqrt(d)` stays a `sqrt` of a
//! constant. Inlining the helpers and folding constant expressions leaves the raisers one
//! spelling of each.

use crate::{
    analysis::hlo::HloBuilder,
    options::Options,
    pass::{external_pass, Anchor, PassId, PassInfo},
};
use flywheel_dialect::ir::string_attribute;
use flywheel_dialect::{
    diagnostics::emit_remark,
    ir::{defining_op, inline_call},
    stablehlo::splat_value,
    stablehlo::{build, BroadcastInDim, Compare, ComparisonType, DotDimensionNumbers, DotGeneral, Select},
    tensor::TensorInfo,
};
use melior::{
    ir::{
        attribute::FlatSymbolRefAttribute,
        operation::{OperationLike, OperationRef, WalkOrder, WalkResult},
        AttributeLike, BlockLike, RegionLike, Value, ValueLike,
    },
    pass::Pass,
};
use std::collections::{HashMap, HashSet};

static PASS_ID: PassId = PassId;

crate::pass_options! {
    pub struct NormalizeOptions {
        /// Remark on how many calls were inlined and constants folded
        remarks: bool = ("remarks", "false"),
    }
}

pub const PASS: PassInfo = PassInfo {
    name: "flywheel-normalize",
    summary: "Inline JAX's private helper functions and fold constant expressions, so raising sees one spelling",
    description: "Brings the spellings JAX and its libraries use to one form without changing numerics: every call \
of a private function (JAX's helpers such as `@_where`, `@tril`, `@_einsum`) is replaced by the function's body, and \
private functions no call is left for are erased; elementwise StableHLO ops whose operands are all splat constants \
(`sqrt`, `rsqrt`, `divide`, `multiply`, `add`, `subtract`, `negate`, `convert`, `exponential`, `log`, `maximum`, \
`minimum`) and layout ops of a splat (`broadcast_in_dim`, `reshape`, `transpose`) become one splat constant, each \
value computed exactly and rounded once to the result's element type, as XLA folds them; so does the integer index \
arithmetic JAX writes around every `x[..., i]` (`add`, `subtract`, `multiply`, `negate`, `maximum`, `minimum`, \
integer `convert`, `compare`, `select` of constants), where the result fits its type. A `dot_general` or \
`triangular_solve` whose operands are reshapes dropping the same leading size-1 axes, and whose result is reshaped \
straight back (JAX at batch 1), runs on the unsqueezed operands, batched over those axes. Runs first in \
`flywheel-tpu`; the raising passes also work without it.",
    options: NormalizeOptions::SPECS,
    create: |text| Ok(create(NormalizeOptions::parse(text)?)),
};

fn create(NormalizeOptions { remarks }: NormalizeOptions) -> Pass {
    external_pass(&PASS, &PASS_ID, Anchor::Module, move |module: OperationRef| {
        let inlined = inline_private_calls(module);
        let folded = fold_constants(module);
        let ranges = ranges_as_iota(module);
        let reshapes = unit_broadcasts_as_reshapes(module);
        let products = squeezed_products_restored(module);
        if remarks {
            emit_remark(
                module.location(),
                &format!(
                    "normalized: {inlined} call(s) inlined, {folded} constant(s) folded, {ranges} range(s) as iota, \
                     {reshapes} unit broadcast(s) as reshape, {products} batch-1 product(s) unsqueezed"
                ),
            );
        }
        true
    })
}

/// The private `func.func`s directly in `module`, by name.
fn private_functions<'c, 'a>(module: OperationRef<'c, 'a>) -> HashMap<String, OperationRef<'c, 'a>> {
    let mut functions = HashMap::new();
    let mut next =
        module.region(0).ok().and_then(|region| region.first_block()).and_then(|block| block.first_operation());
    while let Some(op) = next {
        let text = |name: &str| op.attribute(name).ok().and_then(string_attribute);
        let private = text("sym_visibility").is_some_and(|visibility| visibility == "private");
        if let (true, true, Some(name)) =
            (op.name().as_string_ref().as_str() == Ok("func.func"), private, text("sym_name"))
        {
            functions.insert(name, op);
        }
        next = op.next_in_block();
    }
    functions
}

/// The private function a `func.call` calls.
fn callee<'c, 'a>(functions: &HashMap<String, OperationRef<'c, 'a>>, op: OperationRef) -> Option<OperationRef<'c, 'a>> {
    if op.name().as_string_ref().as_str() != Ok("func.call") {
        return None;
    }
    let name = FlatSymbolRefAttribute::try_from(op.attribute("callee").ok()?).ok()?;
    functions.get(name.value()).copied()
}

/// The private functions that call themselves, directly or through others.
fn recursive_functions(functions: &HashMap<String, OperationRef>) -> HashSet<usize> {
    let key = |op: OperationRef| op.to_raw().ptr as usize;
    let calls: HashMap<usize, Vec<usize>> = functions
        .values()
        .map(|&function| {
            let mut called = Vec::new();
            function.walk(WalkOrder::PreOrder, |op| {
                called.extend(callee(functions, op).map(key));
                WalkResult::Advance
            });
            (key(function), called)
        })
        .collect();
    let reaches_itself = |start: usize| {
        let (mut pending, mut seen) = (calls[&start].clone(), HashSet::new());
        while let Some(next) = pending.pop() {
            if next == start {
                return true;
            }
            if seen.insert(next) {
                pending.extend(calls.get(&next).into_iter().flatten());
            }
        }
        false
    };
    calls.keys().copied().filter(|&function| reaches_itself(function)).collect()
}

/// Inlines every call of a private function into the public functions (the helpers a
/// helper calls come with it and are inlined in turn), then erases the private functions
/// no call is left for; returns how many calls were inlined. Calls of recursive functions
/// stay.
pub fn inline_private_calls(module: OperationRef) -> usize {
    let functions = private_functions(module);
    let recursive = recursive_functions(&functions);
    let private: HashSet<usize> = functions.values().map(|f| f.to_raw().ptr as usize).collect();
    let mut inlined = 0;
    loop {
        let mut calls = Vec::new();
        let mut next = module.region(0).ok().and_then(|r| r.first_block()).and_then(|b| b.first_operation());
        while let Some(function) = next {
            if !private.contains(&(function.to_raw().ptr as usize)) {
                function.walk(WalkOrder::PreOrder, |op| {
                    let inlinable = callee(&functions, op).filter(|f| !recursive.contains(&(f.to_raw().ptr as usize)));
                    calls.extend(inlinable.map(|callee| (op.to_raw(), callee)));
                    WalkResult::Advance
                });
            }
            next = function.next_in_block();
        }
        let before = inlined;
        for (raw, function) in calls {
            // SAFETY: collected from the live module; inlining erases only this call, and
            // the copies it makes of nested calls are found by the next walk.
            let call = unsafe { OperationRef::from_raw(raw) };
            inlined += usize::from(inline_call(call, function));
        }
        if inlined == before {
            break;
        }
    }
    // The private functions still called: from a public function, or from one of those.
    let mut called = HashSet::new();
    let mut pending: Vec<OperationRef> = Vec::new();
    let mut next = module.region(0).ok().and_then(|r| r.first_block()).and_then(|b| b.first_operation());
    while let Some(function) = next {
        if !private.contains(&(function.to_raw().ptr as usize)) {
            pending.push(function);
        }
        next = function.next_in_block();
    }
    while let Some(function) = pending.pop() {
        function.walk(WalkOrder::PreOrder, |op| {
            if let Some(callee) = callee(&functions, op) {
                if called.insert(callee.to_raw().ptr as usize) {
                    pending.push(callee);
                }
            }
            WalkResult::Advance
        });
    }
    for function in functions.values() {
        if !called.contains(&(function.to_raw().ptr as usize)) {
            // SAFETY: a top-level function nothing calls; each is erased once.
            unsafe { mlir_sys::mlirOperationDestroy(function.to_raw()) };
        }
    }
    inlined
}

/// The value of a splat constant operand.
fn splat_operand(value: Value) -> Option<f64> {
    let op = defining_op(value)?;
    (op.name().as_string_ref().as_str() == Ok("stablehlo.constant"))
        .then(|| op.attribute("value").ok())
        .flatten()
        .and_then(splat_value)
}

/// `value` rounded to the float element type `element`, if FlyWheel knows it.
fn rounded(value: f64, element: &str) -> Option<f64> {
    match element {
        "f64" => Some(value),
        "f32" => Some(value as f32 as f64),
        "bf16" => Some(half::bf16::from_f64(value).to_f64()),
        "f16" => Some(half::f16::from_f64(value).to_f64()),
        _ => None,
    }
}

/// The splat value `op` computes from splat operands `x`, before rounding.
fn folded_value(name: &str, x: &[f64]) -> Option<f64> {
    Some(match (name, x) {
        ("stablehlo.sqrt", [a]) => a.sqrt(),
        ("stablehlo.rsqrt", [a]) => 1.0 / a.sqrt(),
        ("stablehlo.negate", [a]) => -a,
        ("stablehlo.exponential", [a]) => a.exp(),
        ("stablehlo.log", [a]) => a.ln(),
        ("stablehlo.convert", [a]) => *a,
        ("stablehlo.add", [a, b]) => a + b,
        ("stablehlo.subtract", [a, b]) => a - b,
        ("stablehlo.multiply", [a, b]) => a * b,
        ("stablehlo.divide", [a, b]) => a / b,
        ("stablehlo.maximum", [a, b]) => a.max(*b),
        ("stablehlo.minimum", [a, b]) => a.min(*b),
        _ => return None,
    })
}

/// The integer result `op` computes from splat integer operands `x`, if it fits `element`.
fn folded_integer(name: &str, x: &[f64], operand_element: &str, element: &str) -> Option<f64> {
    integer_range(operand_element)?;
    let value = match (name, x) {
        ("stablehlo.convert", [a]) => *a,
        ("stablehlo.negate", [a]) => -a,
        ("stablehlo.add", [a, b]) => a + b,
        ("stablehlo.subtract", [a, b]) => a - b,
        ("stablehlo.multiply", [a, b]) => a * b,
        ("stablehlo.maximum", [a, b]) => a.max(*b),
        ("stablehlo.minimum", [a, b]) => a.min(*b),
        _ => return None,
    };
    fits(value, element).then_some(value)
}

/// The values an integer element type holds, as far as f64 holds them exactly (2^53).
fn integer_range(element: &str) -> Option<(f64, f64)> {
    let (unsigned, bits) = match element.strip_prefix("ui") {
        Some(bits) => (true, bits),
        None => (false, element.strip_prefix('i')?),
    };
    let bits = bits.parse::<i32>().ok()?.min(54);
    (bits >= 2).then(|| {
        if unsigned {
            (0.0, 2f64.powi(bits) - 1.0)
        } else {
            (-(2f64.powi(bits - 1)), 2f64.powi(bits - 1) - 1.0)
        }
    })
}

/// Whether `value` is one an integer element type holds (true for a float type).
fn fits(value: f64, element: &str) -> bool {
    let integer = element.starts_with('i') || element.starts_with("ui");
    !integer || element == "i1" || integer_range(element).is_some_and(|(low, high)| (low..=high).contains(&value))
}

/// The splat `op` computes from splat operands `x` without arithmetic on its element
/// type: a `select` on a constant predicate, or a `compare` of signed integers.
fn selected_or_compared(op: OperationRef, x: &[f64], operand_element: &str) -> Option<f64> {
    if let Some(compare) = Compare::from_operation(op) {
        let signed = operand_element.starts_with('i')
            && operand_element != "i1"
            && matches!(compare.compare_type().ok()?, None | Some(ComparisonType::Signed));
        let [a, b] = x else { return None };
        return signed.then(|| compare.direction().ok()).flatten().map(|d| f64::from(u8::from(d.holds(*a, *b))));
    }
    let [predicate, on_true, on_false] = x else { return None };
    Select::from_operation(op).map(|_| if *predicate != 0.0 { *on_true } else { *on_false })
}

/// Replaces every op that computes a splat from splat constants by a constant; returns how
/// many. Elementwise ops fold to float results (computed in f64 and rounded once to the
/// result type, infinities and NaN as IEEE arithmetic gives them) and to integer results
/// that fit their type; layout ops and selects of a splat keep its value whatever its type.
pub fn fold_constants(module: OperationRef) -> usize {
    let mut ops = Vec::new();
    module.walk(WalkOrder::PreOrder, |op| {
        ops.push(op.to_raw());
        WalkResult::Advance
    });
    let mut folded = 0;
    for raw in ops {
        // SAFETY: ops are only erased after they are visited (users come after what they
        // use), and a folded op is replaced by a new constant before it is erased.
        let op = unsafe { OperationRef::from_raw(raw) };
        let name = op.name().as_string_ref().as_str().unwrap_or_default().to_owned();
        if !name.starts_with("stablehlo.") || op.result_count() != 1 || op.operand_count() == 0 {
            continue;
        }
        let Some(operands) = op.operands().map(splat_operand).collect::<Option<Vec<f64>>>() else { continue };
        let result: Value = op.result(0).expect("one result").into();
        let Some(info) = TensorInfo::of_value(result).filter(|info| info.shape.iter().all(Option::is_some)) else {
            continue;
        };
        let element = info.element_name();
        let operand_element = op
            .operand(0)
            .ok()
            .and_then(|operand| TensorInfo::of_value(operand))
            .map(|info| info.element_name())
            .unwrap_or_default();
        let value = match name.as_str() {
            "stablehlo.broadcast_in_dim" | "stablehlo.reshape" | "stablehlo.transpose" => operands[0],
            "stablehlo.compare" | "stablehlo.select" => match selected_or_compared(op, &operands, &operand_element) {
                Some(value) => value,
                None => continue,
            },
            _ if element.starts_with('i') || element.starts_with("ui") => {
                match folded_integer(&name, &operands, &operand_element, &element) {
                    Some(value) => value,
                    None => continue,
                }
            }
            _ => match folded_value(&name, &operands).and_then(|value| rounded(value, &element)) {
                Some(value) => value,
                None => continue,
            },
        };
        // An unsigned splat with its top bit set reads back negative: leave it as it is.
        if !fits(value, &element) {
            continue;
        }
        let constant = HloBuilder::before(op).constant(value, result.r#type(), &element);
        unsafe { mlir_sys::mlirValueReplaceAllUsesOfWith(result.to_raw(), constant.to_raw()) };
        let mut inputs: Vec<OperationRef> = op.operands().filter_map(defining_op).collect();
        inputs.dedup_by_key(|input| input.to_raw().ptr);
        unsafe { mlir_sys::mlirOperationDestroy(raw) };
        for input in inputs {
            if input.results().all(|result| !crate::analysis::trace::has_uses(result.into())) {
                unsafe { mlir_sys::mlirOperationDestroy(input.to_raw()) };
            }
        }
        folded += 1;
    }
    folded
}

/// Replaces each 1-D integer constant holding 0, 1, ..., n - 1 (`jnp.arange` of a static
/// length, which JAX folds into a constant) by `stablehlo.iota`, the spelling positions
/// have elsewhere; returns how many.
pub fn ranges_as_iota(module: OperationRef) -> usize {
    let mut ranges = Vec::new();
    module.walk(WalkOrder::PreOrder, |op| {
        if op.name().as_string_ref().as_str() == Ok("stablehlo.constant") && range_length(op).is_some() {
            ranges.push(op.to_raw());
        }
        WalkResult::Advance
    });
    for raw in &ranges {
        // SAFETY: collected from the live module; each is replaced and erased once.
        let op = unsafe { OperationRef::from_raw(*raw) };
        let result: Value = op.result(0).expect("a constant has a result").into();
        let (length, element) = range_length(op).expect("checked");
        let iota = HloBuilder::before(op).iota(0, &[length], &element);
        unsafe {
            mlir_sys::mlirValueReplaceAllUsesOfWith(result.to_raw(), iota.to_raw());
            mlir_sys::mlirOperationDestroy(*raw);
        }
    }
    ranges.len()
}

/// The length and element type of a constant that is a 1-D i32 or i64 tensor of more than
/// one element holding its positions.
fn range_length(op: OperationRef) -> Option<(i64, String)> {
    let raw = op.attribute("value").ok()?.to_raw();
    let info = TensorInfo::of_value(op.result(0).ok()?.into())?;
    let ([Some(length)], element) = (info.shape.as_slice(), info.element_name()) else { return None };
    // SAFETY: elements are read only from a non-splat dense attribute of the element type
    // checked, at positions below its length.
    let holds_positions = unsafe {
        if !mlir_sys::mlirAttributeIsADenseElements(raw) || mlir_sys::mlirDenseElementsAttrIsSplat(raw) {
            return None;
        }
        match element.as_str() {
            "i32" => {
                (0..*length).all(|i| i64::from(mlir_sys::mlirDenseElementsAttrGetInt32Value(raw, i as isize)) == i)
            }
            "i64" => (0..*length).all(|i| mlir_sys::mlirDenseElementsAttrGetInt64Value(raw, i as isize) == i),
            _ => false,
        }
    };
    holds_positions.then_some((*length, element))
}

/// Gives back the unit batch axes JAX squeezes around a batched op at batch 1:
/// `reshape(op(reshape(a), reshape(b)))` where the inner reshapes drop the same number of
/// leading size-1 axes from `a` and `b` and the outer one puts them back on the result
/// becomes `op(a, b)` batched over those axes too, for `dot_general` and
/// `triangular_solve` (the same products and sums); returns how many.
pub fn squeezed_products_restored(module: OperationRef) -> usize {
    let mut products = Vec::new();
    module.walk(WalkOrder::PreOrder, |op| {
        if squeezed_product(op).is_some() {
            products.push(op.to_raw());
        }
        WalkResult::Advance
    });
    for raw in &products {
        // SAFETY: collected from the live module; each product and its reshape are
        // replaced and erased once.
        let op = unsafe { OperationRef::from_raw(*raw) };
        let squeezed = squeezed_product(op).expect("checked");
        let builder = HloBuilder::before(op);
        let restored = match &squeezed.numbers {
            Some(numbers) => builder.dot_general_with_precision(
                squeezed.lhs,
                squeezed.rhs,
                numbers,
                &squeezed.shape,
                op.attribute("precision_config").ok(),
                &squeezed.element,
            ),
            None => {
                let flags = ["left_side", "lower", "unit_diagonal", "transpose_a"]
                    .map(|name| (name, op.attribute(name).expect("checked")));
                let result = builder.tensor_type(&squeezed.shape, &squeezed.element);
                let solve = build(TRIANGULAR_SOLVE, op.location(), &[squeezed.lhs, squeezed.rhs], &[result], &flags);
                builder.insert_op(solve).result(0).expect("one result").into()
            }
        };
        let reshape = squeezed.reshape;
        let reshaped: Value = reshape.result(0).expect("a result").into();
        let operands: Vec<Value> = op.operands().collect();
        let mut inputs: Vec<OperationRef> = operands.into_iter().filter_map(defining_op).collect();
        inputs.dedup_by_key(|input| input.to_raw().ptr);
        unsafe {
            mlir_sys::mlirValueReplaceAllUsesOfWith(reshaped.to_raw(), restored.to_raw());
            mlir_sys::mlirOperationDestroy(reshape.to_raw());
            mlir_sys::mlirOperationDestroy(*raw);
        }
        for input in inputs {
            if input.results().all(|result| !crate::analysis::trace::has_uses(result.into())) {
                unsafe { mlir_sys::mlirOperationDestroy(input.to_raw()) };
            }
        }
    }
    products.len()
}

const TRIANGULAR_SOLVE: &str = "stablehlo.triangular_solve";

/// A product or solve at batch 1 with its unit axes squeezed (see
/// [`squeezed_products_restored`]).
struct SqueezedProduct<'c, 'a> {
    lhs: Value<'c, 'a>,
    rhs: Value<'c, 'a>,
    /// The product's dimension numbers with the unit axes batched; `None` for a solve.
    numbers: Option<DotDimensionNumbers>,
    shape: Vec<i64>,
    element: String,
    /// The reshape putting the unit axes back on the result.
    reshape: OperationRef<'c, 'a>,
}

fn squeezed_product<'c, 'a>(op: OperationRef<'c, 'a>) -> Option<SqueezedProduct<'c, 'a>> {
    let name = op.name().as_string_ref().as_str().ok()?.to_owned();
    if name != DotGeneral::NAME && name != TRIANGULAR_SOLVE || op.operand_count() != 2 {
        return None;
    }
    let shape_of = |value: Value| -> Option<Vec<i64>> { TensorInfo::of_value(value)?.shape.into_iter().collect() };
    // The value a reshape adding `units` leading size-1 axes to `value` reshapes, if any.
    let unsqueezed = |value: Value<'c, 'a>| -> Option<(Value<'c, 'a>, usize)> {
        let reshape = defining_op(value).filter(|o| o.name().as_string_ref().as_str() == Ok("stablehlo.reshape"))?;
        let source = reshape.operand(0).ok()?;
        let (before, after) = (shape_of(source)?, shape_of(value)?);
        let units = before.len().checked_sub(after.len()).filter(|&units| units > 0)?;
        (before[..units].iter().all(|&size| size == 1) && before[units..] == after[..]).then_some((source, units))
    };
    let (lhs, units) = unsqueezed(op.operand(0).ok()?)?;
    let (rhs, rhs_units) = unsqueezed(op.operand(1).ok()?)?;
    let result: Value = op.result(0).ok()?.into();
    let user = crate::analysis::operands::single_user(result)?;
    let (squeezed, restored) = (shape_of(result)?, shape_of(user.result(0).ok()?.into())?);
    let puts_back = user.name().as_string_ref().as_str() == Ok("stablehlo.reshape")
        && restored.len() == squeezed.len() + units
        && restored[..units].iter().all(|&size| size == 1)
        && restored[units..] == squeezed[..];
    if rhs_units != units || !puts_back {
        return None;
    }
    let shift = |dims: &[i64]| -> Vec<i64> { dims.iter().map(|d| d + units as i64).collect() };
    let leading: Vec<i64> = (0..units as i64).collect();
    let numbers = match DotGeneral::from_operation(op) {
        Some(dot) => {
            let old = dot.dimension_numbers().ok()?;
            Some(DotDimensionNumbers {
                lhs_batching: [leading.clone(), shift(&old.lhs_batching)].concat(),
                rhs_batching: [leading, shift(&old.rhs_batching)].concat(),
                lhs_contracting: shift(&old.lhs_contracting),
                rhs_contracting: shift(&old.rhs_contracting),
            })
        }
        // A solve batches over every leading axis; its flags must all be there to copy.
        None => {
            let flagged =
                ["left_side", "lower", "unit_diagonal", "transpose_a"].iter().all(|f| op.attribute(f).is_ok());
            if !flagged {
                return None;
            }
            None
        }
    };
    let element = TensorInfo::of_value(result)?.element_name();
    Some(SqueezedProduct { lhs, rhs, numbers, shape: restored, element, reshape: user })
}

/// Replaces each `broadcast_in_dim` that only inserts axes of size 1 (its operand's axes
/// kept in order and size) by the `reshape` it is, as `jnp.matmul` at batch 1 re-adds the
/// batch axis it squeezed; returns how many.
pub fn unit_broadcasts_as_reshapes(module: OperationRef) -> usize {
    let mut broadcasts = Vec::new();
    module.walk(WalkOrder::PreOrder, |op| {
        if op.name().as_string_ref().as_str() == Ok(BroadcastInDim::NAME) && unit_axes_added(op).is_some() {
            broadcasts.push(op.to_raw());
        }
        WalkResult::Advance
    });
    for raw in &broadcasts {
        // SAFETY: collected from the live module; each is replaced and erased once.
        let op = unsafe { OperationRef::from_raw(*raw) };
        let (from, to, element) = unit_axes_added(op).expect("checked");
        let (input, result): (Value, Value) =
            (op.operand(0).expect("an operand"), op.result(0).expect("a result").into());
        let reshape = HloBuilder::before(op).reshape(input, &from, &to, &element);
        unsafe {
            mlir_sys::mlirValueReplaceAllUsesOfWith(result.to_raw(), reshape.to_raw());
            mlir_sys::mlirOperationDestroy(*raw);
        }
    }
    broadcasts.len()
}

/// The operand and result shapes and the element type of a `broadcast_in_dim` that keeps
/// its operand's axes in order and size and adds only axes of size 1.
fn unit_axes_added(op: OperationRef) -> Option<(Vec<i64>, Vec<i64>, String)> {
    let dimensions = BroadcastInDim::from_operation(op)?.broadcast_dimensions().ok()?;
    let (from, to) = (TensorInfo::of_value(op.operand(0).ok()?)?, TensorInfo::of_value(op.result(0).ok()?.into())?);
    let element = to.element_name();
    let (from, to): (Vec<i64>, Vec<i64>) =
        (from.shape.into_iter().collect::<Option<_>>()?, to.shape.into_iter().collect::<Option<_>>()?);
    let in_order = dimensions.windows(2).all(|pair| pair[0] < pair[1]);
    let kept = dimensions.len() == from.len()
        && dimensions.iter().zip(&from).all(|(&d, &size)| to.get(d as usize) == Some(&size));
    let added_units = (0..to.len() as i64).filter(|d| !dimensions.contains(d)).all(|d| to[d as usize] == 1);
    (in_order && kept && added_units && to.len() > from.len()).then_some((from, to, element))
}
