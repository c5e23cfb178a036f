// gdn-kernel-bf16.mlir laid out BNTH: heads before tokens in every operand and the result.
func.func @main(%q: tensor<1x1x128x128xbf16>, %k: tensor<1x1x128x128xbf16>, %v: tensor<1x2x128x128xbf16>, %g: tensor<1x2x128xf32>, %beta: tensor<1x2x128xf32>) -> (tensor<1x2x128x128xbf16>, tensor<1x2x128x128xf32>) {
  %o, %s = "flywheel.gated_delta"(%q, %k, %v, %g, %beta) {operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 0>, scale = 0.08838834764 : f32, chunk_size = 64 : i64, layout = "BNTH"} : (tensor<1x1x128x128xbf16>, tensor<1x1x128x128xbf16>, tensor<1x2x128x128xbf16>, tensor<1x2x128xf32>, tensor<1x2x128xf32>) -> (tensor<1x2x128x128xbf16>, tensor<1x2x128x128xf32>)
  return %o, %s : tensor<1x2x128x128xbf16>, tensor<1x2x128x128xf32>
}
