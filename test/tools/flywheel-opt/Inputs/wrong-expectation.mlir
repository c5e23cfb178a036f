func.func @f(%q: tensor<1x16x2x8xf32>) -> tensor<1x16x2x8xf32> {
  // expected-error@+1 {{a message the verifier never says}}
  %o = "flywheel.attention"(%q, %q, %q) {operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0>, scale = 0.5 : f32, causal = false, layout = "BTNH", q_heads = 3, kv_heads = 2} : (tensor<1x16x2x8xf32>, tensor<1x16x2x8xf32>, tensor<1x16x2x8xf32>) -> tensor<1x16x2x8xf32>
  return %o : tensor<1x16x2x8xf32>
}
