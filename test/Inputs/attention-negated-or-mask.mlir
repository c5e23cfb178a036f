// Attention masked by not(or(column > row, column < row - 2)): the disjunction of two
// band edges under a negation, i.e. causal within a window of two keys back
// (test/raise/attention.mlir).
func.func @main(%q: tensor<1x8x2x4xf32>, %k: tensor<1x8x2x4xf32>, %v: tensor<1x8x2x4xf32>) -> tensor<1x8x2x4xf32> {
  %s = "stablehlo.dot_general"(%q, %k) <{dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0, 2], rhs_batching_dimensions = [0, 2], lhs_contracting_dimensions = [3], rhs_contracting_dimensions = [3]>}> : (tensor<1x8x2x4xf32>, tensor<1x8x2x4xf32>) -> tensor<1x2x8x8xf32>
  %half = "stablehlo.constant"() <{value = dense<0.5> : tensor<f32>}> : () -> tensor<f32>
  %halfb = "stablehlo.broadcast_in_dim"(%half) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<1x2x8x8xf32>
  %z = "stablehlo.multiply"(%s, %halfb) : (tensor<1x2x8x8xf32>, tensor<1x2x8x8xf32>) -> tensor<1x2x8x8xf32>
  %row = "stablehlo.iota"() <{iota_dimension = 0 : i64}> : () -> tensor<8x8xi32>
  %col = "stablehlo.iota"() <{iota_dimension = 1 : i64}> : () -> tensor<8x8xi32>
  %two = "stablehlo.constant"() <{value = dense<2> : tensor<8x8xi32>}> : () -> tensor<8x8xi32>
  %back = "stablehlo.subtract"(%row, %two) : (tensor<8x8xi32>, tensor<8x8xi32>) -> tensor<8x8xi32>
  %ahead = "stablehlo.compare"(%col, %row) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction GT>}> : (tensor<8x8xi32>, tensor<8x8xi32>) -> tensor<8x8xi1>
  %behind = "stablehlo.compare"(%col, %back) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<8x8xi32>, tensor<8x8xi32>) -> tensor<8x8xi1>
  %either = "stablehlo.or"(%ahead, %behind) : (tensor<8x8xi1>, tensor<8x8xi1>) -> tensor<8x8xi1>
  %allowed = "stablehlo.not"(%either) : (tensor<8x8xi1>) -> tensor<8x8xi1>
  %allowedb = "stablehlo.broadcast_in_dim"(%allowed) <{broadcast_dimensions = array<i64: 2, 3>}> : (tensor<8x8xi1>) -> tensor<1x2x8x8xi1>
  %low = "stablehlo.constant"() <{value = dense<-3.40282347E+38> : tensor<f32>}> : () -> tensor<f32>
  %lowb = "stablehlo.broadcast_in_dim"(%low) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<1x2x8x8xf32>
  %zm = "stablehlo.select"(%allowedb, %z, %lowb) : (tensor<1x2x8x8xi1>, tensor<1x2x8x8xf32>, tensor<1x2x8x8xf32>) -> tensor<1x2x8x8xf32>
  %ninf = "stablehlo.constant"() <{value = dense<0xFF800000> : tensor<f32>}> : () -> tensor<f32>
  %m = "stablehlo.reduce"(%zm, %ninf) <{dimensions = array<i64: 3>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %x = "stablehlo.maximum"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "stablehlo.return"(%x) : (tensor<f32>) -> ()
  }) : (tensor<1x2x8x8xf32>, tensor<f32>) -> tensor<1x2x8xf32>
  %mb = "stablehlo.broadcast_in_dim"(%m) <{broadcast_dimensions = array<i64: 0, 1, 2>}> : (tensor<1x2x8xf32>) -> tensor<1x2x8x8xf32>
  %d = "stablehlo.subtract"(%zm, %mb) : (tensor<1x2x8x8xf32>, tensor<1x2x8x8xf32>) -> tensor<1x2x8x8xf32>
  %e = "stablehlo.exponential"(%d) : (tensor<1x2x8x8xf32>) -> tensor<1x2x8x8xf32>
  %zero = "stablehlo.constant"() <{value = dense<0.0> : tensor<f32>}> : () -> tensor<f32>
  %l = "stablehlo.reduce"(%e, %zero) <{dimensions = array<i64: 3>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %x = "stablehlo.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "stablehlo.return"(%x) : (tensor<f32>) -> ()
  }) : (tensor<1x2x8x8xf32>, tensor<f32>) -> tensor<1x2x8xf32>
  %lb = "stablehlo.broadcast_in_dim"(%l) <{broadcast_dimensions = array<i64: 0, 1, 2>}> : (tensor<1x2x8xf32>) -> tensor<1x2x8x8xf32>
  %p = "stablehlo.divide"(%e, %lb) : (tensor<1x2x8x8xf32>, tensor<1x2x8x8xf32>) -> tensor<1x2x8x8xf32>
  %o = "stablehlo.dot_general"(%p, %v) <{dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0, 1], rhs_batching_dimensions = [0, 2], lhs_contracting_dimensions = [3], rhs_contracting_dimensions = [1]>}> : (tensor<1x2x8x8xf32>, tensor<1x8x2x4xf32>) -> tensor<1x2x8x4xf32>
  %r = "stablehlo.transpose"(%o) <{permutation = array<i64: 0, 2, 1, 3>}> : (tensor<1x2x8x4xf32>) -> tensor<1x8x2x4xf32>
  return %r : tensor<1x8x2x4xf32>
}
