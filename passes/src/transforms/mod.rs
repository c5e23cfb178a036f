//! The FlyWheel transforms of tiled kernels: the exp-reformulated softmax, software
//! pipelining, and the blocked triangular inverse.

pub mod exp_softmax;
pub mod software_pipeline;
pub mod tri_inverse;
