//! `flywheel-lower-to-mosaic` (see [`PASS`]): replaces each `flywheel.attention_kernel` and
//! `flywheel.gated_delta_kernel` (tile IR from `flywheel-tile`) with `stablehlo.custom_call @tpu_custom_call`, as Pallas calls Mosaic
//! kernels: the kernel module serialized (generic form, `flywheel.matmul` as
//! `tpu.matmul`, every op name under `stable_mosaic.`) and base64-encoded into the JSON
//! `backend_config` with the op's flops, transcendentals and bytes as the cost estimate,
//! and the op's `vmem_limit` (MiB, where `flywheel-tile` set one) as the scoped VMEM
//! the kernel may use, written as Pallas writes `vmem_limit_bytes`.

use crate::{
    analysis::hlo::HloBuilder,
    options::{NoOptions, Options},
    pass::{external_pass, Anchor, PassId, PassInfo},
};
use base64::Engine;
use flywheel_dialect::ir::string_attribute;
use flywheel_dialect::{diagnostics::emit_error, stablehlo::build};
use flywheel_kernels::serialize::serialize;
use melior::{
    ir::{
        attribute::{FlatSymbolRefAttribute, IntegerAttribute},
        operation::{OperationLike, OperationMutLike, OperationRef, WalkOrder, WalkResult},
        Attribute, BlockLike, RegionLike, Value, ValueLike,
    },
    pass::Pass,
};

static PASS_ID: PassId = PassId;

pub const PASS: PassInfo = PassInfo {
    name: "flywheel-lower-to-mosaic",
    summary:
        "Serialize each FlyWheel kernel op (attention, gated delta) into a Mosaic TPU kernel call (tpu_custom_call)",
    description: "Replaces each `flywheel.attention_kernel` and `flywheel.gated_delta_kernel` (tile IR from \
`flywheel-tile`) with `stablehlo.custom_call @tpu_custom_call`, as Pallas calls Mosaic kernels: the kernel module \
serialized (`flywheel.matmul` as `tpu.matmul` at the precision it asks for, every op name under `stable_mosaic.`) \
and base64-encoded into the JSON `backend_config`, with the op's flops, transcendentals and bytes as the cost \
estimate and its `vmem_limit` as the scoped VMEM the kernel may use.",
    options: NoOptions::SPECS,
    create: |text| Ok(create(NoOptions::parse(text)?)),
};

fn create(_: NoOptions) -> Pass {
    external_pass(&PASS, &PASS_ID, Anchor::Any, move |op: OperationRef| lower_to_mosaic(op))
}

/// The kernel ops, each with the name its custom call carries.
const KERNELS: [(&str, &str); 2] =
    [("flywheel.attention_kernel", "flywheel_attention"), ("flywheel.gated_delta_kernel", "flywheel_gated_delta")];

fn kernel_name(op: OperationRef) -> Option<(&'static str, &'static str)> {
    let name = op.name();
    let name = name.as_string_ref().as_str().ok()?;
    KERNELS.into_iter().find(|(kernel, _)| *kernel == name)
}

/// Lowers every kernel op under `root`; false on an internal error.
pub fn lower_to_mosaic(root: OperationRef) -> bool {
    let mut kernels = Vec::new();
    root.walk(WalkOrder::PostOrder, |op| {
        if kernel_name(op).is_some() {
            kernels.push(op.to_raw());
        }
        WalkResult::Advance
    });
    for raw in kernels {
        // SAFETY: each op (and its kernel module) is erased only after it is lowered, and
        // none is visited twice.
        let op = unsafe { OperationRef::from_raw(raw) };
        match kernel_module(root, op).and_then(|module| lower_kernel(op, module).map(|()| module)) {
            Ok(module) => unsafe {
                mlir_sys::mlirOperationDestroy(raw);
                mlir_sys::mlirOperationDestroy(module.to_raw());
            },
            Err(message) => {
                let (kernel, _) = kernel_name(op).expect("collected as a kernel");
                emit_error(op.location(), &format!("'{kernel}' op: cannot serialize its kernel: {message}"));
                return false;
            }
        }
    }
    true
}

/// The backend config's entry that gives the kernel op's `vmem_limit` MiB of scoped VMEM
/// (memory space 1), or none (libtpu's default) without one.
fn scoped_vmem(op: OperationRef) -> Result<String, String> {
    if op.attribute("vmem_limit").is_err() {
        return Ok(String::new());
    }
    let mib = integer(op, "vmem_limit")?;
    if !(1..=1 << 20).contains(&mib) {
        return Err(format!("'vmem_limit' must be from 1 to 1048576 MiB, not {mib}"));
    }
    Ok(format!(", \"scoped_memory_configs\": [{{\"memory_space\": 1, \"offset\": 0, \"size\": {}}}]", mib << 20))
}

/// The integer attribute `name` of `op`.
fn integer(op: OperationRef, name: &str) -> Result<i64, String> {
    let attribute = op.attribute(name).map_err(|_| format!("no '{name}'"))?;
    IntegerAttribute::try_from(attribute)
        .map(|integer| integer.value())
        .map_err(|_| format!("'{name}' is not an integer"))
}

/// The kernel module `op` names (a `builtin.module` directly in `root`).
fn kernel_module<'c, 'a>(root: OperationRef<'c, 'a>, op: OperationRef<'c, 'a>) -> Result<OperationRef<'c, 'a>, String> {
    let symbol = op
        .attribute("kernel")
        .ok()
        .and_then(|a| FlatSymbolRefAttribute::try_from(a).ok())
        .ok_or("no 'kernel' symbol")?
        .value()
        .to_owned();
    let mut next =
        root.region(0).ok().and_then(|region| region.first_block()).and_then(|block| block.first_operation());
    while let Some(candidate) = next {
        let name = candidate.attribute("sym_name").ok().and_then(string_attribute);
        if candidate.name().as_string_ref().as_str() == Ok("builtin.module") && name.as_deref() == Some(symbol.as_str())
        {
            return Ok(candidate);
        }
        next = candidate.next_in_block();
    }
    Err(format!("no kernel module @{symbol} in the program"))
}

fn lower_kernel(op: OperationRef, module: OperationRef) -> Result<(), String> {
    let body = serialize(module)?;
    let cost = |name: &str| integer(op, name);
    let config = format!(
        "{{\"custom_call_config\": {{\"body\": \"{}\", \"cost_estimate\": {{\"flops\": {}, \"transcendentals\": {}, \"bytes_accessed\": {}, \"remote_bytes_transferred\": 0}}, \"serialization_format\": 1, \"needs_layout_passes\": true}}{}}}",
        base64::engine::general_purpose::STANDARD.encode(&body),
        cost("flops")?,
        cost("transcendentals")?,
        cost("bytes_accessed")?,
        scoped_vmem(op)?
    );
    let b = HloBuilder::before(op);
    let context = op.context();
    // SAFETY: the string is copied into the context.
    let config: Attribute = unsafe {
        Attribute::from_raw(mlir_sys::mlirStringAttrGet(
            context.to_ref().to_raw(),
            mlir_sys::MlirStringRef { data: config.as_ptr().cast(), length: config.len() },
        ))
    };
    let operands: Vec<Value> = op.operands().collect();
    let results: Vec<Value> = op.results().map(Into::into).collect();
    let row_major = |value: &Value| {
        format!("dense<{:?}> : tensor<{}xindex>", (0..rank(*value)).rev().collect::<Vec<_>>(), rank(*value))
    };
    let layouts = |values: &[Value]| values.iter().map(row_major).collect::<Vec<_>>().join(", ");
    // The call's attributes are properties, as JAX writes them; the kernel name is not.
    let properties = [
        ("api_version", b.attribute("1 : i32")),
        ("backend_config", config),
        ("call_target_name", b.attribute("\"tpu_custom_call\"")),
        ("has_side_effect", b.attribute("false")),
        ("operand_layouts", b.attribute(&format!("[{}]", layouts(&operands)))),
        ("result_layouts", b.attribute(&format!("[{}]", layouts(&results)))),
    ];
    let types: Vec<_> = results.iter().map(|result| result.r#type()).collect();
    let mut call = build("stablehlo.custom_call", op.location(), &operands, &types, &properties);
    let (_, call_name) = kernel_name(op).ok_or("not a kernel op")?;
    call.set_attribute("kernel_name", b.attribute(&format!("\"{call_name}\"")));
    let call = b.insert_op(call);
    for (index, result) in results.iter().enumerate() {
        let replacement = call.result(index).expect("as many results");
        unsafe { mlir_sys::mlirValueReplaceAllUsesOfWith(result.to_raw(), replacement.to_raw()) };
    }
    Ok(())
}

fn rank(value: Value) -> i64 {
    unsafe { mlir_sys::mlirShapedTypeGetRank(melior::ir::TypeLike::to_raw(&value.r#type())) }
}
