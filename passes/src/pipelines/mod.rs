//! Pipelines: MLIR's textual pipeline syntax with FlyWheel passes mixed in, and the named
//! pipelines (`flywheel-tpu`).

pub mod parse;
pub mod tpu;
