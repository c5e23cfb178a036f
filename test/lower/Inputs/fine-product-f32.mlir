// A DEFAULT-precision product of f32 matrices (see tpu-precision.mlir).
func.func @main(%a: tensor<2x2xf32>, %b: tensor<2x2xf32>) -> tensor<2x2xf32> {
  %p = "stablehlo.dot_general"(%a, %b) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  return %p : tensor<2x2xf32>
}
