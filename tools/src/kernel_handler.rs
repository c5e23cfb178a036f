//! Running programs that contain FlyWheel's Mosaic kernels on the PJRT CPU plugin: each
//! `tpu_custom_call` becomes a typed XLA FFI call to `flywheel_mosaic_kernel`, a handler
//! registered with the plugin (its FFI extension) that runs the kernel body in the Mosaic
//! interpreter, so XLA:CPU runs everything around the kernels.
//!
//! The FFI structs are declared here from XLA's C headers (`xla/ffi/api/c_api.h`,
//! `xla/pjrt/c/pjrt_c_api_ffi_extension.h`) as the CPU plugin (PJRT C API 0.115) has them:
//! its handler registration takes typed handlers only and has no `api_version` field
//! (read from the plugin's own size check and field reads; older headers had one).

use crate::plugin::Plugin;
use flywheel_kernels::array::{element_count, Array, DType};
use flywheel_kernels::interpreter::{interpret, kernel_body};
use melior::{
    ir::{
        attribute::{DictionaryAttribute, IntegerAttribute, StringAttribute},
        operation::{OperationLike, OperationMutLike, WalkOrder, WalkResult},
        r#type::IntegerType,
        Identifier, Module,
    },
    Context,
};
use std::ffi::{c_char, c_void, CString};

/// The FFI target the CPU program calls in place of `tpu_custom_call`.
const TARGET: &str = "flywheel_mosaic_kernel";
/// Its attribute holding the kernel module as text.
const BODY: &str = "body";
const TYPED_FFI: i32 = 4;

/// Turns `module`'s Mosaic kernel calls into calls of the interpreter handler; whether it
/// had any.
pub fn call_interpreter(context: &Context, module: &Module) -> Result<bool, String> {
    let mut calls = Vec::new();
    module.as_operation().walk(WalkOrder::PreOrder, |op| {
        let name = op.name().as_string_ref().as_str().map(str::to_owned);
        let target = op.attribute("call_target_name").ok().and_then(flywheel_dialect::ir::string_attribute);
        if name.as_deref() == Ok("stablehlo.custom_call") && target.as_deref() == Some("tpu_custom_call") {
            calls.push(op.to_raw());
        }
        WalkResult::Advance
    });
    let found = !calls.is_empty();
    for raw in calls {
        // SAFETY: collected from the live module above; only attributes change.
        let mut op = unsafe { melior::ir::operation::OperationRefMut::from_raw(raw) };
        let body = kernel_body(&op)?;
        let body = DictionaryAttribute::new(
            context,
            &[(Identifier::new(context, BODY), StringAttribute::new(context, &body).into())],
        );
        op.set_inherent_attribute("call_target_name", StringAttribute::new(context, TARGET).into());
        op.set_inherent_attribute(
            "api_version",
            IntegerAttribute::new(IntegerType::new(context, 32).into(), TYPED_FFI.into()).into(),
        );
        op.set_inherent_attribute("backend_config", body.into());
    }
    Ok(found)
}

/// Registers the handler with the CPU plugin (once per process is enough; XLA keeps a
/// static registry).
pub fn register(plugin: &Plugin) -> Result<(), String> {
    let extension = plugin
        .extension(FFI_EXTENSION)
        .ok_or("the CPU plugin has no FFI extension, so it cannot run Mosaic kernels")?;
    // SAFETY: an extension of type FFI is a `PJRT_FFI_Extension`.
    let extension = unsafe { &*extension.cast::<FfiExtension>() };
    let (target, platform) = (TARGET, "Host");
    let mut args = RegisterHandlerArgs {
        struct_size: std::mem::size_of::<RegisterHandlerArgs>(),
        target_name: target.as_ptr().cast(),
        target_name_size: target.len(),
        handler: handle as *mut c_void,
        platform_name: platform.as_ptr().cast(),
        platform_name_size: platform.len(),
        traits: 0,
    };
    // SAFETY: the arguments match the extension's declaration and outlive the call.
    unsafe { plugin.check(extension.register_handler(&mut args)) }
}

const FFI_EXTENSION: u32 = 5;

#[repr(C)]
struct FfiExtension {
    struct_size: usize,
    kind: u32,
    next: *mut c_void,
    type_id_register: *const c_void,
    user_data_add: *const c_void,
    register_handler: unsafe extern "C" fn(*mut RegisterHandlerArgs) -> *mut pjrt_sys::PJRT_Error,
}

impl FfiExtension {
    unsafe fn register_handler(&self, args: &mut RegisterHandlerArgs) -> *mut pjrt_sys::PJRT_Error {
        (self.register_handler)(args)
    }
}

#[repr(C)]
struct RegisterHandlerArgs {
    struct_size: usize,
    target_name: *const c_char,
    target_name_size: usize,
    handler: *mut c_void,
    platform_name: *const c_char,
    platform_name_size: usize,
    traits: u32,
}

#[repr(C)]
struct InternalExtension {
    struct_size: usize,
    kind: u32,
    next: *mut InternalExtension,
}

const METADATA_EXTENSION: u32 = 1;

#[repr(C)]
struct MetadataExtension {
    base: InternalExtension,
    metadata: *mut Metadata,
}

#[repr(C)]
struct ApiVersion {
    struct_size: usize,
    extension_start: *mut InternalExtension,
    major: i32,
    minor: i32,
}

#[repr(C)]
struct Metadata {
    struct_size: usize,
    api_version: ApiVersion,
    traits: u32,
}

#[repr(C)]
struct FfiApi {
    struct_size: usize,
    extension_start: *mut InternalExtension,
    api_version: ApiVersion,
    internal_api: *const c_void,
    error_create: unsafe extern "C" fn(*mut ErrorCreateArgs) -> *mut c_void,
}

#[repr(C)]
struct ErrorCreateArgs {
    struct_size: usize,
    extension_start: *mut InternalExtension,
    message: *const c_char,
    code: i32,
}

const ERROR_INTERNAL: i32 = 13;

#[repr(C)]
struct List {
    struct_size: usize,
    extension_start: *mut InternalExtension,
    size: i64,
    types: *const u32,
    items: *mut *mut c_void,
}

#[repr(C)]
struct Attributes {
    struct_size: usize,
    extension_start: *mut InternalExtension,
    size: i64,
    types: *const u32,
    names: *const *const ByteSpan,
    values: *const *const c_void,
}

#[repr(C)]
struct ByteSpan {
    pointer: *const u8,
    length: usize,
}

#[repr(C)]
struct FfiBuffer {
    struct_size: usize,
    extension_start: *mut InternalExtension,
    dtype: u32,
    data: *mut u8,
    rank: i64,
    dims: *const i64,
}

#[repr(C)]
struct CallFrame {
    struct_size: usize,
    extension_start: *mut InternalExtension,
    api: *const FfiApi,
    context: *mut c_void,
    stage: u32,
    args: List,
    rets: List,
    attributes: Attributes,
}

const STAGE_EXECUTE: u32 = 3;
const ATTRIBUTE_STRING: u32 = 4;

/// The handler XLA calls: answers the metadata query at registration, does nothing before
/// the execute stage, and runs the kernel then. It must not unwind into XLA.
unsafe extern "C" fn handle(frame: *mut CallFrame) -> *mut c_void {
    let frame = &mut *frame;
    let mut extension = frame.extension_start;
    while !extension.is_null() {
        if (*extension).kind == METADATA_EXTENSION {
            let metadata = &mut *(*extension.cast::<MetadataExtension>()).metadata;
            metadata.api_version.major = 0;
            metadata.api_version.minor = 1;
            metadata.traits = 0;
            return std::ptr::null_mut();
        }
        extension = (*extension).next;
    }
    if frame.stage != STAGE_EXECUTE {
        return std::ptr::null_mut();
    }
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| run_kernel(frame)));
    let message = match outcome {
        Ok(Ok(())) => return std::ptr::null_mut(),
        Ok(Err(message)) => message,
        Err(_) => "the Mosaic interpreter panicked".to_owned(),
    };
    let message = CString::new(format!("{TARGET}: {message}")).unwrap_or_default();
    let mut args = ErrorCreateArgs {
        struct_size: std::mem::size_of::<ErrorCreateArgs>(),
        extension_start: std::ptr::null_mut(),
        message: message.as_ptr(),
        code: ERROR_INTERNAL,
    };
    // XLA copies the message.
    ((*frame.api).error_create)(&mut args)
}

unsafe fn run_kernel(frame: &CallFrame) -> Result<(), String> {
    let body = string_attribute(&frame.attributes, BODY)?;
    let buffers = |list: &List| -> Vec<&FfiBuffer> {
        (0..list.size as usize).map(|i| &*(*list.items.add(i)).cast::<FfiBuffer>()).collect()
    };
    let inputs = buffers(&frame.args)
        .into_iter()
        .map(|buffer| {
            let (dtype, dims) = buffer_type(buffer)?;
            let bytes = std::slice::from_raw_parts(buffer.data, element_count(&dims) * dtype.size()).to_vec();
            Array::from_bytes(dtype, dims, bytes)
        })
        .collect::<Result<Vec<_>, _>>()?;
    let results = buffers(&frame.rets);
    let types = results.iter().map(|buffer| buffer_type(buffer)).collect::<Result<Vec<_>, _>>()?;
    let outputs = interpret(&body, &inputs, &types)?;
    for (buffer, output) in results.iter().zip(&outputs) {
        std::ptr::copy_nonoverlapping(output.bytes.as_ptr(), buffer.data, output.bytes.len());
    }
    Ok(())
}

unsafe fn buffer_type(buffer: &FfiBuffer) -> Result<(DType, Vec<i64>), String> {
    let dtype = match buffer.dtype {
        1 => DType::Bool,
        4 => DType::I32,
        11 => DType::F32,
        16 => DType::BF16,
        other => return Err(format!("unsupported FFI element type {other}")),
    };
    Ok((dtype, std::slice::from_raw_parts(buffer.dims, buffer.rank as usize).to_vec()))
}

unsafe fn string_attribute(attributes: &Attributes, name: &str) -> Result<String, String> {
    for i in 0..attributes.size as usize {
        let key = &**attributes.names.add(i);
        if std::slice::from_raw_parts(key.pointer, key.length) == name.as_bytes()
            && *attributes.types.add(i) == ATTRIBUTE_STRING
        {
            let value = &*(*attributes.values.add(i)).cast::<ByteSpan>();
            return Ok(String::from_utf8_lossy(std::slice::from_raw_parts(value.pointer, value.length)).into_owned());
        }
    }
    Err(format!("the call has no string attribute '{name}'"))
}
