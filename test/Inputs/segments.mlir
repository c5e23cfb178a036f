// Attention with segment ids (see lower/to-stablehlo.mlir).
func.func @main(%q: tensor<2x8x2x4xf32>, %k: tensor<2x8x2x4xf32>, %v: tensor<2x8x2x4xf32>, %qs: tensor<2x8xi32>, %ks: tensor<2x8xi32>) -> tensor<2x8x2x4xf32> {
  %o = "flywheel.attention"(%q, %k, %v, %qs, %ks) {operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 1, 1>, scale = 0.5 : f32, causal = true, layout = "BTNH", q_heads = 2, kv_heads = 2} : (tensor<2x8x2x4xf32>, tensor<2x8x2x4xf32>, tensor<2x8x2x4xf32>, tensor<2x8xi32>, tensor<2x8xi32>) -> tensor<2x8x2x4xf32>
  return %o : tensor<2x8x2x4xf32>
}
