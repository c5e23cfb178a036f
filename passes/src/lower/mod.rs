//! Lowering: kernels to Mosaic kernel calls, and what no kernel serves to plain StableHLO.

pub mod to_mosaic;
pub mod to_stablehlo;
