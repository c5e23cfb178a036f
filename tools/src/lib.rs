//! Shared pieces of FlyWheel's command-line tools: reading and splitting MLIR input,
//! collecting and rendering diagnostics (and checking them against `expected-*`
//! comments), writing output files atomically, and refusing standard streams that were
//! closed.

pub mod compare;
pub mod cpu;
pub mod diagnostics;
pub mod kernel_handler;
pub mod npy;
pub mod output;
pub mod plugin;
pub mod program;
pub mod source;
pub mod standard_streams;
pub mod tpu;
pub mod verify_diagnostics;
