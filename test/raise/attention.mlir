// flywheel-raise-attention on small hand-written programs: positive cases, near misses
// (each left alone, or raised only as exactly as it is, with a remark saying why), and
// the remarks themselves. Real JAX programs: attention-fixtures.mlir.

// RUN: flywheel-opt %s --split-input-file --flywheel-raise-attention=remarks=true --verify-diagnostics | FileCheck %s
// A mask under a negation: not(or(a, b)) is not a and not b, both edges read (causal
// within two keys back), and the raised program computes what the original does.
// RUN: flywheel-opt %S/../Inputs/attention-negated-or-mask.mlir --flywheel-raise-attention | FileCheck %s --check-prefix=NEGATED-OR
// NEGATED-OR: "flywheel.attention"(%arg0, %arg1, %arg2) {causal = true, {{.*}}window = array<i64: 2, 0>}
// RUN: flywheel-opt %S/../Inputs/attention-negated-or-mask.mlir --pass-pipeline='builtin.module(flywheel-raise-attention,flywheel-lower-to-stablehlo)' -o %t.negated-or.mlir
// RUN: flywheel check %S/../Inputs/attention-negated-or-mask.mlir %t.negated-or.mlir > /dev/null

// -----

// The smallest attention JAX writes: scores, scale, softmax, P·V, output transpose.
// CHECK-LABEL: func.func @plain
// CHECK-NEXT: %[[O:.*]] = "flywheel.attention"(%arg0, %arg1, %arg2) {causal = false, kv_heads = 2 : i64, layout = "BTNH", operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0>, q_heads = 2 : i64, scale = 5.000000e-01 : f32}
// CHECK-NEXT: return %[[O]]
func.func @plain(%q: tensor<1x8x2x4xf32>, %k: tensor<1x8x2x4xf32>, %v: tensor<1x8x2x4xf32>) -> tensor<1x8x2x4xf32> {
  %s = "stablehlo.dot_general"(%q, %k) <{dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0, 2], rhs_batching_dimensions = [0, 2], lhs_contracting_dimensions = [3], rhs_contracting_dimensions = [3]>}> : (tensor<1x8x2x4xf32>, tensor<1x8x2x4xf32>) -> tensor<1x2x8x8xf32>
  %half = "stablehlo.constant"() <{value = dense<0.5> : tensor<f32>}> : () -> tensor<f32>
  %halfb = "stablehlo.broadcast_in_dim"(%half) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<1x2x8x8xf32>
  %z = "stablehlo.multiply"(%s, %halfb) : (tensor<1x2x8x8xf32>, tensor<1x2x8x8xf32>) -> tensor<1x2x8x8xf32>
  %ninf = "stablehlo.constant"() <{value = dense<0xFF800000> : tensor<f32>}> : () -> tensor<f32>
  %m = "stablehlo.reduce"(%z, %ninf) <{dimensions = array<i64: 3>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %x = "stablehlo.maximum"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "stablehlo.return"(%x) : (tensor<f32>) -> ()
  }) : (tensor<1x2x8x8xf32>, tensor<f32>) -> tensor<1x2x8xf32>
  %mb = "stablehlo.broadcast_in_dim"(%m) <{broadcast_dimensions = array<i64: 0, 1, 2>}> : (tensor<1x2x8xf32>) -> tensor<1x2x8x8xf32>
  %d = "stablehlo.subtract"(%z, %mb) : (tensor<1x2x8x8xf32>, tensor<1x2x8x8xf32>) -> tensor<1x2x8x8xf32>
  %e = "stablehlo.exponential"(%d) : (tensor<1x2x8x8xf32>) -> tensor<1x2x8x8xf32>
  %zero = "stablehlo.constant"() <{value = dense<0.0> : tensor<f32>}> : () -> tensor<f32>
  %l = "stablehlo.reduce"(%e, %zero) <{dimensions = array<i64: 3>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %x = "stablehlo.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "stablehlo.return"(%x) : (tensor<f32>) -> ()
  }) : (tensor<1x2x8x8xf32>, tensor<f32>) -> tensor<1x2x8xf32>
  %lb = "stablehlo.broadcast_in_dim"(%l) <{broadcast_dimensions = array<i64: 0, 1, 2>}> : (tensor<1x2x8xf32>) -> tensor<1x2x8x8xf32>
  %p = "stablehlo.divide"(%e, %lb) : (tensor<1x2x8x8xf32>, tensor<1x2x8x8xf32>) -> tensor<1x2x8x8xf32>
  // expected-remark@below {{raised to flywheel.attention}}
  %o = "stablehlo.dot_general"(%p, %v) <{dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0, 1], rhs_batching_dimensions = [0, 2], lhs_contracting_dimensions = [3], rhs_contracting_dimensions = [1]>}> : (tensor<1x2x8x8xf32>, tensor<1x8x2x4xf32>) -> tensor<1x2x8x4xf32>
  %r = "stablehlo.transpose"(%o) <{permutation = array<i64: 0, 2, 1, 3>}> : (tensor<1x2x8x4xf32>) -> tensor<1x8x2x4xf32>
  return %r : tensor<1x8x2x4xf32>
}

// -----

// Causal from iota comparisons: column <= row.
// CHECK-LABEL: func.func @causal
// CHECK-NEXT: "flywheel.attention"(%arg0, %arg1, %arg2) {causal = true,
// CHECK-NOT: window
// CHECK-NEXT: return
func.func @causal(%q: tensor<1x8x2x4xf32>, %k: tensor<1x8x2x4xf32>, %v: tensor<1x8x2x4xf32>) -> tensor<1x8x2x4xf32> {
  %s = "stablehlo.dot_general"(%q, %k) <{dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0, 2], rhs_batching_dimensions = [0, 2], lhs_contracting_dimensions = [3], rhs_contracting_dimensions = [3]>}> : (tensor<1x8x2x4xf32>, tensor<1x8x2x4xf32>) -> tensor<1x2x8x8xf32>
  %half = "stablehlo.constant"() <{value = dense<0.5> : tensor<f32>}> : () -> tensor<f32>
  %halfb = "stablehlo.broadcast_in_dim"(%half) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<1x2x8x8xf32>
  %z = "stablehlo.multiply"(%s, %halfb) : (tensor<1x2x8x8xf32>, tensor<1x2x8x8xf32>) -> tensor<1x2x8x8xf32>
  %row = "stablehlo.iota"() <{iota_dimension = 0 : i64}> : () -> tensor<8x8xi32>
  %col = "stablehlo.iota"() <{iota_dimension = 1 : i64}> : () -> tensor<8x8xi32>
  %allowed = "stablehlo.compare"(%col, %row) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LE>}> : (tensor<8x8xi32>, tensor<8x8xi32>) -> tensor<8x8xi1>
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
  // expected-remark@below {{raised to flywheel.attention}}
  %o = "stablehlo.dot_general"(%p, %v) <{dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0, 1], rhs_batching_dimensions = [0, 2], lhs_contracting_dimensions = [3], rhs_contracting_dimensions = [1]>}> : (tensor<1x2x8x8xf32>, tensor<1x8x2x4xf32>) -> tensor<1x2x8x4xf32>
  %r = "stablehlo.transpose"(%o) <{permutation = array<i64: 0, 2, 1, 3>}> : (tensor<1x2x8x4xf32>) -> tensor<1x8x2x4xf32>
  return %r : tensor<1x8x2x4xf32>
}

// -----

// Near miss: column <= row + 1 is not causal. It is exactly the band
// i - 7 <= j <= i + 1, so it becomes a window (causal stays false).
// CHECK-LABEL: func.func @causal_offset_by_one
// CHECK-NEXT: "flywheel.attention"(%arg0, %arg1, %arg2) {causal = false, {{.*}}window = array<i64: 7, 1>}
func.func @causal_offset_by_one(%q: tensor<1x8x2x4xf32>, %k: tensor<1x8x2x4xf32>, %v: tensor<1x8x2x4xf32>) -> tensor<1x8x2x4xf32> {
  %s = "stablehlo.dot_general"(%q, %k) <{dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0, 2], rhs_batching_dimensions = [0, 2], lhs_contracting_dimensions = [3], rhs_contracting_dimensions = [3]>}> : (tensor<1x8x2x4xf32>, tensor<1x8x2x4xf32>) -> tensor<1x2x8x8xf32>
  %half = "stablehlo.constant"() <{value = dense<0.5> : tensor<f32>}> : () -> tensor<f32>
  %halfb = "stablehlo.broadcast_in_dim"(%half) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<1x2x8x8xf32>
  %z = "stablehlo.multiply"(%s, %halfb) : (tensor<1x2x8x8xf32>, tensor<1x2x8x8xf32>) -> tensor<1x2x8x8xf32>
  %row = "stablehlo.iota"() <{iota_dimension = 0 : i64}> : () -> tensor<8x8xi32>
  %col = "stablehlo.iota"() <{iota_dimension = 1 : i64}> : () -> tensor<8x8xi32>
  %one = "stablehlo.constant"() <{value = dense<1> : tensor<i32>}> : () -> tensor<i32>
  %oneb = "stablehlo.broadcast_in_dim"(%one) <{broadcast_dimensions = array<i64>}> : (tensor<i32>) -> tensor<8x8xi32>
  %rowp = "stablehlo.add"(%row, %oneb) : (tensor<8x8xi32>, tensor<8x8xi32>) -> tensor<8x8xi32>
  %allowed = "stablehlo.compare"(%col, %rowp) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LE>}> : (tensor<8x8xi32>, tensor<8x8xi32>) -> tensor<8x8xi1>
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
  // expected-remark@below {{raised to flywheel.attention}}
  %o = "stablehlo.dot_general"(%p, %v) <{dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0, 1], rhs_batching_dimensions = [0, 2], lhs_contracting_dimensions = [3], rhs_contracting_dimensions = [1]>}> : (tensor<1x2x8x8xf32>, tensor<1x8x2x4xf32>) -> tensor<1x2x8x4xf32>
  %r = "stablehlo.transpose"(%o) <{permutation = array<i64: 0, 2, 1, 3>}> : (tensor<1x2x8x4xf32>) -> tensor<1x8x2x4xf32>
  return %r : tensor<1x8x2x4xf32>
}

// -----

// Near miss: column < row excludes the diagonal; causal and window cannot say that.
// CHECK-LABEL: sym_name = "strictly_causal"
// CHECK-NOT: flywheel.attention
func.func @strictly_causal(%q: tensor<1x8x2x4xf32>, %k: tensor<1x8x2x4xf32>, %v: tensor<1x8x2x4xf32>) -> tensor<1x8x2x4xf32> {
  %s = "stablehlo.dot_general"(%q, %k) <{dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0, 2], rhs_batching_dimensions = [0, 2], lhs_contracting_dimensions = [3], rhs_contracting_dimensions = [3]>}> : (tensor<1x8x2x4xf32>, tensor<1x8x2x4xf32>) -> tensor<1x2x8x8xf32>
  %half = "stablehlo.constant"() <{value = dense<0.5> : tensor<f32>}> : () -> tensor<f32>
  %halfb = "stablehlo.broadcast_in_dim"(%half) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<1x2x8x8xf32>
  %z = "stablehlo.multiply"(%s, %halfb) : (tensor<1x2x8x8xf32>, tensor<1x2x8x8xf32>) -> tensor<1x2x8x8xf32>
  %row = "stablehlo.iota"() <{iota_dimension = 0 : i64}> : () -> tensor<8x8xi32>
  %col = "stablehlo.iota"() <{iota_dimension = 1 : i64}> : () -> tensor<8x8xi32>
  %allowed = "stablehlo.compare"(%col, %row) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<8x8xi32>, tensor<8x8xi32>) -> tensor<8x8xi1>
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
  // expected-remark@below {{attention not raised: a mask band excludes the diagonal, which causal and window cannot express}}
  %o = "stablehlo.dot_general"(%p, %v) <{dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0, 1], rhs_batching_dimensions = [0, 2], lhs_contracting_dimensions = [3], rhs_contracting_dimensions = [1]>}> : (tensor<1x2x8x8xf32>, tensor<1x8x2x4xf32>) -> tensor<1x2x8x4xf32>
  %r = "stablehlo.transpose"(%o) <{permutation = array<i64: 0, 2, 1, 3>}> : (tensor<1x2x8x4xf32>) -> tensor<1x8x2x4xf32>
  return %r : tensor<1x8x2x4xf32>
}

// -----

// Near miss: the softmax normalizes over the query axis (dimension 2), not the keys.
// CHECK-LABEL: sym_name = "softmax_over_queries"
// CHECK-NOT: flywheel.attention
// CHECK: "stablehlo.dot_general"
func.func @softmax_over_queries(%q: tensor<1x8x2x4xf32>, %k: tensor<1x8x2x4xf32>, %v: tensor<1x8x2x4xf32>) -> tensor<1x8x2x4xf32> {
  %s = "stablehlo.dot_general"(%q, %k) <{dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0, 2], rhs_batching_dimensions = [0, 2], lhs_contracting_dimensions = [3], rhs_contracting_dimensions = [3]>}> : (tensor<1x8x2x4xf32>, tensor<1x8x2x4xf32>) -> tensor<1x2x8x8xf32>
  %half = "stablehlo.constant"() <{value = dense<0.5> : tensor<f32>}> : () -> tensor<f32>
  %halfb = "stablehlo.broadcast_in_dim"(%half) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<1x2x8x8xf32>
  %z = "stablehlo.multiply"(%s, %halfb) : (tensor<1x2x8x8xf32>, tensor<1x2x8x8xf32>) -> tensor<1x2x8x8xf32>
  %ninf = "stablehlo.constant"() <{value = dense<0xFF800000> : tensor<f32>}> : () -> tensor<f32>
  %m = "stablehlo.reduce"(%z, %ninf) <{dimensions = array<i64: 2>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %x = "stablehlo.maximum"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "stablehlo.return"(%x) : (tensor<f32>) -> ()
  }) : (tensor<1x2x8x8xf32>, tensor<f32>) -> tensor<1x2x8xf32>
  %mb = "stablehlo.broadcast_in_dim"(%m) <{broadcast_dimensions = array<i64: 0, 1, 3>}> : (tensor<1x2x8xf32>) -> tensor<1x2x8x8xf32>
  %d = "stablehlo.subtract"(%z, %mb) : (tensor<1x2x8x8xf32>, tensor<1x2x8x8xf32>) -> tensor<1x2x8x8xf32>
  %e = "stablehlo.exponential"(%d) : (tensor<1x2x8x8xf32>) -> tensor<1x2x8x8xf32>
  %zero = "stablehlo.constant"() <{value = dense<0.0> : tensor<f32>}> : () -> tensor<f32>
  %l = "stablehlo.reduce"(%e, %zero) <{dimensions = array<i64: 2>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %x = "stablehlo.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "stablehlo.return"(%x) : (tensor<f32>) -> ()
  }) : (tensor<1x2x8x8xf32>, tensor<f32>) -> tensor<1x2x8xf32>
  %lb = "stablehlo.broadcast_in_dim"(%l) <{broadcast_dimensions = array<i64: 0, 1, 3>}> : (tensor<1x2x8xf32>) -> tensor<1x2x8x8xf32>
  %p = "stablehlo.divide"(%e, %lb) : (tensor<1x2x8x8xf32>, tensor<1x2x8x8xf32>) -> tensor<1x2x8x8xf32>
  // expected-remark@below {{attention not raised: P·V does not contract the softmax axis}}
  %o = "stablehlo.dot_general"(%p, %v) <{dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0, 1], rhs_batching_dimensions = [0, 2], lhs_contracting_dimensions = [3], rhs_contracting_dimensions = [1]>}> : (tensor<1x2x8x8xf32>, tensor<1x8x2x4xf32>) -> tensor<1x2x8x4xf32>
  %r = "stablehlo.transpose"(%o) <{permutation = array<i64: 0, 2, 1, 3>}> : (tensor<1x2x8x4xf32>) -> tensor<1x8x2x4xf32>
  return %r : tensor<1x8x2x4xf32>
}

// -----

// Near miss: the probabilities are scaled after the softmax.
// CHECK-LABEL: sym_name = "scaled_after_softmax"
// CHECK-NOT: flywheel.attention
func.func @scaled_after_softmax(%q: tensor<1x8x2x4xf32>, %k: tensor<1x8x2x4xf32>, %v: tensor<1x8x2x4xf32>) -> tensor<1x8x2x4xf32> {
  %s = "stablehlo.dot_general"(%q, %k) <{dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0, 2], rhs_batching_dimensions = [0, 2], lhs_contracting_dimensions = [3], rhs_contracting_dimensions = [3]>}> : (tensor<1x8x2x4xf32>, tensor<1x8x2x4xf32>) -> tensor<1x2x8x8xf32>
  %half = "stablehlo.constant"() <{value = dense<0.5> : tensor<f32>}> : () -> tensor<f32>
  %halfb = "stablehlo.broadcast_in_dim"(%half) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<1x2x8x8xf32>
  %z = "stablehlo.multiply"(%s, %halfb) : (tensor<1x2x8x8xf32>, tensor<1x2x8x8xf32>) -> tensor<1x2x8x8xf32>
  %ninf = "stablehlo.constant"() <{value = dense<0xFF800000> : tensor<f32>}> : () -> tensor<f32>
  %m = "stablehlo.reduce"(%z, %ninf) <{dimensions = array<i64: 3>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %x = "stablehlo.maximum"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "stablehlo.return"(%x) : (tensor<f32>) -> ()
  }) : (tensor<1x2x8x8xf32>, tensor<f32>) -> tensor<1x2x8xf32>
  %mb = "stablehlo.broadcast_in_dim"(%m) <{broadcast_dimensions = array<i64: 0, 1, 2>}> : (tensor<1x2x8xf32>) -> tensor<1x2x8x8xf32>
  %d = "stablehlo.subtract"(%z, %mb) : (tensor<1x2x8x8xf32>, tensor<1x2x8x8xf32>) -> tensor<1x2x8x8xf32>
  %e = "stablehlo.exponential"(%d) : (tensor<1x2x8x8xf32>) -> tensor<1x2x8x8xf32>
  %zero = "stablehlo.constant"() <{value = dense<0.0> : tensor<f32>}> : () -> tensor<f32>
  %l = "stablehlo.reduce"(%e, %zero) <{dimensions = array<i64: 3>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %x = "stablehlo.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "stablehlo.return"(%x) : (tensor<f32>) -> ()
  }) : (tensor<1x2x8x8xf32>, tensor<f32>) -> tensor<1x2x8xf32>
  %lb = "stablehlo.broadcast_in_dim"(%l) <{broadcast_dimensions = array<i64: 0, 1, 2>}> : (tensor<1x2x8xf32>) -> tensor<1x2x8x8xf32>
  %p = "stablehlo.divide"(%e, %lb) : (tensor<1x2x8x8xf32>, tensor<1x2x8x8xf32>) -> tensor<1x2x8x8xf32>
  %p2 = "stablehlo.multiply"(%p, %halfb) : (tensor<1x2x8x8xf32>, tensor<1x2x8x8xf32>) -> tensor<1x2x8x8xf32>
  // expected-remark@below {{attention not raised: the probabilities pass through 'stablehlo.multiply' between the softmax and P·V}}
  %o = "stablehlo.dot_general"(%p2, %v) <{dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0, 1], rhs_batching_dimensions = [0, 2], lhs_contracting_dimensions = [3], rhs_contracting_dimensions = [1]>}> : (tensor<1x2x8x8xf32>, tensor<1x8x2x4xf32>) -> tensor<1x2x8x4xf32>
  %r = "stablehlo.transpose"(%o) <{permutation = array<i64: 0, 2, 1, 3>}> : (tensor<1x2x8x4xf32>) -> tensor<1x8x2x4xf32>
  return %r : tensor<1x8x2x4xf32>
}

// -----

// The probabilities are also returned: the attention is raised and the softmax stays
// for its other user.
// CHECK-LABEL: sym_name = "probabilities_returned"
// CHECK: %[[P:.*]] = "stablehlo.divide"
// CHECK: %[[O:.*]] = "flywheel.attention"(%arg0, %arg1, %arg2)
// CHECK-NOT: "stablehlo.dot_general"
// CHECK: "func.return"(%[[O]], %[[P]])
func.func @probabilities_returned(%q: tensor<1x8x2x4xf32>, %k: tensor<1x8x2x4xf32>, %v: tensor<1x8x2x4xf32>) -> (tensor<1x8x2x4xf32>, tensor<1x2x8x8xf32>) {
  %s = "stablehlo.dot_general"(%q, %k) <{dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0, 2], rhs_batching_dimensions = [0, 2], lhs_contracting_dimensions = [3], rhs_contracting_dimensions = [3]>}> : (tensor<1x8x2x4xf32>, tensor<1x8x2x4xf32>) -> tensor<1x2x8x8xf32>
  %half = "stablehlo.constant"() <{value = dense<0.5> : tensor<f32>}> : () -> tensor<f32>
  %halfb = "stablehlo.broadcast_in_dim"(%half) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<1x2x8x8xf32>
  %z = "stablehlo.multiply"(%s, %halfb) : (tensor<1x2x8x8xf32>, tensor<1x2x8x8xf32>) -> tensor<1x2x8x8xf32>
  %ninf = "stablehlo.constant"() <{value = dense<0xFF800000> : tensor<f32>}> : () -> tensor<f32>
  %m = "stablehlo.reduce"(%z, %ninf) <{dimensions = array<i64: 3>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %x = "stablehlo.maximum"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "stablehlo.return"(%x) : (tensor<f32>) -> ()
  }) : (tensor<1x2x8x8xf32>, tensor<f32>) -> tensor<1x2x8xf32>
  %mb = "stablehlo.broadcast_in_dim"(%m) <{broadcast_dimensions = array<i64: 0, 1, 2>}> : (tensor<1x2x8xf32>) -> tensor<1x2x8x8xf32>
  %d = "stablehlo.subtract"(%z, %mb) : (tensor<1x2x8x8xf32>, tensor<1x2x8x8xf32>) -> tensor<1x2x8x8xf32>
  %e = "stablehlo.exponential"(%d) : (tensor<1x2x8x8xf32>) -> tensor<1x2x8x8xf32>
  %zero = "stablehlo.constant"() <{value = dense<0.0> : tensor<f32>}> : () -> tensor<f32>
  %l = "stablehlo.reduce"(%e, %zero) <{dimensions = array<i64: 3>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %x = "stablehlo.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "stablehlo.return"(%x) : (tensor<f32>) -> ()
  }) : (tensor<1x2x8x8xf32>, tensor<f32>) -> tensor<1x2x8xf32>
  %lb = "stablehlo.broadcast_in_dim"(%l) <{broadcast_dimensions = array<i64: 0, 1, 2>}> : (tensor<1x2x8xf32>) -> tensor<1x2x8x8xf32>
  %p = "stablehlo.divide"(%e, %lb) : (tensor<1x2x8x8xf32>, tensor<1x2x8x8xf32>) -> tensor<1x2x8x8xf32>
  // expected-remark@below {{raised to flywheel.attention}}
  %o = "stablehlo.dot_general"(%p, %v) <{dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0, 1], rhs_batching_dimensions = [0, 2], lhs_contracting_dimensions = [3], rhs_contracting_dimensions = [1]>}> : (tensor<1x2x8x8xf32>, tensor<1x8x2x4xf32>) -> tensor<1x2x8x4xf32>
  %r = "stablehlo.transpose"(%o) <{permutation = array<i64: 0, 2, 1, 3>}> : (tensor<1x2x8x4xf32>) -> tensor<1x8x2x4xf32>
  return %r, %p : tensor<1x8x2x4xf32>, tensor<1x2x8x8xf32>
}

// -----

// A softmax computed in bf16 (the logits rounded to bf16, the maximum and sum reduced in
// bf16) is raised: flywheel.attention computes it in f32, more accurately than the source.
// CHECK-LABEL: func.func @bf16_softmax
// CHECK-NEXT: "flywheel.attention"(%arg0, %arg1, %arg2) {causal = false, kv_heads = 2 : i64, layout = "BTNH", operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0>, q_heads = 2 : i64, scale = 5.000000e-01 : f32}
func.func @bf16_softmax(%q: tensor<1x8x2x4xf32>, %k: tensor<1x8x2x4xf32>, %v: tensor<1x8x2x4xf32>) -> tensor<1x8x2x4xf32> {
  %s = "stablehlo.dot_general"(%q, %k) <{dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0, 2], rhs_batching_dimensions = [0, 2], lhs_contracting_dimensions = [3], rhs_contracting_dimensions = [3]>}> : (tensor<1x8x2x4xf32>, tensor<1x8x2x4xf32>) -> tensor<1x2x8x8xf32>
  %half = "stablehlo.constant"() <{value = dense<0.5> : tensor<f32>}> : () -> tensor<f32>
  %halfb = "stablehlo.broadcast_in_dim"(%half) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<1x2x8x8xf32>
  %z = "stablehlo.multiply"(%s, %halfb) : (tensor<1x2x8x8xf32>, tensor<1x2x8x8xf32>) -> tensor<1x2x8x8xf32>
  %zb = "stablehlo.convert"(%z) : (tensor<1x2x8x8xf32>) -> tensor<1x2x8x8xbf16>
  %ninf = "stablehlo.constant"() <{value = dense<0xFF80> : tensor<bf16>}> : () -> tensor<bf16>
  %m = "stablehlo.reduce"(%zb, %ninf) <{dimensions = array<i64: 3>}> ({
  ^bb0(%a: tensor<bf16>, %b: tensor<bf16>):
    %x = "stablehlo.maximum"(%a, %b) : (tensor<bf16>, tensor<bf16>) -> tensor<bf16>
    "stablehlo.return"(%x) : (tensor<bf16>) -> ()
  }) : (tensor<1x2x8x8xbf16>, tensor<bf16>) -> tensor<1x2x8xbf16>
  %mb = "stablehlo.broadcast_in_dim"(%m) <{broadcast_dimensions = array<i64: 0, 1, 2>}> : (tensor<1x2x8xbf16>) -> tensor<1x2x8x8xbf16>
  %d = "stablehlo.subtract"(%zb, %mb) : (tensor<1x2x8x8xbf16>, tensor<1x2x8x8xbf16>) -> tensor<1x2x8x8xbf16>
  %e = "stablehlo.exponential"(%d) : (tensor<1x2x8x8xbf16>) -> tensor<1x2x8x8xbf16>
  %zero = "stablehlo.constant"() <{value = dense<0.0> : tensor<bf16>}> : () -> tensor<bf16>
  %l = "stablehlo.reduce"(%e, %zero) <{dimensions = array<i64: 3>}> ({
  ^bb0(%a: tensor<bf16>, %b: tensor<bf16>):
    %x = "stablehlo.add"(%a, %b) : (tensor<bf16>, tensor<bf16>) -> tensor<bf16>
    "stablehlo.return"(%x) : (tensor<bf16>) -> ()
  }) : (tensor<1x2x8x8xbf16>, tensor<bf16>) -> tensor<1x2x8xbf16>
  %lb = "stablehlo.broadcast_in_dim"(%l) <{broadcast_dimensions = array<i64: 0, 1, 2>}> : (tensor<1x2x8xbf16>) -> tensor<1x2x8x8xbf16>
  %p = "stablehlo.divide"(%e, %lb) : (tensor<1x2x8x8xbf16>, tensor<1x2x8x8xbf16>) -> tensor<1x2x8x8xbf16>
  %pf = "stablehlo.convert"(%p) : (tensor<1x2x8x8xbf16>) -> tensor<1x2x8x8xf32>
  // expected-remark@below {{raised to flywheel.attention (layout BTNH, 2 query / 2 key-value heads, scale 0.5)}}
  %o = "stablehlo.dot_general"(%pf, %v) <{dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0, 1], rhs_batching_dimensions = [0, 2], lhs_contracting_dimensions = [3], rhs_contracting_dimensions = [1]>}> : (tensor<1x2x8x8xf32>, tensor<1x8x2x4xf32>) -> tensor<1x2x8x4xf32>
  %r = "stablehlo.transpose"(%o) <{permutation = array<i64: 0, 2, 1, 3>}> : (tensor<1x2x8x4xf32>) -> tensor<1x8x2x4xf32>
  return %r : tensor<1x8x2x4xf32>
}

// -----

// Near miss: masked logits are set to -100, which still gets attention weight.
// CHECK-LABEL: sym_name = "weak_mask_fill"
// CHECK-NOT: flywheel.attention
func.func @weak_mask_fill(%q: tensor<1x8x2x4xf32>, %k: tensor<1x8x2x4xf32>, %v: tensor<1x8x2x4xf32>) -> tensor<1x8x2x4xf32> {
  %s = "stablehlo.dot_general"(%q, %k) <{dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0, 2], rhs_batching_dimensions = [0, 2], lhs_contracting_dimensions = [3], rhs_contracting_dimensions = [3]>}> : (tensor<1x8x2x4xf32>, tensor<1x8x2x4xf32>) -> tensor<1x2x8x8xf32>
  %half = "stablehlo.constant"() <{value = dense<0.5> : tensor<f32>}> : () -> tensor<f32>
  %halfb = "stablehlo.broadcast_in_dim"(%half) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<1x2x8x8xf32>
  %z = "stablehlo.multiply"(%s, %halfb) : (tensor<1x2x8x8xf32>, tensor<1x2x8x8xf32>) -> tensor<1x2x8x8xf32>
  %row = "stablehlo.iota"() <{iota_dimension = 0 : i64}> : () -> tensor<8x8xi32>
  %col = "stablehlo.iota"() <{iota_dimension = 1 : i64}> : () -> tensor<8x8xi32>
  %allowed = "stablehlo.compare"(%col, %row) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LE>}> : (tensor<8x8xi32>, tensor<8x8xi32>) -> tensor<8x8xi1>
  %allowedb = "stablehlo.broadcast_in_dim"(%allowed) <{broadcast_dimensions = array<i64: 2, 3>}> : (tensor<8x8xi1>) -> tensor<1x2x8x8xi1>
  %low = "stablehlo.constant"() <{value = dense<-1.000000e+02> : tensor<f32>}> : () -> tensor<f32>
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
  // expected-remark@below {{attention not raised: a mask fills with -100, which still gets attention weight}}
  %o = "stablehlo.dot_general"(%p, %v) <{dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0, 1], rhs_batching_dimensions = [0, 2], lhs_contracting_dimensions = [3], rhs_contracting_dimensions = [1]>}> : (tensor<1x2x8x8xf32>, tensor<1x8x2x4xf32>) -> tensor<1x2x8x4xf32>
  %r = "stablehlo.transpose"(%o) <{permutation = array<i64: 0, 2, 1, 3>}> : (tensor<1x2x8x4xf32>) -> tensor<1x8x2x4xf32>
  return %r : tensor<1x8x2x4xf32>
}

// -----

// Near miss: exp(z) / sum(exp(z)) without subtracting the maximum.
// CHECK-LABEL: sym_name = "unstabilized_softmax"
// CHECK-NOT: flywheel.attention
func.func @unstabilized_softmax(%q: tensor<1x8x2x4xf32>, %k: tensor<1x8x2x4xf32>, %v: tensor<1x8x2x4xf32>) -> tensor<1x8x2x4xf32> {
  %s = "stablehlo.dot_general"(%q, %k) <{dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0, 2], rhs_batching_dimensions = [0, 2], lhs_contracting_dimensions = [3], rhs_contracting_dimensions = [3]>}> : (tensor<1x8x2x4xf32>, tensor<1x8x2x4xf32>) -> tensor<1x2x8x8xf32>
  %half = "stablehlo.constant"() <{value = dense<0.5> : tensor<f32>}> : () -> tensor<f32>
  %halfb = "stablehlo.broadcast_in_dim"(%half) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<1x2x8x8xf32>
  %z = "stablehlo.multiply"(%s, %halfb) : (tensor<1x2x8x8xf32>, tensor<1x2x8x8xf32>) -> tensor<1x2x8x8xf32>
  %ninf = "stablehlo.constant"() <{value = dense<0xFF800000> : tensor<f32>}> : () -> tensor<f32>
  %m = "stablehlo.reduce"(%z, %ninf) <{dimensions = array<i64: 3>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %x = "stablehlo.maximum"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "stablehlo.return"(%x) : (tensor<f32>) -> ()
  }) : (tensor<1x2x8x8xf32>, tensor<f32>) -> tensor<1x2x8xf32>
  %mb = "stablehlo.broadcast_in_dim"(%m) <{broadcast_dimensions = array<i64: 0, 1, 2>}> : (tensor<1x2x8xf32>) -> tensor<1x2x8x8xf32>
  %d = "stablehlo.subtract"(%z, %mb) : (tensor<1x2x8x8xf32>, tensor<1x2x8x8xf32>) -> tensor<1x2x8x8xf32>
  %e = "stablehlo.exponential"(%z) : (tensor<1x2x8x8xf32>) -> tensor<1x2x8x8xf32>
  %zero = "stablehlo.constant"() <{value = dense<0.0> : tensor<f32>}> : () -> tensor<f32>
  %l = "stablehlo.reduce"(%e, %zero) <{dimensions = array<i64: 3>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %x = "stablehlo.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "stablehlo.return"(%x) : (tensor<f32>) -> ()
  }) : (tensor<1x2x8x8xf32>, tensor<f32>) -> tensor<1x2x8xf32>
  %lb = "stablehlo.broadcast_in_dim"(%l) <{broadcast_dimensions = array<i64: 0, 1, 2>}> : (tensor<1x2x8xf32>) -> tensor<1x2x8x8xf32>
  %p = "stablehlo.divide"(%e, %lb) : (tensor<1x2x8x8xf32>, tensor<1x2x8x8xf32>) -> tensor<1x2x8x8xf32>
  // expected-remark@below {{attention not raised: the exponential's argument is not the logits minus their maximum}}
  %o = "stablehlo.dot_general"(%p, %v) <{dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0, 1], rhs_batching_dimensions = [0, 2], lhs_contracting_dimensions = [3], rhs_contracting_dimensions = [1]>}> : (tensor<1x2x8x8xf32>, tensor<1x8x2x4xf32>) -> tensor<1x2x8x4xf32>
  %r = "stablehlo.transpose"(%o) <{permutation = array<i64: 0, 2, 1, 3>}> : (tensor<1x2x8x4xf32>) -> tensor<1x8x2x4xf32>
  return %r : tensor<1x8x2x4xf32>
}
