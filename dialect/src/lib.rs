//! The FlyWheel dialect: its IRDL definition, the semantic verifier for what IRDL cannot
//! express, typed views of its ops, and typed views of the StableHLO ops FlyWheel reads
//! and writes (StableHLO is not in upstream MLIR, so it lives here as unregistered,
//! generic-form ops).

pub mod diagnostics;
pub mod ir;
pub mod layout;
pub mod ops;
pub mod stablehlo;
pub mod tensor;
pub mod verify;

pub use melior;

use melior::{
    dialect::DialectRegistry,
    ir::Module,
    utility::{load_irdl_dialects, register_all_dialects},
    Context,
};

/// The IRDL definition of the `flywheel` dialect, with each op's semantics documented.
pub const FLYWHEEL_IRDL: &str = include_str!("flywheel.irdl.mlir");

/// A float as MLIR's parser reads it back exactly (`1.25000000000000000e-1`).
pub fn float_literal(value: f64) -> String {
    format!("{value:.17e}")
}

/// A context as FlyWheel tools use it: every upstream dialect registered, the `flywheel`
/// dialect loaded from IRDL, and unregistered dialects (StableHLO, CHLO, Shardy) allowed.
pub fn create_context() -> Context {
    let registry = DialectRegistry::new();
    register_all_dialects(&registry);
    // Single-threaded: passes written in Rust run on the calling thread.
    let context = Context::new_with_registry(&registry, false);
    context.set_allow_unregistered_dialects(true);
    let definition = Module::parse(&context, FLYWHEEL_IRDL).expect("the built-in IRDL definition parses");
    assert!(load_irdl_dialects(&definition), "the built-in IRDL definition loads");
    context
}
