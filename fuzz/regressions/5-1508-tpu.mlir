// Gated DeltaNet as fla's naive reference spells it, written by hand: one unbatched
// sequence (state [H, K, V], inputs [H, T, D] stepped along their second axis), a
// fori_loop index carried beside the scan's counter and wrapped as JAX wraps x[i], the
// prediction and readout as multiply + reduce, the update as a broadcast multiply, q_t
// scaled in the body, and the output row written by a scatter (o.at[:, i].set(row)).
// H = 2, T = 8, K = 4, V = 8.
"builtin.module"() ({
  "func.func"() <{function_type = (tensor<2x8x4xf32>, tensor<2x8x4xf32>, tensor<2x8x8xf32>, tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8x8xf32>, sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%q: tensor<2x8x4xf32>, %k: tensor<2x8x4xf32>, %v: tensor<2x8x8xf32>, %g: tensor<2x8xf32>, %beta: tensor<2x8xf32>):
    %zero = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %o0 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<2x8x8xf32>}> : () -> tensor<2x8x8xf32>
    %s0 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<2x4x8xf32>}> : () -> tensor<2x4x8xf32>
    %r:9 = "stablehlo.while"(%q, %k, %v, %g, %beta, %zero, %zero, %o0, %s0) ({
    ^bb0(%cq: tensor<2x8x4xf32>, %ck: tensor<2x8x4xf32>, %cv: tensor<2x8x8xf32>, %cg: tensor<2x8xf32>, %cb: tensor<2x8xf32>, %ci: tensor<i32>, %cj: tensor<i32>, %co: tensor<2x8x8xf32>, %cs: tensor<2x4x8xf32>):
      %n = "stablehlo.constant"() <{value = dense<8> : tensor<i32>}> : () -> tensor<i32>
      %more = "stablehlo.compare"(%ci, %n) <{comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<i32>, tensor<i32>) -> tensor<i1>
      "stablehlo.return"(%more) : (tensor<i1>) -> ()
    }, {
    ^bb0(%bq: tensor<2x8x4xf32>, %bk: tensor<2x8x4xf32>, %bv: tensor<2x8x8xf32>, %bg: tensor<2x8xf32>, %bb: tensor<2x8xf32>, %i: tensor<i32>, %j: tensor<i32>, %o: tensor<2x8x8xf32>, %s: tensor<2x4x8xf32>):
      %c0 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
      %c1 = "stablehlo.constant"() <{value = dense<1> : tensor<i32>}> : () -> tensor<i32>
      %c8 = "stablehlo.constant"() <{value = dense<8> : tensor<i32>}> : () -> tensor<i32>
      %negative = "stablehlo.compare"(%j, %c0) <{comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<i32>, tensor<i32>) -> tensor<i1>
      %wrapped = "stablehlo.add"(%j, %c8) : (tensor<i32>, tensor<i32>) -> tensor<i32>
      %t = "stablehlo.select"(%negative, %wrapped, %j) : (tensor<i1>, tensor<i32>, tensor<i32>) -> tensor<i32>
      %q1 = "stablehlo.dynamic_slice"(%bq, %c0, %t, %c0) <{slice_sizes = array<i64: 2, 1, 4>}> : (tensor<2x8x4xf32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<2x1x4xf32>
      %qt = "stablehlo.reshape"(%q1) : (tensor<2x1x4xf32>) -> tensor<2x4xf32>
      %k1 = "stablehlo.dynamic_slice"(%bk, %c0, %t, %c0) <{slice_sizes = array<i64: 2, 1, 4>}> : (tensor<2x8x4xf32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<2x1x4xf32>
      %kt = "stablehlo.reshape"(%k1) : (tensor<2x1x4xf32>) -> tensor<2x4xf32>
      %v1 = "stablehlo.dynamic_slice"(%bv, %c0, %t, %c0) <{slice_sizes = array<i64: 2, 1, 8>}> : (tensor<2x8x8xf32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<2x1x8xf32>
      %vt = "stablehlo.reshape"(%v1) : (tensor<2x1x8xf32>) -> tensor<2x8xf32>
      %g1 = "stablehlo.dynamic_slice"(%bg, %c0, %t) <{slice_sizes = array<i64: 2, 1>}> : (tensor<2x8xf32>, tensor<i32>, tensor<i32>) -> tensor<2x1xf32>
      %gt = "stablehlo.reshape"(%g1) : (tensor<2x1xf32>) -> tensor<2xf32>
      %b1 = "stablehlo.dynamic_slice"(%bb, %c0, %t) <{slice_sizes = array<i64: 2, 1>}> : (tensor<2x8xf32>, tensor<i32>, tensor<i32>) -> tensor<2x1xf32>
      %bt = "stablehlo.reshape"(%b1) : (tensor<2x1xf32>) -> tensor<2xf32>
      %decay = "stablehlo.exponential"(%gt) : (tensor<2xf32>) -> tensor<2xf32>
      %decay_wide = "stablehlo.broadcast_in_dim"(%decay) <{broadcast_dimensions = array<i64: 0>}> : (tensor<2xf32>) -> tensor<2x4x8xf32>
      %s1 = "stablehlo.multiply"(%s, %decay_wide) : (tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
      %zf = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %k_wide = "stablehlo.broadcast_in_dim"(%kt) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<2x4xf32>) -> tensor<2x4x8xf32>
      %sk = "stablehlo.multiply"(%s1, %k_wide) : (tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
      %prediction = "stablehlo.reduce"(%sk, %zf) <{dimensions = array<i64: 1>}> ({
      ^bb0(%x: tensor<f32>, %y: tensor<f32>):
        %sum = "stablehlo.add"(%x, %y) : (tensor<f32>, tensor<f32>) -> tensor<f32>
        "stablehlo.return"(%sum) : (tensor<f32>) -> ()
      }) : (tensor<2x4x8xf32>, tensor<f32>) -> tensor<2x8xf32>
      %delta = "stablehlo.subtract"(%vt, %prediction) : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
      %beta_wide = "stablehlo.broadcast_in_dim"(%bt) <{broadcast_dimensions = array<i64: 0>}> : (tensor<2xf32>) -> tensor<2x8xf32>
      %u = "stablehlo.multiply"(%delta, %beta_wide) : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
      %u_wide = "stablehlo.broadcast_in_dim"(%u) <{broadcast_dimensions = array<i64: 0, 2>}> : (tensor<2x8xf32>) -> tensor<2x4x8xf32>
      %outer = "stablehlo.multiply"(%k_wide, %u_wide) : (tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
      %s2 = "stablehlo.add"(%s1, %outer) : (tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
      %half = "stablehlo.constant"() <{value = dense<5.000000e-01> : tensor<2x4xf32>}> : () -> tensor<2x4xf32>
      %q_scaled = "stablehlo.multiply"(%qt, %half) : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
      %q_wide = "stablehlo.broadcast_in_dim"(%q_scaled) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<2x4xf32>) -> tensor<2x4x8xf32>
      %sq = "stablehlo.multiply"(%s2, %q_wide) : (tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
      %row = "stablehlo.reduce"(%sq, %zf) <{dimensions = array<i64: 1>}> ({
      ^bb0(%x: tensor<f32>, %y: tensor<f32>):
        %sum = "stablehlo.add"(%x, %y) : (tensor<f32>, tensor<f32>) -> tensor<f32>
        "stablehlo.return"(%sum) : (tensor<f32>) -> ()
      }) : (tensor<2x4x8xf32>, tensor<f32>) -> tensor<2x8xf32>
      %index = "stablehlo.reshape"(%t) : (tensor<i32>) -> tensor<1xi32>
      %o2 = "stablehlo.scatter"(%o, %index, %row) <{indices_are_sorted = true, scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [0, 1], inserted_window_dims = [-1], scatter_dims_to_operand_dims = [1]>, unique_indices = true}> ({
      ^bb0(%old: tensor<f32>, %new: tensor<f32>):
        "stablehlo.return"(%new) : (tensor<f32>) -> ()
      }) : (tensor<2x8x8xf32>, tensor<1xi32>, tensor<2x8xf32>) -> tensor<2x8x8xf32>
      %i1 = "stablehlo.add"(%i, %c1) : (tensor<i32>, tensor<i32>) -> tensor<i32>
      %j1 = "stablehlo.add"(%j, %c1) : (tensor<i32>, tensor<i32>) -> tensor<i32>
      "stablehlo.return"(%bq, %bk, %bv, %bg, %bb, %i1, %j1, %o2, %s2) : (tensor<2x8x4xf32>, tensor<2x8x4xf32>, tensor<2x8x8xf32>, tensor<2x8xf32>, tensor<2x8xf32>, tensor<i32>, tensor<i32>, tensor<2x8x8xf32>, tensor<2x4x8xf32>) -> ()
    }) : (tensor<2x8x4xf32>, tensor<2x8x4xf32>, tensor<2x8x8xf32>, tensor<2x8xf32>, tensor<2x8xf32>, tensor<i32>, tensor<i32>, tensor<2x8x8xf32>, tensor<2x4x8xf32>) -> (tensor<2x8x4xf32>, tensor<2x8x4xf32>, tensor<2x8x8xf32>, tensor<2x8xf32>, tensor<2x8xf32>, tensor<i32>, tensor<i32>, tensor<2x8x8xf32>, tensor<2x4x8xf32>)
    "func.return"(%r#7) : (tensor<2x8x8xf32>) -> ()
  }) : () -> ()
}) : () -> ()
