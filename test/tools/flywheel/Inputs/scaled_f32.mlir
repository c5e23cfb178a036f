// x times a constant: 1.0 here; a test makes the constant 1.01, whose output then has a
// relative L2 error of exactly 1e-2 against this one, whatever the inputs.
func.func @main(%x: tensor<256xf32>) -> tensor<256xf32> {
  %c = "stablehlo.constant"() <{value = dense<1.000000e+00> : tensor<256xf32>}> : () -> tensor<256xf32>
  %y = "stablehlo.multiply"(%x, %c) : (tensor<256xf32>, tensor<256xf32>) -> tensor<256xf32>
  return %y : tensor<256xf32>
}
