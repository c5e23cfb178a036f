// Emits an MLIR diagnostic of any severity at a location. The MLIR C API only has
// mlirEmitError; FlyWheel passes also need warnings and remarks.
#include "mlir/CAPI/IR.h"
#include "mlir/IR/Diagnostics.h"

extern "C" void flywheelEmitDiagnostic(MlirLocation location, int severity,
                                       MlirStringRef message) {
  mlir::Location loc = unwrap(location);
  llvm::StringRef text(message.data, message.length);
  switch (severity) {
  case 0:
    mlir::emitError(loc) << text;
    break;
  case 1:
    mlir::emitWarning(loc) << text;
    break;
  default:
    mlir::emitRemark(loc) << text;
    break;
  }
}
