//! Raising: StableHLO softmax attention and Gated DeltaNet into FlyWheel's semantic ops,
//! after normalizing JAX's spellings.

pub mod attention;
pub mod gated_delta;
pub mod normalize;
pub mod profitability;
mod reroll;
