//! FlyWheel's passes, one per file, and the machinery `flywheel-opt` and the JAX bridge
//! use to run them by name next to upstream MLIR passes.
//!
//! Each pass module exports its transform as plain functions (usable without a pass
//! manager) and a `PassInfo` that the registry lists.

pub mod atoms;
pub mod block_search;
pub mod exp_softmax;
pub mod gdn_chunked;
pub mod hlo;
mod kernel_text;
pub mod layout;
pub mod lower_to_mosaic;
pub mod lower_to_stablehlo;
pub mod mosaic_attention;
pub mod mosaic_gated_delta;
pub mod operands;
pub mod options;
pub mod pipeline;
pub mod raise_attention;
pub mod raise_gated_delta;
pub mod registry;
pub mod shard;
pub mod software_pipeline;
pub mod tile;
pub mod tile_ir;
pub mod tpu_pipeline;
pub mod trace;
pub mod tri_inverse;
pub mod verify;

pub use flywheel_dialect;
pub use registry::{find_pass, find_pipeline, passes, pipelines, PassInfo, PipelineInfo};
