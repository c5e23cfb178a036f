// A program with a dynamic shape, which `flywheel run` cannot make inputs for.
func.func @main(%a: tensor<?xf32>) -> tensor<?xf32> {
  return %a : tensor<?xf32>
}
