// Gated DeltaNet over 8 tokens with 1 key head shared by 2 value heads (see
// lower/to-stablehlo.mlir, which compares it with gdn-split.mlir).
func.func @main(%q: tensor<1x8x1x4xf32>, %k: tensor<1x8x1x4xf32>, %v: tensor<1x8x2x4xf32>, %g: tensor<1x8x2xf32>, %beta: tensor<1x8x2xf32>) -> (tensor<1x8x2x4xf32>, tensor<1x2x4x4xf32>) {
  %o, %s = "flywheel.gated_delta"(%q, %k, %v, %g, %beta) {operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 0>, scale = 0.5 : f32, chunk_size = 4 : i64, layout = "BTNH"} : (tensor<1x8x1x4xf32>, tensor<1x8x1x4xf32>, tensor<1x8x2x4xf32>, tensor<1x8x2xf32>, tensor<1x8x2xf32>) -> (tensor<1x8x2x4xf32>, tensor<1x2x4x4xf32>)
  return %o, %s : tensor<1x8x2x4xf32>, tensor<1x2x4x4xf32>
}
