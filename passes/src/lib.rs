//! FlyWheel's passes, grouped by stage, and the machinery `flywheel-opt` and the JAX
//! bridge use to run them by name next to upstream MLIR passes.
//!
//! Stages, in pipeline order: `raise` (StableHLO to FlyWheel ops), `prepare` (verify,
//! shard, choose layouts), `tile` (FlyWheel ops to tile IR kernels), `transforms` (rewrite
//! the kernels), `lower` (to Mosaic kernel calls, or to plain StableHLO). `analysis` holds
//! what the raising passes share; `pipelines` the pipeline parser and `flywheel-tpu`.
//! Each pass module exports its transform as plain functions (usable without a pass
//! manager) and a `PassInfo` that the registry lists.

pub mod analysis;
#[cfg(test)]
mod architecture;
pub mod lower;
pub mod options;
pub mod pass;
pub mod pipelines;
pub mod prepare;
pub mod raise;
pub mod registry;
pub mod target;
pub mod tile;
pub mod transforms;

pub use flywheel_dialect;
pub use pass::{PassInfo, PipelineInfo};
pub use registry::{find_pass, find_pipeline, passes, pipelines};
