//! Before tiling: verify the FlyWheel ops, place them in programs sharded over chips, and
//! choose each kernel's orientation.

pub mod layout;
pub mod shard;
pub mod verify;
