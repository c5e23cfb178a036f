// Two invalid ops: the first located in the Python source JAX traced (as exported
// programs are), the second in this file.
func.func @main(%q: tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32> {
  %o = "flywheel.attention"(%q, %q, %q) {operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0>, scale = 0.25 : f32, causal = false, layout = "BTNX", q_heads = 2, kv_heads = 2} : (tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32> loc("model.py":1:5)
  %p = "flywheel.attention"(%q, %q, %q) {operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0>, scale = 0.25 : f32, causal = false, layout = "BTNX", q_heads = 2, kv_heads = 2} : (tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32>
  return %o : tensor<1x2x8x16xf32>
}
