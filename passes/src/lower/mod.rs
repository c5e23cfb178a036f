//! Lowering: kernels to Mosaic kernel calls, and what no kernel serves to plain StableHLO;
//! and, for references run on the CPU, the TPU's one-pass bf16 products written out.

pub mod to_mosaic;
pub mod to_stablehlo;
pub mod tpu_precision;
