// What the MLIR C API lacks: inlining a call, which needs a value mapping (IRMapping) to
// clone a callee's body in place of the call, and printing through a buffer.
#include "mlir/CAPI/IR.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Operation.h"

// Replaces `call` by a copy of the body of `callee` (one block, ending in a terminator
// whose operands are the results), its arguments bound to the call's operands. Returns
// false, changing nothing, when the callee does not have that shape.
extern "C" bool flywheelInlineCall(MlirOperation call, MlirOperation callee) {
  mlir::Operation *callOp = unwrap(call);
  mlir::Operation *function = unwrap(callee);
  if (function->getNumRegions() != 1 || !function->getRegion(0).hasOneBlock())
    return false;
  mlir::Block &entry = function->getRegion(0).front();
  if (entry.empty() || entry.getNumArguments() != callOp->getNumOperands())
    return false;
  mlir::Operation &terminator = entry.back();
  if (terminator.getNumOperands() != callOp->getNumResults())
    return false;
  mlir::IRMapping mapping;
  for (auto [argument, operand] : llvm::zip(entry.getArguments(), callOp->getOperands()))
    mapping.map(argument, operand);
  mlir::OpBuilder builder(callOp);
  for (mlir::Operation &op : entry.without_terminator())
    builder.clone(op, mapping);
  for (auto [result, returned] : llvm::zip(callOp->getResults(), terminator.getOperands()))
    result.replaceAllUsesWith(mapping.lookupOrDefault(returned));
  callOp->erase();
  return true;
}

// Prints `op` through a buffer and hands the text to `callback` once. The C API's
// printing streams are unbuffered, calling back once per token, which costs as much again
// as the printing itself on a large module.
extern "C" void flywheelPrintOperation(MlirOperation op, MlirOpPrintingFlags flags, MlirStringCallback callback,
                                       void *userData) {
  std::string text;
  llvm::raw_string_ostream stream(text);
  // Unbuffered, every character would take the stream's slow path.
  stream.SetBufferSize(1 << 16);
  unwrap(op)->print(stream, *unwrap(flags));
  stream.flush();
  callback(MlirStringRef{text.data(), text.size()}, userData);
}
