// gdn-whole.mlir computed in two halves: the first half's final state is the second
// half's initial state, and the key head is repeated for both value heads explicitly.
func.func @main(%q: tensor<1x8x1x4xf32>, %k: tensor<1x8x1x4xf32>, %v: tensor<1x8x2x4xf32>, %g: tensor<1x8x2xf32>, %beta: tensor<1x8x2xf32>) -> (tensor<1x8x2x4xf32>, tensor<1x2x4x4xf32>) {
  %q2 = "stablehlo.broadcast_in_dim"(%q) <{broadcast_dimensions = array<i64: 0, 1, 2, 3>}> : (tensor<1x8x1x4xf32>) -> tensor<1x8x2x4xf32>
  %k2 = "stablehlo.broadcast_in_dim"(%k) <{broadcast_dimensions = array<i64: 0, 1, 2, 3>}> : (tensor<1x8x1x4xf32>) -> tensor<1x8x2x4xf32>
  %q_a = "stablehlo.slice"(%q2) <{start_indices = array<i64: 0, 0, 0, 0>, limit_indices = array<i64: 1, 4, 2, 4>, strides = array<i64: 1, 1, 1, 1>}> : (tensor<1x8x2x4xf32>) -> tensor<1x4x2x4xf32>
  %q_b = "stablehlo.slice"(%q2) <{start_indices = array<i64: 0, 4, 0, 0>, limit_indices = array<i64: 1, 8, 2, 4>, strides = array<i64: 1, 1, 1, 1>}> : (tensor<1x8x2x4xf32>) -> tensor<1x4x2x4xf32>
  %k_a = "stablehlo.slice"(%k2) <{start_indices = array<i64: 0, 0, 0, 0>, limit_indices = array<i64: 1, 4, 2, 4>, strides = array<i64: 1, 1, 1, 1>}> : (tensor<1x8x2x4xf32>) -> tensor<1x4x2x4xf32>
  %k_b = "stablehlo.slice"(%k2) <{start_indices = array<i64: 0, 4, 0, 0>, limit_indices = array<i64: 1, 8, 2, 4>, strides = array<i64: 1, 1, 1, 1>}> : (tensor<1x8x2x4xf32>) -> tensor<1x4x2x4xf32>
  %v_a = "stablehlo.slice"(%v) <{start_indices = array<i64: 0, 0, 0, 0>, limit_indices = array<i64: 1, 4, 2, 4>, strides = array<i64: 1, 1, 1, 1>}> : (tensor<1x8x2x4xf32>) -> tensor<1x4x2x4xf32>
  %v_b = "stablehlo.slice"(%v) <{start_indices = array<i64: 0, 4, 0, 0>, limit_indices = array<i64: 1, 8, 2, 4>, strides = array<i64: 1, 1, 1, 1>}> : (tensor<1x8x2x4xf32>) -> tensor<1x4x2x4xf32>
  %g_a = "stablehlo.slice"(%g) <{start_indices = array<i64: 0, 0, 0>, limit_indices = array<i64: 1, 4, 2>, strides = array<i64: 1, 1, 1>}> : (tensor<1x8x2xf32>) -> tensor<1x4x2xf32>
  %g_b = "stablehlo.slice"(%g) <{start_indices = array<i64: 0, 4, 0>, limit_indices = array<i64: 1, 8, 2>, strides = array<i64: 1, 1, 1>}> : (tensor<1x8x2xf32>) -> tensor<1x4x2xf32>
  %b_a = "stablehlo.slice"(%beta) <{start_indices = array<i64: 0, 0, 0>, limit_indices = array<i64: 1, 4, 2>, strides = array<i64: 1, 1, 1>}> : (tensor<1x8x2xf32>) -> tensor<1x4x2xf32>
  %b_b = "stablehlo.slice"(%beta) <{start_indices = array<i64: 0, 4, 0>, limit_indices = array<i64: 1, 8, 2>, strides = array<i64: 1, 1, 1>}> : (tensor<1x8x2xf32>) -> tensor<1x4x2xf32>
  %o_a, %s_a = "flywheel.gated_delta"(%q_a, %k_a, %v_a, %g_a, %b_a) {operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 0>, scale = 0.5 : f32, chunk_size = 4 : i64, layout = "BTNH"} : (tensor<1x4x2x4xf32>, tensor<1x4x2x4xf32>, tensor<1x4x2x4xf32>, tensor<1x4x2xf32>, tensor<1x4x2xf32>) -> (tensor<1x4x2x4xf32>, tensor<1x2x4x4xf32>)
  %o_b, %s_b = "flywheel.gated_delta"(%q_b, %k_b, %v_b, %g_b, %b_b, %s_a) {operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 1>, scale = 0.5 : f32, chunk_size = 4 : i64, layout = "BTNH"} : (tensor<1x4x2x4xf32>, tensor<1x4x2x4xf32>, tensor<1x4x2x4xf32>, tensor<1x4x2xf32>, tensor<1x4x2xf32>, tensor<1x2x4x4xf32>) -> (tensor<1x4x2x4xf32>, tensor<1x2x4x4xf32>)
  %o = "stablehlo.concatenate"(%o_a, %o_b) <{dimension = 1 : i64}> : (tensor<1x4x2x4xf32>, tensor<1x4x2x4xf32>) -> tensor<1x8x2x4xf32>
  return %o, %s_b : tensor<1x8x2x4xf32>, tensor<1x2x4x4xf32>
}
