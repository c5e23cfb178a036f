// segments.mlir with the segment ids turned into an explicit mask [B, 1, Tq, Tk].
func.func @main(%q: tensor<2x8x2x4xf32>, %k: tensor<2x8x2x4xf32>, %v: tensor<2x8x2x4xf32>, %qs: tensor<2x8xi32>, %ks: tensor<2x8xi32>) -> tensor<2x8x2x4xf32> {
  %qb = "stablehlo.broadcast_in_dim"(%qs) <{broadcast_dimensions = array<i64: 0, 2>}> : (tensor<2x8xi32>) -> tensor<2x1x8x8xi32>
  %kb = "stablehlo.broadcast_in_dim"(%ks) <{broadcast_dimensions = array<i64: 0, 3>}> : (tensor<2x8xi32>) -> tensor<2x1x8x8xi32>
  %mask = "stablehlo.compare"(%qb, %kb) <{comparison_direction = #stablehlo<comparison_direction EQ>, compare_type = #stablehlo<comparison_type SIGNED>}> : (tensor<2x1x8x8xi32>, tensor<2x1x8x8xi32>) -> tensor<2x1x8x8xi1>
  %o = "flywheel.attention"(%q, %k, %v, %mask) {operandSegmentSizes = array<i32: 1, 1, 1, 1, 0, 0, 0>, scale = 0.5 : f32, causal = true, layout = "BTNH", q_heads = 2, kv_heads = 2} : (tensor<2x8x2x4xf32>, tensor<2x8x2x4xf32>, tensor<2x8x2x4xf32>, tensor<2x1x8x8xi1>) -> tensor<2x8x2x4xf32>
  return %o : tensor<2x8x2x4xf32>
}
