//! IR rewrites and printing the MLIR C API lacks.

use melior::ir::{
    block::BlockArgument,
    operation::{OperationPrintingFlags, OperationRef, OperationResult},
    Value, ValueLike,
};
use mlir_sys::{MlirOpPrintingFlags, MlirOperation, MlirStringCallback, MlirStringRef};

/// The text of a string attribute, `None` for another attribute. melior's
/// `StringAttribute::value` panics on the empty string, which input may hold.
pub fn string_attribute(attribute: melior::ir::Attribute) -> Option<String> {
    use melior::ir::AttributeLike;
    let raw = attribute.to_raw();
    // SAFETY: a live attribute; a string attribute's value is `length` bytes at `data`.
    unsafe {
        if !mlir_sys::mlirAttributeIsAString(raw) {
            return None;
        }
        let value = mlir_sys::mlirStringAttrGetValue(raw);
        let bytes =
            if value.length == 0 { &[][..] } else { std::slice::from_raw_parts(value.data.cast::<u8>(), value.length) };
        Some(String::from_utf8_lossy(bytes).into_owned())
    }
}

unsafe extern "C" {
    fn flywheelInlineCall(call: MlirOperation, callee: MlirOperation) -> bool;
    fn flywheelPrintOperation(
        op: MlirOperation,
        flags: MlirOpPrintingFlags,
        callback: MlirStringCallback,
        user_data: *mut std::ffi::c_void,
    );
}

/// The text of `op` printed with `flags`, as bytes (not checked as UTF-8: it is written
/// out as it is). Printed through one buffer: melior's printing calls back per token.
pub fn print_operation(op: OperationRef, flags: &OperationPrintingFlags) -> Vec<u8> {
    unsafe extern "C" fn append(text: MlirStringRef, buffer: *mut std::ffi::c_void) {
        if text.length > 0 {
            // SAFETY: MLIR passes `length` bytes at `data`, and `buffer` is the Vec below.
            unsafe {
                (*buffer.cast::<Vec<u8>>()).extend_from_slice(std::slice::from_raw_parts(text.data.cast(), text.length))
            };
        }
    }
    let mut text = Vec::new();
    // SAFETY: a live op and flags; `append` only writes to `text`.
    unsafe { flywheelPrintOperation(op.to_raw(), flags.to_raw(), Some(append), (&mut text as *mut Vec<u8>).cast()) };
    text
}

/// Replaces the `func.call` `call` by a copy of `callee`'s body (one block), its arguments
/// bound to the call's operands; false, changing nothing, for a callee of another shape.
/// The call is erased: its handle must not be used after a successful inline.
pub fn inline_call(call: OperationRef, callee: OperationRef) -> bool {
    // SAFETY: both ops are live; the shim only erases the call.
    unsafe { flywheelInlineCall(call.to_raw(), callee.to_raw()) }
}

/// The op result `value` is, if it is one. Use this, not melior's `TryFrom`, whose error
/// path prints the value, and with it the whole module: a failed conversion costs time in
/// the module's size.
pub fn op_result<'c, 'a>(value: Value<'c, 'a>) -> Option<OperationResult<'c, 'a>> {
    value.is_operation_result().then(|| OperationResult::try_from(value).ok()).flatten()
}

/// The block argument `value` is, if it is one (see `op_result`).
pub fn block_argument<'c, 'a>(value: Value<'c, 'a>) -> Option<BlockArgument<'c, 'a>> {
    value.is_block_argument().then(|| BlockArgument::try_from(value).ok()).flatten()
}

/// The op that defines `value`, if an op does.
pub fn defining_op<'c, 'a>(value: Value<'c, 'a>) -> Option<OperationRef<'c, 'a>> {
    op_result(value).map(|result| result.owner())
}
