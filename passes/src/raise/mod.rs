//! Raising: StableHLO softmax attention and Gated DeltaNet into FlyWheel's semantic ops.

pub mod attention;
pub mod gated_delta;
