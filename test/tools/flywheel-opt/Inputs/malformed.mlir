func.func @broken(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "stablehlo.exponential"(%a) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 tensor<4xf32>
}
