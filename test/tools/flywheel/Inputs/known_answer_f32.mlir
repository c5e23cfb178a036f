// A small program whose answers the test suite computes independently
// (tools/tests/suite/pjrt.rs): exp(x) * y, the row sums of x, and select(mask, x, -x).
func.func @main(%x: tensor<2x3xf32>, %y: tensor<2x3xf32>, %mask: tensor<2x3xi1>) -> (tensor<2x3xf32>, tensor<2xf32>, tensor<2x3xf32>) {
  %e = "stablehlo.exponential"(%x) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %p = "stablehlo.multiply"(%e, %y) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %zero = "stablehlo.constant"() <{value = dense<0.0> : tensor<f32>}> : () -> tensor<f32>
  %sum = "stablehlo.reduce"(%x, %zero) <{dimensions = array<i64: 1>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %s = "stablehlo.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "stablehlo.return"(%s) : (tensor<f32>) -> ()
  }) : (tensor<2x3xf32>, tensor<f32>) -> tensor<2xf32>
  %n = "stablehlo.negate"(%x) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %sel = "stablehlo.select"(%mask, %x, %n) : (tensor<2x3xi1>, tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  return %p, %sum, %sel : tensor<2x3xf32>, tensor<2xf32>, tensor<2x3xf32>
}
