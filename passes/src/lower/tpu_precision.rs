//! `flywheel-emulate-tpu-precision` (see [`PASS`]).

use crate::{
    analysis::hlo::HloBuilder,
    options::{NoOptions, Options},
    pass::{external_pass, Anchor, PassId, PassInfo},
};
use flywheel_dialect::{
    diagnostics::emit_error,
    stablehlo::{DotGeneral, Precision},
    tensor::TensorInfo,
};
use melior::{
    ir::{
        operation::{OperationLike, OperationRef, WalkOrder, WalkResult},
        TypeLike, ValueLike,
    },
    pass::Pass,
};

static PASS_ID: PassId = PassId;

pub const PASS: PassInfo = PassInfo {
    name: "flywheel-emulate-tpu-precision",
    summary: "Round the f32 operands of DEFAULT-precision products to bf16, as one pass of the TPU's MXU does",
    description: "On a TPU a `stablehlo.dot_general` whose operands both ask for DEFAULT precision (or say \
nothing) runs as one bf16 pass of the MXU: each f32 operand rounded to bf16 (to nearest, ties to even), the \
products summed in f32. This pass writes that rounding out (a `convert` to bf16 and back before the product), \
so that the program run on the CPU computes what the TPU computes: the reference `flywheel check --reference \
tpu` compares against. Left alone: products either of whose operands asks for HIGH or HIGHEST (three and six \
bf16 passes, within f32 rounding of the exact product), operands that are not f32, and shapes that are not \
static. An unreadable `precision_config` is an error at its op.",
    options: NoOptions::SPECS,
    create: |text| Ok(create(NoOptions::parse(text)?)),
};

fn create(_: NoOptions) -> Pass {
    external_pass(&PASS, &PASS_ID, Anchor::Any, emulate_tpu_precision)
}

/// Rounds the f32 operands of every DEFAULT-precision `dot_general` under `root` to bf16;
/// false (with an error at the op) if a product's precision cannot be read.
pub fn emulate_tpu_precision(root: OperationRef) -> bool {
    let mut products = Vec::new();
    root.walk(WalkOrder::PreOrder, |op| {
        if DotGeneral::from_operation(op).is_some() {
            products.push(op.to_raw());
        }
        WalkResult::Advance
    });
    for raw in products {
        // SAFETY: collected from the live module; the pass only adds ops before them.
        let dot = DotGeneral::from_operation(unsafe { OperationRef::from_raw(raw) }).expect("a dot_general");
        match dot.product_precision() {
            Ok(Precision::Default) => {}
            Ok(_) => continue,
            Err(error) => {
                emit_error(dot.operation().location(), &error.to_string());
                return false;
            }
        }
        let builder = HloBuilder::before(dot.operation());
        for index in 0..2 {
            let operand = dot.operation().operand(index).expect("a dot_general has two operands");
            let Some(info) = TensorInfo::of_value(operand).filter(|info| info.element.is_f32()) else { continue };
            let Some(shape) = info.shape.iter().copied().collect::<Option<Vec<i64>>>() else { continue };
            let rounded = builder.convert(builder.convert(operand, &shape, "f32", "bf16"), &shape, "bf16", "f32");
            // SAFETY: a live op and a value defined before it.
            unsafe { mlir_sys::mlirOperationSetOperand(dot.operation().to_raw(), index as isize, rounded.to_raw()) };
        }
    }
    true
}
