// MHA in BTNH, bf16, with a boolean mask operand (libtpu 0.0.51's static profile aborts
// on a kernel program that widens the mask by a convert; see tile/auto-blocks.mlir).
func.func @main(%q: tensor<2x128x4x64xbf16>, %k: tensor<2x128x4x64xbf16>, %v: tensor<2x128x4x64xbf16>, %mask: tensor<2x1x128x128xi1>) -> tensor<2x128x4x64xbf16> {
  %o = "flywheel.attention"(%q, %k, %v, %mask) {operandSegmentSizes = array<i32: 1, 1, 1, 1, 0, 0, 0>, scale = 0.125 : f32, causal = false, layout = "BTNH", q_heads = 4, kv_heads = 4} : (tensor<2x128x4x64xbf16>, tensor<2x128x4x64xbf16>, tensor<2x128x4x64xbf16>, tensor<2x1x128x128xi1>) -> tensor<2x128x4x64xbf16>
  return %o : tensor<2x128x4x64xbf16>
}
