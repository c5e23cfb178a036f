// MHA in BNTH, bf16, with a boolean mask operand and a causal window (see tile/tile.mlir).
func.func @main(%q: tensor<1x2x256x128xbf16>, %k: tensor<1x2x256x128xbf16>, %v: tensor<1x2x256x128xbf16>, %mask: tensor<1x1x256x256xi1>) -> tensor<1x2x256x128xbf16> {
  %o = "flywheel.attention"(%q, %k, %v, %mask) {operandSegmentSizes = array<i32: 1, 1, 1, 1, 0, 0, 0>, scale = 0.125 : f32, causal = true, window = array<i64: 64, 0>, layout = "BNTH", q_heads = 2, kv_heads = 2} : (tensor<1x2x256x128xbf16>, tensor<1x2x256x128xbf16>, tensor<1x2x256x128xbf16>, tensor<1x1x256x256xi1>) -> tensor<1x2x256x128xbf16>
  return %o : tensor<1x2x256x128xbf16>
}
