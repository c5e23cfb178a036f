//! Shared pieces of FlyWheel's command-line tools: reading and splitting MLIR input,
//! collecting and rendering diagnostics (and checking them against `expected-*`
//! comments), and writing output files atomically.

pub mod diagnostics;
pub mod output;
pub mod source;
pub mod tpu;
pub mod verify_diagnostics;
