// RUN: flywheel-opt %s --split-input-file --flywheel-normalize | FileCheck %s
// RUN: flywheel-opt %s --split-input-file --flywheel-normalize=remarks=true -o /dev/null 2>&1 | FileCheck %s --check-prefix=REMARK
// RUN: not flywheel-opt %s --flywheel-normalize=inline=false 2>&1 | FileCheck %s --check-prefix=OPTION

// OPTION: pass 'flywheel-normalize': unknown option 'inline' (known: remarks)

// A real JAX program (its helpers inlined, its constants folded) computes what it did.
// RUN: flywheel-opt %S/../fixtures/attention_transformer_block_bf16.mlir --flywheel-normalize=remarks=true -o %t.block.mlir 2>&1 | FileCheck %s --check-prefix=BLOCK
// BLOCK: remark: normalized: 3 call(s) inlined, 18 constant(s) folded, 0 range(s) as iota, 15 unit broadcast(s) as reshape
// RUN: not grep -q func.call %t.block.mlir
// RUN: flywheel check %S/../fixtures/attention_transformer_block_bf16.mlir %t.block.mlir | FileCheck %s --check-prefix=CHECKED
// CHECKED: check: passed

// JAX's private helpers are inlined (a helper calling a helper too) and then erased; a
// public function and its calls stay.
// CHECK-LABEL: "func.func"() <{function_type = (tensor<4xf32>, tensor<4xi1>) -> tensor<4xf32>, sym_name = "main"}>
// CHECK-NOT: "func.call"() <{callee = @_where}>
// CHECK: %[[FILL:.*]] = "stablehlo.constant"() <{value = dense<-1.000000e+09> : tensor<4xf32>}>
// CHECK: "stablehlo.select"(%{{.*}}, %{{.*}}, %[[FILL]])
// CHECK: "func.call"(%{{.*}}) <{callee = @public}>
// CHECK-NOT: sym_name = "_where"
// CHECK-NOT: sym_name = "_fill"
// CHECK: sym_name = "public"
// REMARK: remark: normalized: 2 call(s) inlined, 2 constant(s) folded, 0 range(s) as iota, 0 unit broadcast(s) as reshape
"builtin.module"() ({
  "func.func"() <{function_type = (tensor<4xf32>, tensor<4xi1>) -> tensor<4xf32>, sym_name = "main"}> ({
  ^bb0(%x: tensor<4xf32>, %m: tensor<4xi1>):
    %0 = "func.call"(%m, %x) <{callee = @_where}> : (tensor<4xi1>, tensor<4xf32>) -> tensor<4xf32>
    %1 = "func.call"(%0) <{callee = @public}> : (tensor<4xf32>) -> tensor<4xf32>
    "func.return"(%1) : (tensor<4xf32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<4xi1>, tensor<4xf32>) -> tensor<4xf32>, sym_name = "_where", sym_visibility = "private"}> ({
  ^bb0(%c: tensor<4xi1>, %a: tensor<4xf32>):
    %f = "func.call"() <{callee = @_fill}> : () -> tensor<4xf32>
    %s = "stablehlo.select"(%c, %a, %f) : (tensor<4xi1>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    "func.return"(%s) : (tensor<4xf32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = () -> tensor<4xf32>, sym_name = "_fill", sym_visibility = "private"}> ({
    %c = "stablehlo.constant"() <{value = dense<-1.0e9> : tensor<f64>}> : () -> tensor<f64>
    %f = "stablehlo.convert"(%c) : (tensor<f64>) -> tensor<f32>
    %b = "stablehlo.broadcast_in_dim"(%f) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<4xf32>
    "func.return"(%b) : (tensor<4xf32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<4xf32>) -> tensor<4xf32>, sym_name = "public"}> ({
  ^bb0(%a: tensor<4xf32>):
    "func.return"(%a) : (tensor<4xf32>) -> ()
  }) : () -> ()
}) : () -> ()

// -----

// Constant expressions fold to one splat, computed exactly and rounded once to the
// result type: 1 / sqrt(128) in f32 and in bf16, and a scale multiplied in.
// CHECK-LABEL: sym_name = "scale"
// CHECK-DAG: "stablehlo.constant"() <{value = dense<0.0883883461> : tensor<2x2xf32>}>
// CHECK-DAG: "stablehlo.constant"() <{value = dense<8.837890e-02> : tensor<2x2xbf16>}>
// CHECK-NOT: stablehlo.sqrt
// CHECK-NOT: stablehlo.divide
// REMARK: remark: normalized: 0 call(s) inlined, 10 constant(s) folded, 0 range(s) as iota, 0 unit broadcast(s) as reshape
"func.func"() <{function_type = (tensor<2x2xf32>, tensor<2x2xbf16>) -> (tensor<2x2xf32>, tensor<2x2xbf16>), sym_name = "scale"}> ({
^bb0(%x: tensor<2x2xf32>, %y: tensor<2x2xbf16>):
  %one = "stablehlo.constant"() <{value = dense<1.0> : tensor<f32>}> : () -> tensor<f32>
  %d = "stablehlo.constant"() <{value = dense<128.0> : tensor<f32>}> : () -> tensor<f32>
  %s = "stablehlo.sqrt"(%d) : (tensor<f32>) -> tensor<f32>
  %r = "stablehlo.divide"(%one, %s) : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %rb = "stablehlo.broadcast_in_dim"(%r) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<2x2xf32>
  %a = "stablehlo.multiply"(%x, %rb) : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  %db = "stablehlo.convert"(%d) : (tensor<f32>) -> tensor<bf16>
  %sb = "stablehlo.rsqrt"(%db) : (tensor<bf16>) -> tensor<bf16>
  %two = "stablehlo.constant"() <{value = dense<2.0> : tensor<bf16>}> : () -> tensor<bf16>
  %nb = "stablehlo.negate"(%two) : (tensor<bf16>) -> tensor<bf16>
  %nn = "stablehlo.negate"(%nb) : (tensor<bf16>) -> tensor<bf16>
  %half = "stablehlo.divide"(%sb, %nn) : (tensor<bf16>, tensor<bf16>) -> tensor<bf16>
  %twice = "stablehlo.add"(%half, %half) : (tensor<bf16>, tensor<bf16>) -> tensor<bf16>
  %bb = "stablehlo.broadcast_in_dim"(%twice) <{broadcast_dimensions = array<i64>}> : (tensor<bf16>) -> tensor<2x2xbf16>
  %b = "stablehlo.multiply"(%y, %bb) : (tensor<2x2xbf16>, tensor<2x2xbf16>) -> tensor<2x2xbf16>
  "func.return"(%a, %b) : (tensor<2x2xf32>, tensor<2x2xbf16>) -> ()
}) : () -> ()

// -----

// Near misses: an op with a non-constant operand, a constant that is not a splat, an op
// the fold does not know (remainder), a range that does not start at 0 or is not 1-D, and
// a recursive private function stay as they are; a 1-D range 0..n-1 becomes an iota.
// CHECK-LABEL: sym_name = "near_misses"
// CHECK: "stablehlo.sqrt"(%{{.*}}) : (tensor<f32>)
// CHECK: "stablehlo.negate"(%{{.*}}) : (tensor<2xf32>)
// CHECK: "stablehlo.remainder"
// CHECK: "stablehlo.iota"() <{iota_dimension = 0 : i64}> : () -> tensor<4xi32>
// CHECK: dense<[1, 2, 3, 4]> : tensor<4xi32>
// CHECK: dense<{{\[}}[0, 1], [2, 3]]> : tensor<2x2xi64>
// CHECK: "func.call"(%{{.*}}) <{callee = @_loop}>
// CHECK: sym_name = "_loop"
// CHECK: "func.call"(%{{.*}}) <{callee = @_loop}>
// REMARK: remark: normalized: 0 call(s) inlined, 0 constant(s) folded, 1 range(s) as iota, 0 unit broadcast(s) as reshape
"builtin.module"() ({
  "func.func"() <{function_type = (tensor<f32>) -> (tensor<f32>, tensor<2xf32>, tensor<f32>, tensor<4xi32>, tensor<4xi32>, tensor<2x2xi64>, tensor<f32>), sym_name = "near_misses"}> ({
  ^bb0(%x: tensor<f32>):
    %s = "stablehlo.sqrt"(%x) : (tensor<f32>) -> tensor<f32>
    %v = "stablehlo.constant"() <{value = dense<[1.0, 2.0]> : tensor<2xf32>}> : () -> tensor<2xf32>
    %n = "stablehlo.negate"(%v) : (tensor<2xf32>) -> tensor<2xf32>
    %three = "stablehlo.constant"() <{value = dense<3.0> : tensor<f32>}> : () -> tensor<f32>
    %two = "stablehlo.constant"() <{value = dense<2.0> : tensor<f32>}> : () -> tensor<f32>
    %rem = "stablehlo.remainder"(%three, %two) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    %range = "stablehlo.constant"() <{value = dense<[0, 1, 2, 3]> : tensor<4xi32>}> : () -> tensor<4xi32>
    %shifted = "stablehlo.constant"() <{value = dense<[1, 2, 3, 4]> : tensor<4xi32>}> : () -> tensor<4xi32>
    %square = "stablehlo.constant"() <{value = dense<[[0, 1], [2, 3]]> : tensor<2x2xi64>}> : () -> tensor<2x2xi64>
    %r = "func.call"(%x) <{callee = @_loop}> : (tensor<f32>) -> tensor<f32>
    "func.return"(%s, %n, %rem, %range, %shifted, %square, %r) : (tensor<f32>, tensor<2xf32>, tensor<f32>, tensor<4xi32>, tensor<4xi32>, tensor<2x2xi64>, tensor<f32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<f32>) -> tensor<f32>, sym_name = "_loop", sym_visibility = "private"}> ({
  ^bb0(%a: tensor<f32>):
    %r = "func.call"(%a) <{callee = @_loop}> : (tensor<f32>) -> tensor<f32>
    "func.return"(%r) : (tensor<f32>) -> ()
  }) : () -> ()
}) : () -> ()

// -----

// A broadcast that only adds axes of size 1 (jnp.matmul at batch 1 re-adding the batch
// axis) is the reshape it is; one that repeats values, or reorders axes, stays.
// CHECK-LABEL: sym_name = "unit_axes"
// CHECK: "stablehlo.reshape"(%{{.*}}) : (tensor<4x3xf32>) -> tensor<1x4x1x3xf32>
// CHECK: "stablehlo.broadcast_in_dim"(%{{.*}}) <{broadcast_dimensions = array<i64: 1, 2>}> : (tensor<4x3xf32>) -> tensor<2x4x3xf32>
// CHECK: "stablehlo.broadcast_in_dim"(%{{.*}}) <{broadcast_dimensions = array<i64: 2, 1>}> : (tensor<4x3xf32>) -> tensor<1x3x4xf32>
// REMARK: remark: normalized: 0 call(s) inlined, 0 constant(s) folded, 0 range(s) as iota, 1 unit broadcast(s) as reshape
"func.func"() <{function_type = (tensor<4x3xf32>) -> (tensor<1x4x1x3xf32>, tensor<2x4x3xf32>, tensor<1x3x4xf32>), sym_name = "unit_axes"}> ({
^bb0(%x: tensor<4x3xf32>):
  %a = "stablehlo.broadcast_in_dim"(%x) <{broadcast_dimensions = array<i64: 1, 3>}> : (tensor<4x3xf32>) -> tensor<1x4x1x3xf32>
  %b = "stablehlo.broadcast_in_dim"(%x) <{broadcast_dimensions = array<i64: 1, 2>}> : (tensor<4x3xf32>) -> tensor<2x4x3xf32>
  %c = "stablehlo.broadcast_in_dim"(%x) <{broadcast_dimensions = array<i64: 2, 1>}> : (tensor<4x3xf32>) -> tensor<1x3x4xf32>
  "func.return"(%a, %b, %c) : (tensor<1x4x1x3xf32>, tensor<2x4x3xf32>, tensor<1x3x4xf32>) -> ()
}) : () -> ()

// -----

// The index arithmetic JAX writes around x[..., 0, ...] (`select(0 < 0, 0 + n, 0)`) folds
// to its constant; near misses: an i8 sum that overflows, an unsigned compare, and an
// index that is not constant (the loop step) stay.
// CHECK-LABEL: sym_name = "indices"
// CHECK: dense<2> : tensor<i32>
// CHECK-NEXT: %[[ZERO:.*]] = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}>
// CHECK: %[[BIG:.*]] = "stablehlo.add"(%{{.*}}, %{{.*}}) : (tensor<i8>, tensor<i8>) -> tensor<i8>
// CHECK: %[[UNSIGNED:.*]] = "stablehlo.compare"
// CHECK-SAME: UNSIGNED
// CHECK: %[[WRAPPED:.*]] = "stablehlo.select"(%{{.*}}, %{{.*}}, %arg0)
// CHECK: "func.return"(%[[ZERO]], %[[BIG]], %[[UNSIGNED]], %[[WRAPPED]])
// REMARK: remark: normalized: 0 call(s) inlined, 3 constant(s) folded, 0 range(s) as iota, 0 unit broadcast(s) as reshape
"func.func"() <{function_type = (tensor<i32>) -> (tensor<i32>, tensor<i8>, tensor<i1>, tensor<i32>), sym_name = "indices"}> ({
^bb0(%step: tensor<i32>):
  %zero = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
  %zero_again = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
  %two = "stablehlo.constant"() <{value = dense<2> : tensor<i32>}> : () -> tensor<i32>
  %negative = "stablehlo.compare"(%zero, %zero_again) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<i32>, tensor<i32>) -> tensor<i1>
  %wrapped = "stablehlo.add"(%zero, %two) : (tensor<i32>, tensor<i32>) -> tensor<i32>
  %index = "stablehlo.select"(%negative, %wrapped, %zero) : (tensor<i1>, tensor<i32>, tensor<i32>) -> tensor<i32>
  %hundred = "stablehlo.constant"() <{value = dense<100> : tensor<i8>}> : () -> tensor<i8>
  %overflow = "stablehlo.add"(%hundred, %hundred) : (tensor<i8>, tensor<i8>) -> tensor<i8>
  %minus_one = "stablehlo.constant"() <{value = dense<-1> : tensor<i32>}> : () -> tensor<i32>
  %unsigned = "stablehlo.compare"(%minus_one, %zero) <{compare_type = #stablehlo<comparison_type UNSIGNED>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<i32>, tensor<i32>) -> tensor<i1>
  %step_negative = "stablehlo.compare"(%step, %zero) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<i32>, tensor<i32>) -> tensor<i1>
  %step_wrapped = "stablehlo.add"(%step, %two) : (tensor<i32>, tensor<i32>) -> tensor<i32>
  %step_index = "stablehlo.select"(%step_negative, %step_wrapped, %step) : (tensor<i1>, tensor<i32>, tensor<i32>) -> tensor<i32>
  "func.return"(%index, %overflow, %unsigned, %step_index) : (tensor<i32>, tensor<i8>, tensor<i1>, tensor<i32>) -> ()
}) : () -> ()

// -----

// A product and a triangular solve at batch 1 with the unit axis squeezed around them
// (JAX's matmul and solve_triangular on [1, ...] tensors) get it back as a batch axis;
// near miss: a product whose result is reshaped elsewhere than back stays.
// CHECK-LABEL: sym_name = "batch_one"
// CHECK: %[[P:.*]] = "stablehlo.dot_general"(%arg0, %arg1) <{dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0, 1], rhs_batching_dimensions = [0, 1], lhs_contracting_dimensions = [3], rhs_contracting_dimensions = [2]>, precision_config = [#stablehlo<precision HIGHEST>, #stablehlo<precision HIGHEST>]}> : (tensor<1x4x8x16xf32>, tensor<1x4x16x8xf32>) -> tensor<1x4x8x8xf32>
// CHECK: %[[S:.*]] = "stablehlo.triangular_solve"(%[[P]], %arg2) <{left_side = true, lower = true, transpose_a = #stablehlo<transpose NO_TRANSPOSE>, unit_diagonal = true}> : (tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
// CHECK: %[[KEPT:.*]] = "stablehlo.dot_general"(%{{.*}}, %{{.*}}) {{.*}} : (tensor<4x8x16xf32>, tensor<4x16x8xf32>) -> tensor<4x8x8xf32>
// CHECK: "func.return"(%[[S]], %{{.*}})
// REMARK: remark: normalized: 0 call(s) inlined, 0 constant(s) folded, 0 range(s) as iota, 0 unit broadcast(s) as reshape, 2 batch-1 product(s) unsqueezed
"func.func"() <{function_type = (tensor<1x4x8x16xf32>, tensor<1x4x16x8xf32>, tensor<1x4x8x8xf32>) -> (tensor<1x4x8x8xf32>, tensor<32x8xf32>), sym_name = "batch_one"}> ({
^bb0(%a: tensor<1x4x8x16xf32>, %b: tensor<1x4x16x8xf32>, %identity: tensor<1x4x8x8xf32>):
  %a3 = "stablehlo.reshape"(%a) : (tensor<1x4x8x16xf32>) -> tensor<4x8x16xf32>
  %b3 = "stablehlo.reshape"(%b) : (tensor<1x4x16x8xf32>) -> tensor<4x16x8xf32>
  %p3 = "stablehlo.dot_general"(%a3, %b3) <{dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0], rhs_batching_dimensions = [0], lhs_contracting_dimensions = [2], rhs_contracting_dimensions = [1]>, precision_config = [#stablehlo<precision HIGHEST>, #stablehlo<precision HIGHEST>]}> : (tensor<4x8x16xf32>, tensor<4x16x8xf32>) -> tensor<4x8x8xf32>
  %p = "stablehlo.reshape"(%p3) : (tensor<4x8x8xf32>) -> tensor<1x4x8x8xf32>
  %p_squeezed = "stablehlo.reshape"(%p) : (tensor<1x4x8x8xf32>) -> tensor<4x8x8xf32>
  %i3 = "stablehlo.reshape"(%identity) : (tensor<1x4x8x8xf32>) -> tensor<4x8x8xf32>
  %s3 = "stablehlo.triangular_solve"(%p_squeezed, %i3) <{left_side = true, lower = true, transpose_a = #stablehlo<transpose NO_TRANSPOSE>, unit_diagonal = true}> : (tensor<4x8x8xf32>, tensor<4x8x8xf32>) -> tensor<4x8x8xf32>
  %s = "stablehlo.reshape"(%s3) : (tensor<4x8x8xf32>) -> tensor<1x4x8x8xf32>
  %a3_again = "stablehlo.reshape"(%a) : (tensor<1x4x8x16xf32>) -> tensor<4x8x16xf32>
  %b3_again = "stablehlo.reshape"(%b) : (tensor<1x4x16x8xf32>) -> tensor<4x16x8xf32>
  %kept = "stablehlo.dot_general"(%a3_again, %b3_again) <{dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0], rhs_batching_dimensions = [0], lhs_contracting_dimensions = [2], rhs_contracting_dimensions = [1]>}> : (tensor<4x8x16xf32>, tensor<4x16x8xf32>) -> tensor<4x8x8xf32>
  %flat = "stablehlo.reshape"(%kept) : (tensor<4x8x8xf32>) -> tensor<32x8xf32>
  "func.return"(%s, %flat) : (tensor<1x4x8x8xf32>, tensor<32x8xf32>) -> ()
}) : () -> ()

// -----

// An unsigned splat with its top bit set (which reads back negative) is left as it is,
// broadcast or not; a signed one folds.
// CHECK-LABEL: sym_name = "unsigned"
// CHECK: %[[BIG:.*]] = "stablehlo.constant"() <{value = dense<2147483648> : tensor<ui32>}>
// CHECK: "stablehlo.broadcast_in_dim"(%[[BIG]])
// CHECK: "stablehlo.constant"() <{value = dense<7> : tensor<4xi32>}>
// CHECK-NOT: dense<-2147483648>
// REMARK: remark: normalized: 0 call(s) inlined, 1 constant(s) folded
"func.func"() <{function_type = () -> (tensor<4xui32>, tensor<4xi32>), sym_name = "unsigned"}> ({
  %big = "stablehlo.constant"() <{value = dense<2147483648> : tensor<ui32>}> : () -> tensor<ui32>
  %wide = "stablehlo.broadcast_in_dim"(%big) <{broadcast_dimensions = array<i64>}> : (tensor<ui32>) -> tensor<4xui32>
  %seven = "stablehlo.constant"() <{value = dense<7> : tensor<i32>}> : () -> tensor<i32>
  %sevens = "stablehlo.broadcast_in_dim"(%seven) <{broadcast_dimensions = array<i64>}> : (tensor<i32>) -> tensor<4xi32>
  "func.return"(%wide, %sevens) : (tensor<4xui32>, tensor<4xi32>) -> ()
}) : () -> ()
