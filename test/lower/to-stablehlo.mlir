// flywheel-lower-to-stablehlo: flywheel.attention decomposed into plain StableHLO with
// the numerics the dialect defines. Raised JAX programs are lowered and run against the
// originals by the suite (pjrt::raise_roundtrip); here: the structure of the lowering,
// segment ids against the equivalent explicit mask on the CPU plugin, and errors.

// RUN: flywheel-opt %s --split-input-file --flywheel-lower-to-stablehlo --verify-diagnostics | FileCheck %s

// Everything at once: BNTH layout, 4 query heads over 2 key/value heads, soft-cap, bias,
// a mask, causal with a window.
// CHECK-LABEL: sym_name = "everything"
// Q, K, V to BTNH; Q's heads grouped under their K/V head.
// CHECK: "stablehlo.transpose"(%arg0) <{permutation = array<i64: 0, 2, 1, 3>}> : (tensor<2x4x8x16xbf16>) -> tensor<2x8x4x16xbf16>
// CHECK: "stablehlo.reshape"({{.*}}) : (tensor<2x8x4x16xbf16>) -> tensor<2x8x2x2x16xbf16>
// Scores in f32, [B, Nkv, Tq, G, Tk].
// CHECK: "stablehlo.dot_general"({{.*}}) <{dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0, 2], rhs_batching_dimensions = [0, 2], lhs_contracting_dimensions = [4], rhs_contracting_dimensions = [3]>}> : (tensor<2x8x2x2x16xbf16>, tensor<2x8x2x16xbf16>) -> tensor<2x2x8x2x8xf32>
// CHECK: "stablehlo.multiply"
// CHECK: "stablehlo.tanh"
// CHECK: "stablehlo.add"
// Causal (j <= i) and the window (i - j <= 3, j - i <= 0), then the mask.
// CHECK: "stablehlo.iota"() <{iota_dimension = 0 : i64}> : () -> tensor<8x8xi32>
// CHECK: comparison_direction = #stablehlo<comparison_direction LE>
// CHECK: "stablehlo.select"({{.*}}) : (tensor<2x2x8x2x8xi1>, tensor<2x2x8x2x8xf32>, tensor<2x2x8x2x8xf32>) -> tensor<2x2x8x2x8xf32>
// Softmax in f32 over the keys, probabilities rounded to V's type.
// CHECK: "stablehlo.reduce"({{.*}}) <{dimensions = array<i64: 4>}>
// CHECK: "stablehlo.maximum"
// CHECK: "stablehlo.exponential"
// CHECK: "stablehlo.divide"
// CHECK: "stablehlo.convert"({{.*}}) : (tensor<2x2x8x2x8xf32>) -> tensor<2x2x8x2x8xbf16>
// CHECK: "stablehlo.dot_general"({{.*}}) <{{.*}}> : (tensor<2x2x8x2x8xbf16>, tensor<2x8x2x16xbf16>) -> tensor<2x2x8x2x16xbf16>
// Back to [B, Tq, Nq, Dv], then BNTH.
// CHECK: "stablehlo.reshape"({{.*}}) : (tensor<2x8x2x2x16xbf16>) -> tensor<2x8x4x16xbf16>
// CHECK: %[[O:.*]] = "stablehlo.transpose"({{.*}}) <{permutation = array<i64: 0, 2, 1, 3>}> : (tensor<2x8x4x16xbf16>) -> tensor<2x4x8x16xbf16>
// CHECK: "func.return"(%[[O]])
// CHECK-NOT: flywheel.attention
func.func @everything(%q: tensor<2x4x8x16xbf16>, %k: tensor<2x2x8x16xbf16>, %v: tensor<2x2x8x16xbf16>, %mask: tensor<2x1x8x8xi1>, %bias: tensor<1x4x8x8xf32>) -> tensor<2x4x8x16xbf16> {
  %o = "flywheel.attention"(%q, %k, %v, %mask, %bias) {operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 0, 0>, scale = 0.25 : f32, causal = true, window = array<i64: 3, 0>, logit_soft_cap = 20.0 : f32, layout = "BNTH", q_heads = 4, kv_heads = 2} : (tensor<2x4x8x16xbf16>, tensor<2x2x8x16xbf16>, tensor<2x2x8x16xbf16>, tensor<2x1x8x8xi1>, tensor<1x4x8x8xf32>) -> tensor<2x4x8x16xbf16>
  return %o : tensor<2x4x8x16xbf16>
}

// -----

// An op the lowering cannot serve is an error at the op, and the pass fails.
func.func @dynamic(%q: tensor<1x?x2x4xf32>, %k: tensor<1x8x2x4xf32>, %v: tensor<1x8x2x4xf32>) -> tensor<1x?x2x4xf32> {
  // expected-error@below {{'flywheel.attention' op cannot be lowered: dynamic shape}}
  %o = "flywheel.attention"(%q, %k, %v) {operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0>, scale = 0.5 : f32, causal = false, layout = "BTNH", q_heads = 2, kv_heads = 2} : (tensor<1x?x2x4xf32>, tensor<1x8x2x4xf32>, tensor<1x8x2x4xf32>) -> tensor<1x?x2x4xf32>
  return %o : tensor<1x?x2x4xf32>
}

// Segment ids give the same result as the mask `q_segment[i] == kv_segment[j]`; with
// the CPU plugin on random segment ids (integers in [0, 16)) and q, k, v:
// RUN: flywheel-opt %S/../Inputs/segments.mlir --flywheel-lower-to-stablehlo -o %t.segments.mlir
// RUN: flywheel-opt %S/../Inputs/segments-as-mask.mlir --flywheel-lower-to-stablehlo -o %t.mask.mlir
// RUN: flywheel check %t.mask.mlir %t.segments.mlir --seed 3 | FileCheck %s --check-prefix=SEGMENTS
// SEGMENTS: check: passed (1 outputs within tolerance)

// -----

// Gated DeltaNet: the per-token recurrence as a while loop over time-major f32 inputs,
// the key head repeated for its value heads.
// CHECK-LABEL: sym_name = "gated_delta"
// CHECK: "stablehlo.broadcast_in_dim"({{.*}}) <{broadcast_dimensions = array<i64: 0, 1, 2, 4>}> : (tensor<16x1x1x8xf32>) -> tensor<16x1x1x2x8xf32>
// CHECK: "stablehlo.while"
// CHECK: comparison_direction = #stablehlo<comparison_direction LT>
// CHECK: "stablehlo.dynamic_slice"
// CHECK: "stablehlo.exponential"
// CHECK: "stablehlo.dot_general"
// CHECK: "stablehlo.subtract"
// CHECK: "stablehlo.dynamic_update_slice"
// CHECK: "stablehlo.convert"({{.*}}) : (tensor<1x16x2x8xf32>) -> tensor<1x16x2x8xbf16>
// CHECK-NOT: flywheel.gated_delta
func.func @gated_delta(%q: tensor<1x16x1x8xbf16>, %k: tensor<1x16x1x8xbf16>, %v: tensor<1x16x2x8xbf16>, %g: tensor<1x16x2xf32>, %beta: tensor<1x16x2xf32>, %s0: tensor<1x2x8x8xf32>) -> (tensor<1x16x2x8xbf16>, tensor<1x2x8x8xf32>) {
  %o, %s = "flywheel.gated_delta"(%q, %k, %v, %g, %beta, %s0) {operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 1>, scale = 0.25 : f32, chunk_size = 8 : i64, layout = "BTNH"} : (tensor<1x16x1x8xbf16>, tensor<1x16x1x8xbf16>, tensor<1x16x2x8xbf16>, tensor<1x16x2xf32>, tensor<1x16x2xf32>, tensor<1x2x8x8xf32>) -> (tensor<1x16x2x8xbf16>, tensor<1x2x8x8xf32>)
  return %o, %s : tensor<1x16x2x8xbf16>, tensor<1x2x8x8xf32>
}

// The recurrence run whole equals the recurrence run in two halves, the first half's
// final state handed to the second as its initial state (key heads shared there, and
// repeated explicitly here): both outputs agree on the CPU plugin.
// RUN: flywheel-opt %S/../Inputs/gdn-whole.mlir --flywheel-lower-to-stablehlo -o %t.whole.mlir
// RUN: flywheel-opt %S/../Inputs/gdn-split.mlir --flywheel-lower-to-stablehlo -o %t.split.mlir
// RUN: flywheel check %t.whole.mlir %t.split.mlir --seed 5 | FileCheck %s --check-prefix=SPLIT
// SPLIT: check: passed (2 outputs within tolerance)

// A window bound past 2^31 - 1 masks nothing more than one of the sequences' length: the
// kernel and the reference lowering compute what the bound 128 gives (they once truncated
// it to 32 bits: all NaN from the kernel, a negative bound in the reference).
// RUN: flywheel-opt %S/../fixtures/attention_local_window_f32.mlir --flywheel-normalize --flywheel-raise-attention | sed 's/window = array<i64: 15, 15>/window = array<i64: 4, 2147483648>/' > %t.wide.mlir
// RUN: flywheel-opt %S/../fixtures/attention_local_window_f32.mlir --flywheel-normalize --flywheel-raise-attention | sed 's/window = array<i64: 15, 15>/window = array<i64: 4, 128>/' | flywheel-opt --flywheel-lower-to-stablehlo -o %t.bounded.mlir
// RUN: flywheel-opt %t.wide.mlir --pass-pipeline='builtin.module(flywheel-tpu{target=v6e profitability=off})' -o %t.wide.tpu.mlir
// RUN: flywheel check %t.bounded.mlir %t.wide.tpu.mlir | FileCheck %s --check-prefix=WIDE-WINDOW
// RUN: flywheel-opt %t.wide.mlir --flywheel-lower-to-stablehlo -o %t.wide.lowered.mlir
// RUN: flywheel check %t.bounded.mlir %t.wide.lowered.mlir | FileCheck %s --check-prefix=WIDE-WINDOW
// WIDE-WINDOW: check: passed
