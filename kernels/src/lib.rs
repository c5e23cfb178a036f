//! FlyWheel's Mosaic TPU kernels: the kernel modules `flywheel-tile` writes as tile IR
//! (attention, Gated DeltaNet), the helpers the transform passes read and rewrite them
//! with, their serialization for libtpu, and an interpreter of their semantics that runs
//! them on the host (with host arrays) for numerics tests.

pub mod array;
pub mod attention;
pub mod gated_delta;
pub mod interpreter;
pub mod serialize;
pub mod tile_ir;
mod writer;

pub use writer::{Element, Precision};
