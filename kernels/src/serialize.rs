//! Serializing a kernel module for libtpu, as Pallas hands Mosaic kernels over:
//! `flywheel.matmul` lowered to Mosaic's `tpu.matmul` at the precision it asks for, every
//! op renamed under `stable_mosaic.` (an IR rewrite), and the module printed in generic
//! form.

use crate::tile_ir::{
    after_definition, computes_only, defining_op, element_type, float_splat, insert_before, splat_before, users,
};
use flywheel_dialect::ir::string_attribute;
use melior::{
    ir::{
        attribute::IntegerAttribute,
        operation::{
            Operation, OperationBuilder, OperationLike, OperationPrintingFlags, OperationRef, WalkOrder, WalkResult,
        },
        Attribute, BlockLike, Identifier, Region, RegionLike, Type, Value, ValueLike,
    },
    StringRef,
};
use std::collections::HashMap;

/// Size `index` of a vector value's shape.
fn dimension(value: Value, index: isize) -> i64 {
    unsafe { mlir_sys::mlirShapedTypeGetDimSize(melior::ir::TypeLike::to_raw(&value.r#type()), index) }
}

/// `vector<shape x element>` in the context of `op`.
fn vector_type<'c>(op: OperationRef<'c, '_>, shape: &[i64], element: &str) -> melior::ir::Type<'c> {
    let dims: Vec<String> = shape.iter().map(i64::to_string).collect();
    melior::ir::Type::parse(unsafe { op.context().to_ref() }, &format!("vector<{}x{element}>", dims.join("x")))
        .expect("a vector type")
}

/// The kernel module as libtpu reads it: `flywheel.matmul` becomes `tpu.matmul`, and the
/// module is printed in generic form with each op's name under `stable_mosaic.`.
pub fn serialize(module: OperationRef) -> Result<String, String> {
    let mut matmuls = Vec::new();
    module.walk(WalkOrder::PostOrder, |op| {
        if op.name().as_string_ref().as_str() == Ok("flywheel.matmul") {
            matmuls.push(op.to_raw());
        }
        WalkResult::Advance
    });
    let mut parts = Parts::default();
    for raw in matmuls {
        // SAFETY: collected from the live module; each is replaced and erased once.
        let matmul = unsafe { OperationRef::from_raw(raw) };
        lower_matmul(matmul, &mut parts)?;
        unsafe { mlir_sys::mlirOperationDestroy(raw) };
    }
    erase_unused(module);
    under_stable_mosaic(module)?;
    module.to_string_with_flags(OperationPrintingFlags::new().print_generic_operation_form()).map_err(|e| e.to_string())
}

/// Renames every op inside `module` to `stable_mosaic.<name>`, as Mosaic's serialized form
/// has it: each op is remade as that unregistered op with the same operands, results,
/// regions and attributes (its properties among them: Mosaic reads the unregistered ops'
/// attribute dictionaries only). The module keeps its name and loses its symbol name, as
/// a Pallas kernel module has none.
fn under_stable_mosaic(module: OperationRef) -> Result<(), String> {
    let mut ops = Vec::new();
    module.walk(WalkOrder::PreOrder, |op| {
        ops.push(op.to_raw());
        WalkResult::Advance
    });
    // SAFETY: the module is live; its symbol name is an attribute it may drop.
    unsafe { mlir_sys::mlirOperationRemoveAttributeByName(module.to_raw(), StringRef::new("sym_name").to_raw()) };
    for raw in ops.into_iter().skip(1) {
        // SAFETY: collected from the live module; each op is remade and erased once, and
        // remaking an op moves its regions' blocks (with the ops collected in them) intact.
        let op = unsafe { OperationRef::from_raw(raw) };
        let remade = remade_under_stable_mosaic(op)?;
        let remade = op.block().ok_or("an op outside a block")?.insert_operation_before(op, remade);
        for index in 0..op.result_count() {
            let (old, new) =
                (op.result(index).map_err(|e| e.to_string())?, remade.result(index).map_err(|e| e.to_string())?);
            unsafe { mlir_sys::mlirValueReplaceAllUsesOfWith(old.to_raw(), new.to_raw()) };
        }
        unsafe { mlir_sys::mlirOperationDestroy(raw) };
    }
    Ok(())
}

/// `op` as the unregistered op `stable_mosaic.<name>`, its regions' bodies moved into it.
fn remade_under_stable_mosaic<'c>(op: OperationRef<'c, '_>) -> Result<Operation<'c>, String> {
    let name = format!("stable_mosaic.{}", op.name().as_string_ref().as_str().map_err(|e| e.to_string())?);
    let operands: Vec<Value> = op.operands().collect();
    let results: Vec<Type> = op.results().map(|result| result.r#type()).collect();
    let attributes: Vec<(Identifier, Attribute)> = op.attributes().collect();
    let regions: Vec<Region> = (0..op.region_count())
        .map(|index| {
            let region = Region::new();
            let old = op.region(index).expect("counted");
            // SAFETY: both regions are live; the old one is left empty and erased with its op.
            unsafe { mlir_sys::mlirRegionTakeBody(region.to_raw(), old.to_raw()) };
            region
        })
        .collect();
    OperationBuilder::new(&name, op.location())
        .add_operands(&operands)
        .add_results(&results)
        .add_attributes(&attributes)
        .add_regions_vec(regions)
        .build()
        .map_err(|e| format!("'{name}' does not build: {e}"))
}

/// Erases the pure ops whose results nothing uses: the f32 tiles whose bf16 parts were
/// made from their sources instead (the stacked right operands).
fn erase_unused(module: OperationRef) {
    let mut ops = Vec::new();
    module.walk(WalkOrder::PostOrder, |op| {
        ops.push(op.to_raw());
        WalkResult::Advance
    });
    // Users come after what they use: from the last op back, an op is erased before its
    // operands' definitions are looked at.
    for raw in ops.into_iter().rev() {
        // SAFETY: collected from the live module; each is erased at most once, after its
        // users.
        let op = unsafe { OperationRef::from_raw(raw) };
        if computes_only(op) && (0..op.result_count()).all(|i| users(op.result(i).expect("counted").into()).is_empty())
        {
            unsafe { mlir_sys::mlirOperationDestroy(raw) };
        }
    }
}

/// Replaces `flywheel.matmul` with Mosaic's `tpu.matmul` (lhs [M, K]; rhs [K, N], or
/// [N, K] when transposed; f32 accumulator). f32 operands are multiplied in f32: by
/// Mosaic's fp32 precision; when the op says `precision = "bf16x3"`, as three one-pass
/// bf16 products of their high and low bf16 parts (hi·hi + hi·lo + lo·hi, about 16 bits
/// of each product: half the MXU passes; an operand that holds bf16 numbers has no low
/// part, and its product is left out), taken as one product over the passes' contractions
/// side by side, which the MXU accumulates (each f32 operand is split once for all its
/// products); when it says `precision = "bf16"`, as one pass
/// of their bf16 roundings (the f32 accumulator kept).
fn lower_matmul<'c: 'a, 'a>(matmul: OperationRef<'c, 'a>, parts: &mut Parts<'c, 'a>) -> Result<(), String> {
    let transposed = matmul
        .attribute("transpose_rhs")
        .ok()
        .and_then(|a| IntegerAttribute::try_from(a).ok())
        .ok_or("a flywheel.matmul has no transpose_rhs")?
        .value()
        != 0;
    let operands: Vec<Value> = matmul.operands().collect();
    let result = matmul.result(0).map_err(|_| "no result")?;
    let precision = matmul.attribute("precision").ok().and_then(string_attribute);
    let product = if element_type(operands[0].r#type()).to_string() != "f32" {
        tpu_matmul(matmul, operands[0], operands[1], operands[2], transposed, false)
    } else if precision.as_deref() == Some("bf16") {
        let (lhs, rhs) = (bf16_rounding(matmul, operands[0]), bf16_rounding(matmul, operands[1]));
        tpu_matmul(matmul, lhs, rhs, operands[2], transposed, false)
    } else if precision.as_deref() == Some("bf16x3") {
        // hi·hi + lo·hi + hi·lo as one product over a contraction as deep as the passes:
        // [hi | lo | hi] times [hi; hi; lo], so the MXU sums the passes as it sums any
        // contraction (one set of results popped, no adds after it).
        let (lhs_high, lhs_low) = parts.of(operands[0]);
        let (rhs_high, rhs_low) = parts.of(operands[1]);
        let mut passes = vec![(lhs_high, rhs_high)];
        passes.extend(lhs_low.map(|low| (low, rhs_high)));
        passes.extend(rhs_low.map(|low| (lhs_high, low)));
        // Joined where the contractions fill whole lane tiles (or two of 64 one tile);
        // contractions side by side at other lane offsets are relaid out, and cost more
        // than the passes apart.
        let depth = dimension(operands[0], 1);
        if depth % 128 == 0 || depth * passes.len() as i64 == 128 {
            let (lefts, rights): (Vec<Value>, Vec<Value>) = passes.into_iter().unzip();
            let rhs_contracting = if transposed { 1 } else { 0 };
            tpu_matmul(
                matmul,
                joined(matmul, &lefts, 1),
                joined(matmul, &rights, rhs_contracting),
                operands[2],
                transposed,
                false,
            )
        } else {
            passes_apart(matmul, (lhs_high, lhs_low), (rhs_high, rhs_low), operands[2], transposed)
        }
    } else {
        tpu_matmul(matmul, operands[0], operands[1], operands[2], transposed, true)
    };
    unsafe { mlir_sys::mlirValueReplaceAllUsesOfWith(result.to_raw(), product.to_raw()) };
    Ok(())
}

/// hi·hi + lo·hi + hi·lo as separate products: both left parts against the right high
/// part as one product of twice the rows (its weights loaded once), the high part
/// against the right low part, the results added to `accumulator`.
fn passes_apart<'c: 'a, 'a>(
    matmul: OperationRef<'c, 'a>,
    (lhs_high, lhs_low): (Value<'c, 'a>, Option<Value<'c, 'a>>),
    (rhs_high, rhs_low): (Value<'c, 'a>, Option<Value<'c, 'a>>),
    accumulator: Value<'c, 'a>,
    transposed: bool,
) -> Value<'c, 'a> {
    let mut partial = accumulator;
    if let Some(rhs_low) = rhs_low {
        partial = tpu_matmul(matmul, lhs_high, rhs_low, partial, transposed, false);
    }
    let rows = dimension(lhs_high, 0);
    match lhs_low {
        Some(lhs_low) if rows % 16 == 0 => {
            let columns = dimension(accumulator, 1);
            let stacked = insert_before(
                matmul,
                "tpu.concatenate",
                &[lhs_high, lhs_low],
                vector_type(matmul, &[2 * rows, dimension(lhs_high, 1)], "bf16"),
                &[("dimension", "0 : i32".into())],
            );
            let both = tpu_matmul(
                matmul,
                stacked,
                rhs_high,
                splat_before(matmul, 0.0, vector_type(matmul, &[2 * rows, columns], "f32")),
                transposed,
                false,
            );
            let half = |first: i64| {
                let attributes = [
                    ("offsets", format!("[{first}, 0]")),
                    ("sizes", format!("[{rows}, {columns}]")),
                    ("strides", "[1, 1]".to_owned()),
                ];
                insert_before(matmul, "vector.extract_strided_slice", &[both], partial.r#type(), &attributes)
            };
            let add = |x, y| {
                insert_before(
                    matmul,
                    "arith.addf",
                    &[x, y],
                    partial.r#type(),
                    &[("fastmath", "#arith.fastmath<none>".into())],
                )
            };
            add(add(partial, half(rows)), half(0))
        }
        _ => {
            if let Some(lhs_low) = lhs_low {
                partial = tpu_matmul(matmul, lhs_low, rhs_high, partial, transposed, false);
            }
            tpu_matmul(matmul, lhs_high, rhs_high, partial, transposed, false)
        }
    }
}

/// `parts` (2-D) concatenated along `axis` before `anchor` (the one part alone).
fn joined<'c, 'a>(anchor: OperationRef<'c, 'a>, parts: &[Value<'c, 'a>], axis: isize) -> Value<'c, 'a> {
    if let [part] = parts {
        return *part;
    }
    let mut shape = [dimension(parts[0], 0), dimension(parts[0], 1)];
    shape[axis as usize] *= parts.len() as i64;
    insert_before(
        anchor,
        "tpu.concatenate",
        parts,
        vector_type(anchor, &shape, "bf16"),
        &[("dimension", format!("{axis} : i32"))],
    )
}

/// An f32 vector rounded to bf16, before `anchor`.
fn bf16_rounding<'c, 'a>(anchor: OperationRef<'c, 'a>, value: Value<'c, 'a>) -> Value<'c, 'a> {
    insert_before(anchor, "arith.truncf", &[value], bf16_type(value), &[])
}

/// The bf16 parts of f32 vectors, each vector split once for all its products: its bf16
/// rounding and the bf16 rounding of what that leaves (None, all zeros, when the vector
/// holds bf16 numbers), made right after the vector's definition so they serve every
/// use. Rounding is elementwise, so a slice, concatenation or masking of vectors (with
/// zeros) has the slice, concatenation or masking of their parts: the split is made on
/// the smaller sources (the inverse's right operands are copies of one tile stacked and
/// masked, and its operands are slices of tiles several products share).
#[derive(Default)]
struct Parts<'c, 'a> {
    split: HashMap<usize, (Value<'c, 'a>, Option<Value<'c, 'a>>)>,
}

impl<'c: 'a, 'a> Parts<'c, 'a> {
    fn of(&mut self, value: Value<'c, 'a>) -> (Value<'c, 'a>, Option<Value<'c, 'a>>) {
        let key = value.to_raw().ptr as usize;
        if let Some(&parts) = self.split.get(&key) {
            return parts;
        }
        let parts = self.rearranged(value).unwrap_or_else(|| split(after_definition(value), value));
        self.split.insert(key, parts);
        parts
    }

    /// The parts of a slice, concatenation or zero-masking, from its sources' parts.
    fn rearranged(&mut self, value: Value<'c, 'a>) -> Option<(Value<'c, 'a>, Option<Value<'c, 'a>>)> {
        let op = defining_op(value)?;
        let at = after_definition(value);
        let narrow = bf16_type(value);
        // The same op on bf16 parts: its name and attributes, the result narrowed.
        let name = op.name().as_string_ref().as_str().unwrap_or_default().to_owned();
        let attributes: Vec<(String, String)> = op
            .attributes()
            .map(|(name, attribute)| {
                (name.as_string_ref().as_str().unwrap_or_default().to_owned(), attribute.to_string())
            })
            .collect();
        let attributes: Vec<(&str, String)> =
            attributes.iter().map(|(name, text)| (name.as_str(), text.clone())).collect();
        let remake = |operands: &[Value<'c, 'a>]| insert_before(at, &name, operands, narrow, &attributes);
        match op.name().as_string_ref().as_str() {
            Ok("vector.extract_strided_slice") => {
                let (high, low) = self.of(op.operand(0).ok()?);
                Some((remake(&[high]), low.map(|low| remake(&[low]))))
            }
            Ok("tpu.concatenate") => {
                let sources: Vec<_> = op.operands().map(|source| (source, self.of(source))).collect();
                let high = remake(&sources.iter().map(|(_, (high, _))| *high).collect::<Vec<_>>());
                let any_low = sources.iter().any(|(_, (_, low))| low.is_some());
                let lows: Vec<Value> = sources
                    .iter()
                    .map(|(source, (_, low))| low.unwrap_or_else(|| splat_before(at, 0.0, bf16_type(*source))))
                    .collect();
                Some((high, any_low.then(|| remake(&lows))))
            }
            Ok("arith.select") if float_splat(op.operand(2).ok()?) == Some(0.0) => {
                let (mask, zeros) = (op.operand(0).ok()?, splat_before(at, 0.0, narrow));
                let (high, low) = self.of(op.operand(1).ok()?);
                Some((remake(&[mask, high, zeros]), low.map(|low| remake(&[mask, low, zeros]))))
            }
            _ => None,
        }
    }
}

fn bf16_type<'c>(value: Value<'c, '_>) -> melior::ir::Type<'c> {
    let text = value.r#type().to_string().replace("xf32>", "xbf16>");
    melior::ir::Type::parse(unsafe { value.context().to_ref() }, &text).expect("a bf16 vector type")
}

/// An f32 vector as its bf16 rounding and the bf16 rounding of what that leaves, which
/// is None (all zeros) when the vector holds bf16 numbers, before `anchor`.
pub fn split<'c: 'a, 'a>(anchor: OperationRef<'c, 'a>, value: Value<'c, 'a>) -> (Value<'c, 'a>, Option<Value<'c, 'a>>) {
    let high = bf16_rounding(anchor, value);
    if holds_bf16(value) {
        return (high, None);
    }
    let high_wide = insert_before(anchor, "arith.extf", &[high], value.r#type(), &[]);
    let rest = insert_before(
        anchor,
        "arith.subf",
        &[value, high_wide],
        value.r#type(),
        &[("fastmath", "#arith.fastmath<none>".into())],
    );
    (high, Some(bf16_rounding(anchor, rest)))
}

/// Whether every element of an f32 vector is a bf16 number, as its definition shows: a
/// widened bf16 vector, a splat of a bf16 number, or a rearrangement or selection of such
/// vectors (the Gated DeltaNet kernel's Kᵀ for the state update).
fn holds_bf16(value: Value) -> bool {
    let Some(op) = defining_op(value) else { return false };
    let operand = |index: usize| op.operand(index).is_ok_and(holds_bf16);
    match op.name().as_string_ref().as_str() {
        Ok("arith.extf") => op.operand(0).is_ok_and(|source| element_type(source.r#type()).to_string() == "bf16"),
        Ok("arith.constant") => float_splat(value).is_some_and(|x| half::bf16::from_f64(x).to_f64() == x),
        Ok("vector.transpose" | "vector.extract_strided_slice" | "vector.broadcast" | "vector.shape_cast") => {
            operand(0)
        }
        Ok("arith.select") => operand(1) && operand(2),
        Ok("tpu.concatenate") => (0..op.operand_count()).all(operand),
        _ => false,
    }
}

/// `tpu.matmul` of lhs and rhs into `accumulator`, before `anchor`; `full`: fp32
/// precision.
fn tpu_matmul<'c, 'a>(
    anchor: OperationRef<'c, 'a>,
    lhs: Value<'c, 'a>,
    rhs: Value<'c, 'a>,
    accumulator: Value<'c, 'a>,
    transposed: bool,
    full: bool,
) -> Value<'c, 'a> {
    let (rhs_contracting, rhs_free) = if transposed { (1, 0) } else { (0, 1) };
    let numbers = format!(
        "#tpu.dot_dimension_numbers<[1], [{rhs_contracting}], [0], [{rhs_free}], [0, 0, 1, {rhs_free}], [], []>"
    );
    let mut attributes = vec![
        ("dimension_numbers", numbers),
        ("transpose_lhs", "false".into()),
        ("transpose_lhs_hint", "false".into()),
        ("transpose_rhs", "false".into()),
    ];
    if full {
        attributes.push(("precision", "#tpu.contract_precision<fp32>".into()));
    }
    insert_before(anchor, "tpu.matmul", &[lhs, rhs, accumulator], accumulator.r#type(), &attributes)
}
