// Gated DeltaNet as a Python loop over tokens that tracing unrolled, written by hand:
// `for t in range(3): ...; o = o.at[:, t].set(row)` -- each step slices q, k, v, g and
// beta at token t (static slices), updates the state and writes its row with a scatter
// at a constant index. The same body as gdn_spelled.mlir, without the loop.
// H = 2, T = 3, K = 4, V = 8.
"builtin.module"() ({
  "func.func"() <{function_type = (tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<2x3x8xf32>, tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3x8xf32>, sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%q: tensor<2x3x4xf32>, %k: tensor<2x3x4xf32>, %v: tensor<2x3x8xf32>, %g: tensor<2x3xf32>, %beta: tensor<2x3xf32>):
    %o_init = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<2x3x8xf32>}> : () -> tensor<2x3x8xf32>
    %s_init = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<2x4x8xf32>}> : () -> tensor<2x4x8xf32>
    // step 0
    %q1_0 = "stablehlo.slice"(%q) <{limit_indices = array<i64: 2, 1, 4>, start_indices = array<i64: 0, 0, 0>, strides = array<i64: 1, 1, 1>}> : (tensor<2x3x4xf32>) -> tensor<2x1x4xf32>
    %qt_0 = "stablehlo.reshape"(%q1_0) : (tensor<2x1x4xf32>) -> tensor<2x4xf32>
    %k1_0 = "stablehlo.slice"(%k) <{limit_indices = array<i64: 2, 1, 4>, start_indices = array<i64: 0, 0, 0>, strides = array<i64: 1, 1, 1>}> : (tensor<2x3x4xf32>) -> tensor<2x1x4xf32>
    %kt_0 = "stablehlo.reshape"(%k1_0) : (tensor<2x1x4xf32>) -> tensor<2x4xf32>
    %v1_0 = "stablehlo.slice"(%v) <{limit_indices = array<i64: 2, 1, 8>, start_indices = array<i64: 0, 0, 0>, strides = array<i64: 1, 1, 1>}> : (tensor<2x3x8xf32>) -> tensor<2x1x8xf32>
    %vt_0 = "stablehlo.reshape"(%v1_0) : (tensor<2x1x8xf32>) -> tensor<2x8xf32>
    %g1_0 = "stablehlo.slice"(%g) <{limit_indices = array<i64: 2, 1>, start_indices = array<i64: 0, 0>, strides = array<i64: 1, 1>}> : (tensor<2x3xf32>) -> tensor<2x1xf32>
    %gt_0 = "stablehlo.reshape"(%g1_0) : (tensor<2x1xf32>) -> tensor<2xf32>
    %b1_0 = "stablehlo.slice"(%beta) <{limit_indices = array<i64: 2, 1>, start_indices = array<i64: 0, 0>, strides = array<i64: 1, 1>}> : (tensor<2x3xf32>) -> tensor<2x1xf32>
    %bt_0 = "stablehlo.reshape"(%b1_0) : (tensor<2x1xf32>) -> tensor<2xf32>
    %decay_0 = "stablehlo.exponential"(%gt_0) : (tensor<2xf32>) -> tensor<2xf32>
    %decay_wide_0 = "stablehlo.broadcast_in_dim"(%decay_0) <{broadcast_dimensions = array<i64: 0>}> : (tensor<2xf32>) -> tensor<2x4x8xf32>
    %s1_0 = "stablehlo.multiply"(%s_init, %decay_wide_0) : (tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
    %zf0 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %k_wide_0 = "stablehlo.broadcast_in_dim"(%kt_0) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<2x4xf32>) -> tensor<2x4x8xf32>
    %sk_0 = "stablehlo.multiply"(%s1_0, %k_wide_0) : (tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
    %prediction_0 = "stablehlo.reduce"(%sk_0, %zf0) <{dimensions = array<i64: 1>}> ({
    ^bb0(%x: tensor<f32>, %y: tensor<f32>):
      %sum = "stablehlo.add"(%x, %y) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%sum) : (tensor<f32>) -> ()
    }) : (tensor<2x4x8xf32>, tensor<f32>) -> tensor<2x8xf32>
    %delta_0 = "stablehlo.subtract"(%vt_0, %prediction_0) : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
    %beta_wide_0 = "stablehlo.broadcast_in_dim"(%bt_0) <{broadcast_dimensions = array<i64: 0>}> : (tensor<2xf32>) -> tensor<2x8xf32>
    %u_0 = "stablehlo.multiply"(%delta_0, %beta_wide_0) : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
    %u_wide_0 = "stablehlo.broadcast_in_dim"(%u_0) <{broadcast_dimensions = array<i64: 0, 2>}> : (tensor<2x8xf32>) -> tensor<2x4x8xf32>
    %outer_0 = "stablehlo.multiply"(%k_wide_0, %u_wide_0) : (tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
    %s2_0 = "stablehlo.add"(%s1_0, %outer_0) : (tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
    %q_wide_0 = "stablehlo.broadcast_in_dim"(%qt_0) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<2x4xf32>) -> tensor<2x4x8xf32>
    %sq_0 = "stablehlo.multiply"(%s2_0, %q_wide_0) : (tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
    %row_0 = "stablehlo.reduce"(%sq_0, %zf0) <{dimensions = array<i64: 1>}> ({
    ^bb0(%x: tensor<f32>, %y: tensor<f32>):
      %sum = "stablehlo.add"(%x, %y) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%sum) : (tensor<f32>) -> ()
    }) : (tensor<2x4x8xf32>, tensor<f32>) -> tensor<2x8xf32>
    %index_0 = "stablehlo.constant"() <{value = dense<0> : tensor<1xi32>}> : () -> tensor<1xi32>
    %o_0 = "stablehlo.scatter"(%o_init, %index_0, %row_0) <{indices_are_sorted = true, scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [0, 1], inserted_window_dims = [1], scatter_dims_to_operand_dims = [1]>, unique_indices = true}> ({
    ^bb0(%old: tensor<f32>, %new: tensor<f32>):
      "stablehlo.return"(%new) : (tensor<f32>) -> ()
    }) : (tensor<2x3x8xf32>, tensor<1xi32>, tensor<2x8xf32>) -> tensor<2x3x8xf32>
    // step 1
    %q1_1 = "stablehlo.slice"(%q) <{limit_indices = array<i64: 2, 2, 4>, start_indices = array<i64: 0, 1, 0>, strides = array<i64: 1, 1, 1>}> : (tensor<2x3x4xf32>) -> tensor<2x1x4xf32>
    %qt_1 = "stablehlo.reshape"(%q1_1) : (tensor<2x1x4xf32>) -> tensor<2x4xf32>
    %k1_1 = "stablehlo.slice"(%k) <{limit_indices = array<i64: 2, 2, 4>, start_indices = array<i64: 0, 1, 0>, strides = array<i64: 1, 1, 1>}> : (tensor<2x3x4xf32>) -> tensor<2x1x4xf32>
    %kt_1 = "stablehlo.reshape"(%k1_1) : (tensor<2x1x4xf32>) -> tensor<2x4xf32>
    %v1_1 = "stablehlo.slice"(%v) <{limit_indices = array<i64: 2, 2, 8>, start_indices = array<i64: 0, 1, 0>, strides = array<i64: 1, 1, 1>}> : (tensor<2x3x8xf32>) -> tensor<2x1x8xf32>
    %vt_1 = "stablehlo.reshape"(%v1_1) : (tensor<2x1x8xf32>) -> tensor<2x8xf32>
    %g1_1 = "stablehlo.slice"(%g) <{limit_indices = array<i64: 2, 2>, start_indices = array<i64: 0, 1>, strides = array<i64: 1, 1>}> : (tensor<2x3xf32>) -> tensor<2x1xf32>
    %gt_1 = "stablehlo.reshape"(%g1_1) : (tensor<2x1xf32>) -> tensor<2xf32>
    %b1_1 = "stablehlo.slice"(%beta) <{limit_indices = array<i64: 2, 2>, start_indices = array<i64: 0, 1>, strides = array<i64: 1, 1>}> : (tensor<2x3xf32>) -> tensor<2x1xf32>
    %bt_1 = "stablehlo.reshape"(%b1_1) : (tensor<2x1xf32>) -> tensor<2xf32>
    %decay_1 = "stablehlo.exponential"(%gt_1) : (tensor<2xf32>) -> tensor<2xf32>
    %decay_wide_1 = "stablehlo.broadcast_in_dim"(%decay_1) <{broadcast_dimensions = array<i64: 0>}> : (tensor<2xf32>) -> tensor<2x4x8xf32>
    %s1_1 = "stablehlo.multiply"(%s2_0, %decay_wide_1) : (tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
    %zf1 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %k_wide_1 = "stablehlo.broadcast_in_dim"(%kt_1) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<2x4xf32>) -> tensor<2x4x8xf32>
    %sk_1 = "stablehlo.multiply"(%s1_1, %k_wide_1) : (tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
    %prediction_1 = "stablehlo.reduce"(%sk_1, %zf1) <{dimensions = array<i64: 1>}> ({
    ^bb0(%x: tensor<f32>, %y: tensor<f32>):
      %sum = "stablehlo.add"(%x, %y) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%sum) : (tensor<f32>) -> ()
    }) : (tensor<2x4x8xf32>, tensor<f32>) -> tensor<2x8xf32>
    %delta_1 = "stablehlo.subtract"(%vt_1, %prediction_1) : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
    %beta_wide_1 = "stablehlo.broadcast_in_dim"(%bt_1) <{broadcast_dimensions = array<i64: 0>}> : (tensor<2xf32>) -> tensor<2x8xf32>
    %u_1 = "stablehlo.multiply"(%delta_1, %beta_wide_1) : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
    %u_wide_1 = "stablehlo.broadcast_in_dim"(%u_1) <{broadcast_dimensions = array<i64: 0, 2>}> : (tensor<2x8xf32>) -> tensor<2x4x8xf32>
    %outer_1 = "stablehlo.multiply"(%k_wide_1, %u_wide_1) : (tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
    %s2_1 = "stablehlo.add"(%s1_1, %outer_1) : (tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
    %q_wide_1 = "stablehlo.broadcast_in_dim"(%qt_1) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<2x4xf32>) -> tensor<2x4x8xf32>
    %sq_1 = "stablehlo.multiply"(%s2_1, %q_wide_1) : (tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
    %row_1 = "stablehlo.reduce"(%sq_1, %zf1) <{dimensions = array<i64: 1>}> ({
    ^bb0(%x: tensor<f32>, %y: tensor<f32>):
      %sum = "stablehlo.add"(%x, %y) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%sum) : (tensor<f32>) -> ()
    }) : (tensor<2x4x8xf32>, tensor<f32>) -> tensor<2x8xf32>
    %index_1 = "stablehlo.constant"() <{value = dense<1> : tensor<1xi32>}> : () -> tensor<1xi32>
    %o_1 = "stablehlo.scatter"(%o_0, %index_1, %row_1) <{indices_are_sorted = true, scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [0, 1], inserted_window_dims = [1], scatter_dims_to_operand_dims = [1]>, unique_indices = true}> ({
    ^bb0(%old: tensor<f32>, %new: tensor<f32>):
      "stablehlo.return"(%new) : (tensor<f32>) -> ()
    }) : (tensor<2x3x8xf32>, tensor<1xi32>, tensor<2x8xf32>) -> tensor<2x3x8xf32>
    // step 2
    %q1_2 = "stablehlo.slice"(%q) <{limit_indices = array<i64: 2, 3, 4>, start_indices = array<i64: 0, 2, 0>, strides = array<i64: 1, 1, 1>}> : (tensor<2x3x4xf32>) -> tensor<2x1x4xf32>
    %qt_2 = "stablehlo.reshape"(%q1_2) : (tensor<2x1x4xf32>) -> tensor<2x4xf32>
    %k1_2 = "stablehlo.slice"(%k) <{limit_indices = array<i64: 2, 3, 4>, start_indices = array<i64: 0, 2, 0>, strides = array<i64: 1, 1, 1>}> : (tensor<2x3x4xf32>) -> tensor<2x1x4xf32>
    %kt_2 = "stablehlo.reshape"(%k1_2) : (tensor<2x1x4xf32>) -> tensor<2x4xf32>
    %v1_2 = "stablehlo.slice"(%v) <{limit_indices = array<i64: 2, 3, 8>, start_indices = array<i64: 0, 2, 0>, strides = array<i64: 1, 1, 1>}> : (tensor<2x3x8xf32>) -> tensor<2x1x8xf32>
    %vt_2 = "stablehlo.reshape"(%v1_2) : (tensor<2x1x8xf32>) -> tensor<2x8xf32>
    %g1_2 = "stablehlo.slice"(%g) <{limit_indices = array<i64: 2, 3>, start_indices = array<i64: 0, 2>, strides = array<i64: 1, 1>}> : (tensor<2x3xf32>) -> tensor<2x1xf32>
    %gt_2 = "stablehlo.reshape"(%g1_2) : (tensor<2x1xf32>) -> tensor<2xf32>
    %b1_2 = "stablehlo.slice"(%beta) <{limit_indices = array<i64: 2, 3>, start_indices = array<i64: 0, 2>, strides = array<i64: 1, 1>}> : (tensor<2x3xf32>) -> tensor<2x1xf32>
    %bt_2 = "stablehlo.reshape"(%b1_2) : (tensor<2x1xf32>) -> tensor<2xf32>
    %decay_2 = "stablehlo.exponential"(%gt_2) : (tensor<2xf32>) -> tensor<2xf32>
    %decay_wide_2 = "stablehlo.broadcast_in_dim"(%decay_2) <{broadcast_dimensions = array<i64: 0>}> : (tensor<2xf32>) -> tensor<2x4x8xf32>
    %s1_2 = "stablehlo.multiply"(%s2_1, %decay_wide_2) : (tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
    %zf2 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %k_wide_2 = "stablehlo.broadcast_in_dim"(%kt_2) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<2x4xf32>) -> tensor<2x4x8xf32>
    %sk_2 = "stablehlo.multiply"(%s1_2, %k_wide_2) : (tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
    %prediction_2 = "stablehlo.reduce"(%sk_2, %zf2) <{dimensions = array<i64: 1>}> ({
    ^bb0(%x: tensor<f32>, %y: tensor<f32>):
      %sum = "stablehlo.add"(%x, %y) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%sum) : (tensor<f32>) -> ()
    }) : (tensor<2x4x8xf32>, tensor<f32>) -> tensor<2x8xf32>
    %delta_2 = "stablehlo.subtract"(%vt_2, %prediction_2) : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
    %beta_wide_2 = "stablehlo.broadcast_in_dim"(%bt_2) <{broadcast_dimensions = array<i64: 0>}> : (tensor<2xf32>) -> tensor<2x8xf32>
    %u_2 = "stablehlo.multiply"(%delta_2, %beta_wide_2) : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
    %u_wide_2 = "stablehlo.broadcast_in_dim"(%u_2) <{broadcast_dimensions = array<i64: 0, 2>}> : (tensor<2x8xf32>) -> tensor<2x4x8xf32>
    %outer_2 = "stablehlo.multiply"(%k_wide_2, %u_wide_2) : (tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
    %s2_2 = "stablehlo.add"(%s1_2, %outer_2) : (tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
    %q_wide_2 = "stablehlo.broadcast_in_dim"(%qt_2) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<2x4xf32>) -> tensor<2x4x8xf32>
    %sq_2 = "stablehlo.multiply"(%s2_2, %q_wide_2) : (tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
    %row_2 = "stablehlo.reduce"(%sq_2, %zf2) <{dimensions = array<i64: 1>}> ({
    ^bb0(%x: tensor<f32>, %y: tensor<f32>):
      %sum = "stablehlo.add"(%x, %y) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%sum) : (tensor<f32>) -> ()
    }) : (tensor<2x4x8xf32>, tensor<f32>) -> tensor<2x8xf32>
    %index_2 = "stablehlo.constant"() <{value = dense<2> : tensor<1xi32>}> : () -> tensor<1xi32>
    %o_2 = "stablehlo.scatter"(%o_1, %index_2, %row_2) <{indices_are_sorted = true, scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [0, 1], inserted_window_dims = [1], scatter_dims_to_operand_dims = [1]>, unique_indices = true}> ({
    ^bb0(%old: tensor<f32>, %new: tensor<f32>):
      "stablehlo.return"(%new) : (tensor<f32>) -> ()
    }) : (tensor<2x3x8xf32>, tensor<1xi32>, tensor<2x8xf32>) -> tensor<2x3x8xf32>
    "func.return"(%o_2) : (tensor<2x3x8xf32>) -> ()
  }) : () -> ()
}) : () -> ()
