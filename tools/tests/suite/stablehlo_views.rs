//! The typed StableHLO views read real JAX output, and ops built with them print in the
//! form JAX writes.

use crate::repository_root;
use flywheel_dialect::{
    create_context,
    stablehlo::{
        self, BroadcastInDim, Compare, ComparisonDirection, Constant, DotDimensionNumbers, DotGeneral, Iota, Precision,
        Reduce, Reducer,
    },
};
use flywheel_tools::source::parse_module;
use libtest_mimic::{Failed, Trial};
use melior::ir::{
    operation::{OperationLike, OperationRef, WalkOrder, WalkResult},
    Attribute, BlockLike, Location, RegionLike, Type,
};

pub fn trials() -> Vec<Trial> {
    vec![
        Trial::test("stablehlo::dot_general_of_einsum_attention", dot_general_of_einsum_attention),
        Trial::test("stablehlo::softmax_reductions", softmax_reductions),
        Trial::test("stablehlo::causal_mask_parts", causal_mask_parts),
        Trial::test("stablehlo::built_ops_print_like_jax", built_ops_print_like_jax),
    ]
}

/// Calls `visit` on every op of a fixture.
fn walk_fixture(name: &str, mut visit: impl FnMut(OperationRef)) -> Result<(), Failed> {
    let context = create_context();
    let path = repository_root().join(format!("test/fixtures/{name}.mlir"));
    let module = parse_module(&context, &std::fs::read(path)?).ok_or("fixture parses")?;
    module.as_operation().walk(WalkOrder::PreOrder, |op| {
        visit(op);
        WalkResult::Advance
    });
    Ok(())
}

fn dot_general_of_einsum_attention() -> Result<(), Failed> {
    let mut dots = Vec::new();
    walk_fixture("attention_mha_f32", |op| {
        if let Some(dot) = DotGeneral::from_operation(op) {
            dots.push((dot.dimension_numbers(), dot.precision()));
        }
    })?;
    let [(qk, qk_precision), (pv, _)] = dots.as_slice() else {
        return Err(format!("expected two dot_generals, got {dots:?}").into());
    };
    // q, k: [B,T,N,H]; QK^T batches B and N and contracts H.
    let expected_qk = DotDimensionNumbers {
        lhs_batching: vec![0, 2],
        rhs_batching: vec![0, 2],
        lhs_contracting: vec![3],
        rhs_contracting: vec![3],
    };
    assert_eq!(qk.as_ref().unwrap(), &expected_qk);
    assert_eq!(qk_precision.as_ref().unwrap(), &vec![Precision::Default, Precision::Default]);
    // P·V contracts the key axis.
    assert_eq!(pv.as_ref().unwrap().rhs_contracting.len(), 1);
    Ok(())
}

fn softmax_reductions() -> Result<(), Failed> {
    let (mut reducers, mut scale) = (Vec::new(), None);
    walk_fixture("attention_mha_f32", |op| {
        if let Some(reduce) = Reduce::from_operation(op) {
            reducers.push((reduce.reducer(), reduce.dimensions().unwrap()));
        }
        if let Some(constant) = Constant::from_operation(op) {
            if constant.splat() == Some(0.125) {
                scale = Some(0.125);
            }
        }
    })?;
    assert_eq!(reducers, vec![(Some(Reducer::Maximum), vec![3]), (Some(Reducer::Add), vec![3])]);
    assert_eq!(scale, Some(0.125), "the 1/sqrt(64) scale constant");
    Ok(())
}

fn causal_mask_parts() -> Result<(), Failed> {
    let (mut directions, mut iota_dims, mut broadcasts) = (Vec::new(), Vec::new(), 0);
    walk_fixture("attention_causal_bf16", |op| {
        if let Some(compare) = Compare::from_operation(op) {
            directions.push(compare.direction().unwrap());
            assert_eq!(compare.compare_type().unwrap(), Some(stablehlo::ComparisonType::Signed));
        }
        if let Some(iota) = Iota::from_operation(op) {
            iota_dims.push(iota.iota_dimension().unwrap());
        }
        if let Some(broadcast) = BroadcastInDim::from_operation(op) {
            broadcast.broadcast_dimensions().unwrap();
            broadcasts += 1;
        }
    })?;
    assert!(directions.contains(&ComparisonDirection::Le), "{directions:?}");
    iota_dims.sort();
    assert_eq!(iota_dims, vec![0, 1]);
    assert!(broadcasts > 0);
    Ok(())
}

fn built_ops_print_like_jax() -> Result<(), Failed> {
    let context = create_context();
    let module = parse_module(&context, b"func.func @f(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>) {\n  return\n}")
        .ok_or("parses")?;
    let function = module.body().first_operation().ok_or("a function")?;
    let block = function.region(0)?.first_block().ok_or("a body")?;
    let dims = DotDimensionNumbers { lhs_contracting: vec![1], rhs_contracting: vec![0], ..Default::default() };
    let attribute = Attribute::parse(&context, &dims.to_string()).ok_or("the attribute parses")?;
    let result_type = Type::parse(&context, "tensor<2x4xf32>").ok_or("type parses")?;
    let location = Location::unknown(&context);
    let dot = stablehlo::build(
        DotGeneral::NAME,
        location,
        &[block.argument(0)?.into(), block.argument(1)?.into()],
        &[result_type],
        &[("dot_dimension_numbers", attribute)],
    );
    let dot = block.insert_operation(0, dot);
    let text = dot.to_string();
    assert_eq!(
        text,
        "%0 = \"stablehlo.dot_general\"(%arg0, %arg1) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>}> : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>"
    );
    let view = DotGeneral::from_operation(dot).ok_or("a dot_general view")?;
    assert_eq!(view.dimension_numbers()?, dims);
    Ok(())
}
