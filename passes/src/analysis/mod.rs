//! What the raising and lowering passes share: axis atoms, use-def tracing through calls
//! and layout ops, choosing operand sources, and building StableHLO.

pub mod atoms;
pub mod hlo;
pub mod operands;
pub mod product;
pub mod trace;
