//! Shared pieces of FlyWheel's command-line tools: reading and splitting MLIR input,
//! collecting and rendering diagnostics (and checking them against `expected-*`
//! comments), and writing output files atomically.

pub mod compare;
pub mod cpu;
pub mod diagnostics;
pub mod kernel_handler;
pub mod npy;
pub mod output;
pub mod plugin;
pub mod program;
pub mod source;
pub mod tpu;
pub mod verify_diagnostics;
