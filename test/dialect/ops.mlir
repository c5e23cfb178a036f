// Valid flywheel ops parse, pass both verifiers, and print back (generic form: IRDL ops
// have no custom syntax) so that the output parses again.
// RUN: flywheel-opt %s | FileCheck %s
// RUN: flywheel-opt %s | flywheel-opt | FileCheck %s
// RUN: flywheel-opt %s --emit-bytecode | flywheel-opt | FileCheck %s

// CHECK-LABEL: func.func @mha_btnh
// CHECK: "flywheel.attention"(%arg0, %arg1, %arg2)
// CHECK-SAME: causal = false
// CHECK-SAME: kv_heads = 4 : i64
// CHECK-SAME: layout = "BTNH"
// CHECK-SAME: q_heads = 4 : i64
// CHECK-SAME: scale = 1.250000e-01 : f32
func.func @mha_btnh(%q: tensor<2x128x4x64xbf16>, %k: tensor<2x128x4x64xbf16>, %v: tensor<2x128x4x64xbf16>) -> tensor<2x128x4x64xbf16> {
  %o = "flywheel.attention"(%q, %k, %v) {operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0>, scale = 0.125 : f32, causal = false, layout = "BTNH", q_heads = 4, kv_heads = 4} : (tensor<2x128x4x64xbf16>, tensor<2x128x4x64xbf16>, tensor<2x128x4x64xbf16>) -> tensor<2x128x4x64xbf16>
  return %o : tensor<2x128x4x64xbf16>
}

// GQA in BNTH with every optional operand and attribute; q and k/v lengths differ.
// CHECK-LABEL: func.func @gqa_bnth_everything
// CHECK: "flywheel.attention"(%arg0, %arg1, %arg2, %arg3, %arg4, %arg5, %arg6)
// CHECK-SAME: logit_soft_cap = 3.000000e+01 : f32
// CHECK-SAME: window = array<i64: 63, 0>
func.func @gqa_bnth_everything(%q: tensor<1x8x64x128xf32>, %k: tensor<1x2x256x128xf32>, %v: tensor<1x2x256x64xf32>,
                               %mask: tensor<1x1x64x256xi1>, %bias: tensor<1x8x64x256xf32>,
                               %qs: tensor<1x64xi32>, %ks: tensor<1x256xi32>) -> tensor<1x8x64x64xf32> {
  %o = "flywheel.attention"(%q, %k, %v, %mask, %bias, %qs, %ks) {operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 1, 1>, scale = 0.088 : f32, causal = true, layout = "BNTH", q_heads = 8, kv_heads = 2, window = array<i64: 63, 0>, logit_soft_cap = 30.0 : f32} : (tensor<1x8x64x128xf32>, tensor<1x2x256x128xf32>, tensor<1x2x256x64xf32>, tensor<1x1x64x256xi1>, tensor<1x8x64x256xf32>, tensor<1x64xi32>, tensor<1x256xi32>) -> tensor<1x8x64x64xf32>
  return %o : tensor<1x8x64x64xf32>
}

// Qwen3-Next-like heads: 2 query/key heads, 4 value heads, with an initial state.
// CHECK-LABEL: func.func @gated_delta
// CHECK: %{{.*}}:2 = "flywheel.gated_delta"(%arg0, %arg1, %arg2, %arg3, %arg4, %arg5)
// CHECK-SAME: chunk_size = 64 : i64
// CHECK-SAME: precision = "DEFAULT"
func.func @gated_delta(%q: tensor<1x256x2x128xbf16>, %k: tensor<1x256x2x128xbf16>, %v: tensor<1x256x4x128xbf16>,
                       %g: tensor<1x256x4xf32>, %beta: tensor<1x256x4xf32>, %s0: tensor<1x4x128x128xf32>)
    -> (tensor<1x256x4x128xbf16>, tensor<1x4x128x128xf32>) {
  %o, %s = "flywheel.gated_delta"(%q, %k, %v, %g, %beta, %s0) {scale = 0.088 : f32, chunk_size = 64, layout = "BTNH", precision = "DEFAULT"} : (tensor<1x256x2x128xbf16>, tensor<1x256x2x128xbf16>, tensor<1x256x4x128xbf16>, tensor<1x256x4xf32>, tensor<1x256x4xf32>, tensor<1x4x128x128xf32>) -> (tensor<1x256x4x128xbf16>, tensor<1x4x128x128xf32>)
  return %o, %s : tensor<1x256x4x128xbf16>, tensor<1x4x128x128xf32>
}

// Dynamic sizes are allowed where the op's semantics do not depend on them.
// CHECK-LABEL: func.func @dynamic_sequence
// CHECK: "flywheel.gated_delta"
func.func @dynamic_sequence(%q: tensor<1x?x2x64xf32>, %v: tensor<1x?x2x64xf32>, %g: tensor<1x?x2xf32>)
    -> (tensor<1x?x2x64xf32>, tensor<1x2x64x64xf32>) {
  %o, %s = "flywheel.gated_delta"(%q, %q, %v, %g, %g) {scale = 1.0 : f32, chunk_size = 64, layout = "BTNH"} : (tensor<1x?x2x64xf32>, tensor<1x?x2x64xf32>, tensor<1x?x2x64xf32>, tensor<1x?x2xf32>, tensor<1x?x2xf32>) -> (tensor<1x?x2x64xf32>, tensor<1x2x64x64xf32>)
  return %o, %s : tensor<1x?x2x64xf32>, tensor<1x2x64x64xf32>
}
