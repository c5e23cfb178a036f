//! Emitting diagnostics at IR locations, with every severity MLIR knows.

use melior::ir::Location;
use mlir_sys::{MlirLocation, MlirStringRef};

unsafe extern "C" {
    fn flywheelEmitDiagnostic(location: MlirLocation, severity: i32, message: MlirStringRef);
}

/// How serious a diagnostic is; the discriminants are the C++ shim's severities.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Severity {
    Error = 0,
    Warning = 1,
    Remark = 2,
}

/// Reports `message` at `location` through the context's diagnostic engine, so it reaches
/// whatever handler is attached (the terminal, or `--verify-diagnostics`).
pub fn emit(location: Location, severity: Severity, message: &str) {
    let message = MlirStringRef { data: message.as_ptr().cast(), length: message.len() };
    unsafe { flywheelEmitDiagnostic(location.to_raw(), severity as i32, message) }
}

pub fn emit_error(location: Location, message: &str) {
    emit(location, Severity::Error, message)
}

pub fn emit_remark(location: Location, message: &str) {
    emit(location, Severity::Remark, message)
}
