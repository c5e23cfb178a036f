// flywheel-verify checks flywheel ops inside a pipeline, independently of the driver's
// own verification (switched off here with --verify-each=false).
// RUN: flywheel-opt %s --split-input-file --verify-each=false --flywheel-verify --verify-diagnostics | FileCheck %s

// Positive: a valid op passes through unchanged.
// CHECK-LABEL: func.func @valid
// CHECK: "flywheel.attention"(%arg0, %arg1, %arg1)
func.func @valid(%q: tensor<1x16x4x8xbf16>, %kv: tensor<1x32x2x8xbf16>) -> tensor<1x16x4x8xbf16> {
  %o = "flywheel.attention"(%q, %kv, %kv) {operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0>, scale = 0.35 : f32, causal = true, layout = "BTNH", q_heads = 4, kv_heads = 2} : (tensor<1x16x4x8xbf16>, tensor<1x32x2x8xbf16>, tensor<1x32x2x8xbf16>) -> tensor<1x16x4x8xbf16>
  return %o : tensor<1x16x4x8xbf16>
}

// -----

// Near miss: an op of another dialect with the same name and ill-matched shapes is not
// FlyWheel's to check.
// CHECK-LABEL: sym_name = "other_dialect"
// CHECK: "mydialect.attention"
func.func @other_dialect(%q: tensor<1x16x4x8xf32>, %k: tensor<3x3xf32>) -> tensor<1x16x4x8xf32> {
  %o = "mydialect.attention"(%q, %k, %k) {scale = 0.5 : f32, layout = "nonsense"} : (tensor<1x16x4x8xf32>, tensor<3x3xf32>, tensor<3x3xf32>) -> tensor<1x16x4x8xf32>
  return %o : tensor<1x16x4x8xf32>
}

// -----

// Diagnostic: the pass reports a semantic error at the op and fails.
func.func @invalid(%q: tensor<1x16x4x8xf32>, %kv: tensor<1x16x3x8xf32>) -> tensor<1x16x4x8xf32> {
  // expected-error@+1 {{'flywheel.attention' op kv heads (3) must divide q heads (4)}}
  %o = "flywheel.attention"(%q, %kv, %kv) {operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0>, scale = 0.5 : f32, causal = false, layout = "BTNH", q_heads = 4, kv_heads = 3} : (tensor<1x16x4x8xf32>, tensor<1x16x3x8xf32>, tensor<1x16x3x8xf32>) -> tensor<1x16x4x8xf32>
  return %o : tensor<1x16x4x8xf32>
}
