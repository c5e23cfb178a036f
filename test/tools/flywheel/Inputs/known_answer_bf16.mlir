// A small program whose answers the test suite computes independently
// (tools/tests/suite/pjrt.rs): exp(x) * y, the row sums of x, and select(mask, x, -x).
func.func @main(%x: tensor<2x3xbf16>, %y: tensor<2x3xbf16>, %mask: tensor<2x3xi1>) -> (tensor<2x3xbf16>, tensor<2xbf16>, tensor<2x3xbf16>) {
  %e = "stablehlo.exponential"(%x) : (tensor<2x3xbf16>) -> tensor<2x3xbf16>
  %p = "stablehlo.multiply"(%e, %y) : (tensor<2x3xbf16>, tensor<2x3xbf16>) -> tensor<2x3xbf16>
  %zero = "stablehlo.constant"() <{value = dense<0.0> : tensor<bf16>}> : () -> tensor<bf16>
  %sum = "stablehlo.reduce"(%x, %zero) <{dimensions = array<i64: 1>}> ({
  ^bb0(%a: tensor<bf16>, %b: tensor<bf16>):
    %s = "stablehlo.add"(%a, %b) : (tensor<bf16>, tensor<bf16>) -> tensor<bf16>
    "stablehlo.return"(%s) : (tensor<bf16>) -> ()
  }) : (tensor<2x3xbf16>, tensor<bf16>) -> tensor<2xbf16>
  %n = "stablehlo.negate"(%x) : (tensor<2x3xbf16>) -> tensor<2x3xbf16>
  %sel = "stablehlo.select"(%mask, %x, %n) : (tensor<2x3xi1>, tensor<2x3xbf16>, tensor<2x3xbf16>) -> tensor<2x3xbf16>
  return %p, %sum, %sel : tensor<2x3xbf16>, tensor<2xbf16>, tensor<2x3xbf16>
}
