// Gated DeltaNet the chunked kernel serves: 128 tokens (two chunks of 64), one key head
// shared by two value heads, head dims 128, bf16.
func.func @main(%q: tensor<1x128x1x128xbf16>, %k: tensor<1x128x1x128xbf16>, %v: tensor<1x128x2x128xbf16>, %g: tensor<1x128x2xf32>, %beta: tensor<1x128x2xf32>) -> (tensor<1x128x2x128xbf16>, tensor<1x2x128x128xf32>) {
  %o, %s = "flywheel.gated_delta"(%q, %k, %v, %g, %beta) {operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 0>, scale = 0.08838834764 : f32, chunk_size = 64 : i64, layout = "BTNH"} : (tensor<1x128x1x128xbf16>, tensor<1x128x1x128xbf16>, tensor<1x128x2x128xbf16>, tensor<1x128x2xf32>, tensor<1x128x2xf32>) -> (tensor<1x128x2x128xbf16>, tensor<1x2x128x128xf32>)
  return %o, %s : tensor<1x128x2x128xbf16>, tensor<1x2x128x128xf32>
}
