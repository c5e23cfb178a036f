// A program with a complex parameter, which `flywheel run` cannot make inputs for.
func.func @main(%a: tensor<2xcomplex<f32>>) -> tensor<2xcomplex<f32>> {
  return %a : tensor<2xcomplex<f32>>
}
