// flywheel-raise-attention on the real JAX programs in test/fixtures: each becomes one
// flywheel.attention on the function's own q, k, v (and bias or mask) with the right
// attributes, and nothing of the original attention dataflow is left. (raise +
// lower-to-stablehlo is checked against the original on the CPU plugin by the suite's
// pjrt::raise_roundtrip tests.)

// RUN: flywheel-opt %S/../fixtures/attention_bnth_f32.mlir --flywheel-raise-attention | FileCheck %s --check-prefix=BNTH-F32
// BNTH-F32: "flywheel.attention"(%arg0, %arg1, %arg2) {causal = false, kv_heads = 4 : i64, layout = "BNTH", operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0>, q_heads = 4 : i64, scale = 1.250000e-01 : f32}
// BNTH-F32-NOT: stablehlo.exponential

// RUN: flywheel-opt %S/../fixtures/attention_causal_bf16.mlir --flywheel-raise-attention | FileCheck %s --check-prefix=CAUSAL-BF16
// CAUSAL-BF16: "flywheel.attention"(%arg0, %arg1, %arg2) {causal = true, kv_heads = 4 : i64, layout = "BTNH", operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0>, q_heads = 4 : i64, scale = 1.250000e-01 : f32}
// CAUSAL-BF16-NOT: stablehlo.exponential

// RUN: flywheel-opt %S/../fixtures/attention_dpa_bias_f32.mlir --flywheel-raise-attention | FileCheck %s --check-prefix=DPA-BIAS-F32
// DPA-BIAS-F32: "flywheel.attention"(%arg0, %arg1, %arg2, %arg3) {causal = false, kv_heads = 4 : i64, layout = "BTNH", operandSegmentSizes = array<i32: 1, 1, 1, 0, 1, 0, 0>, q_heads = 4 : i64, scale = 1.250000e-01 : f32}
// DPA-BIAS-F32-NOT: stablehlo.exponential

// Near miss: the bias added twice. The op holds one bias; keeping the last would drop
// the first, so the program stays as it was.
// RUN: sed 's/%8 = "stablehlo.add"(%6, %7)/%once = "stablehlo.add"(%6, %7) : (tensor<1x2x4x128x128xf32>, tensor<1x2x4x128x128xf32>) -> tensor<1x2x4x128x128xf32>\n    %8 = "stablehlo.add"(%once, %7)/' %S/../fixtures/attention_dpa_bias_f32.mlir \
// RUN:   | flywheel-opt --flywheel-raise-attention=remarks=true 2>&1 | FileCheck %s --check-prefix=TWO-BIASES
// TWO-BIASES: remark: attention not raised: the bias comes in an order flywheel.attention cannot express
// TWO-BIASES-NOT: flywheel.attention
// TWO-BIASES: stablehlo.exponential

// RUN: flywheel-opt %S/../fixtures/attention_dpa_causal_bf16.mlir --flywheel-raise-attention | FileCheck %s --check-prefix=DPA-CAUSAL-BF16
// DPA-CAUSAL-BF16: "flywheel.attention"(%arg0, %arg1, %arg2) {causal = true, kv_heads = 4 : i64, layout = "BTNH", operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0>, q_heads = 4 : i64, scale = 1.250000e-01 : f32}
// DPA-CAUSAL-BF16-NOT: stablehlo.exponential

// RUN: flywheel-opt %S/../fixtures/attention_dpa_f32.mlir --flywheel-raise-attention | FileCheck %s --check-prefix=DPA-F32
// DPA-F32: "flywheel.attention"(%arg0, %arg1, %arg2) {causal = false, kv_heads = 4 : i64, layout = "BTNH", operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0>, q_heads = 4 : i64, scale = 1.250000e-01 : f32}
// DPA-F32-NOT: stablehlo.exponential

// RUN: flywheel-opt %S/../fixtures/attention_dpa_gqa_bf16.mlir --flywheel-raise-attention | FileCheck %s --check-prefix=DPA-GQA-BF16
// DPA-GQA-BF16: "flywheel.attention"(%arg0, %arg1, %arg2) {causal = false, kv_heads = 2 : i64, layout = "BTNH", operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0>, q_heads = 8 : i64, scale = 1.250000e-01 : f32}
// DPA-GQA-BF16-NOT: stablehlo.exponential

// RUN: flywheel-opt %S/../fixtures/attention_dpa_mask_bf16.mlir --flywheel-raise-attention | FileCheck %s --check-prefix=DPA-MASK-BF16
// DPA-MASK-BF16: "flywheel.attention"(%arg0, %arg1, %arg2, %arg3) {causal = false, kv_heads = 4 : i64, layout = "BTNH", operandSegmentSizes = array<i32: 1, 1, 1, 1, 0, 0, 0>, q_heads = 4 : i64, scale = 1.250000e-01 : f32}
// DPA-MASK-BF16-NOT: stablehlo.exponential

// RUN: flywheel-opt %S/../fixtures/attention_gqa_bf16.mlir --flywheel-raise-attention | FileCheck %s --check-prefix=GQA-BF16
// GQA-BF16: "flywheel.attention"(%arg0, %arg1, %arg2) {causal = false, kv_heads = 2 : i64, layout = "BTNH", operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0>, q_heads = 8 : i64, scale = 1.250000e-01 : f32}
// GQA-BF16-NOT: stablehlo.exponential

// RUN: flywheel-opt %S/../fixtures/attention_heads_sharded_bf16.mlir --flywheel-raise-attention | FileCheck %s --check-prefix=HEADS-SHARDED-BF16
// HEADS-SHARDED-BF16: "flywheel.attention"(%arg0, %arg1, %arg2) {causal = true, kv_heads = 4 : i64, layout = "BTNH", operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0>, q_heads = 4 : i64, scale = 1.250000e-01 : f32}
// HEADS-SHARDED-BF16-NOT: stablehlo.exponential

// RUN: flywheel-opt %S/../fixtures/attention_local_window_f32.mlir --flywheel-raise-attention | FileCheck %s --check-prefix=LOCAL-WINDOW-F32
// LOCAL-WINDOW-F32: "flywheel.attention"(%arg0, %arg1, %arg2) {causal = false, kv_heads = 4 : i64, layout = "BTNH", operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0>, q_heads = 4 : i64, scale = 1.250000e-01 : f32, window = array<i64: 15, 15>}
// LOCAL-WINDOW-F32-NOT: stablehlo.exponential

// RUN: flywheel-opt %S/../fixtures/attention_mha_bf16.mlir --flywheel-raise-attention | FileCheck %s --check-prefix=MHA-BF16
// MHA-BF16: "flywheel.attention"(%arg0, %arg1, %arg2) {causal = false, kv_heads = 4 : i64, layout = "BTNH", operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0>, q_heads = 4 : i64, scale = 1.250000e-01 : f32}
// MHA-BF16-NOT: stablehlo.exponential

// RUN: flywheel-opt %S/../fixtures/attention_mha_f32.mlir --flywheel-raise-attention | FileCheck %s --check-prefix=MHA-F32
// MHA-F32: "flywheel.attention"(%arg0, %arg1, %arg2) {causal = false, kv_heads = 4 : i64, layout = "BTNH", operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0>, q_heads = 4 : i64, scale = 1.250000e-01 : f32}
// MHA-F32-NOT: stablehlo.exponential

// RUN: flywheel-opt %S/../fixtures/attention_mqa_f32.mlir --flywheel-raise-attention | FileCheck %s --check-prefix=MQA-F32
// MQA-F32: "flywheel.attention"(%arg0, %arg1, %arg2) {causal = false, kv_heads = 1 : i64, layout = "BTNH", operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0>, q_heads = 4 : i64, scale = 1.250000e-01 : f32}
// MQA-F32-NOT: stablehlo.exponential

// The scale on K, not Q: the same 1/8 in the op (the numerics trials check it computes).
// RUN: flywheel-opt %S/../fixtures/attention_scaled_k_f32.mlir --flywheel-raise-attention | FileCheck %s --check-prefix=SCALED-K-F32
// SCALED-K-F32: "flywheel.attention"(%arg0, %arg1, %arg2) {causal = false, kv_heads = 4 : i64, layout = "BTNH", operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0>, q_heads = 4 : i64, scale = 1.250000e-01 : f32}
// SCALED-K-F32-NOT: stablehlo.exponential

// RUN: flywheel-opt %S/../fixtures/attention_scaled_q_bf16.mlir --flywheel-raise-attention | FileCheck %s --check-prefix=SCALED-Q-BF16
// SCALED-Q-BF16: "flywheel.attention"(%arg0, %0, %arg2) {causal = false, kv_heads = 4 : i64, layout = "BTNH", operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0>, q_heads = 4 : i64, scale = 1.250000e-01 : f32}
// SCALED-Q-BF16-NOT: stablehlo.exponential

// RUN: flywheel-opt %S/../fixtures/attention_sliding_window_f32.mlir --flywheel-raise-attention | FileCheck %s --check-prefix=SLIDING-WINDOW-F32
// SLIDING-WINDOW-F32: "flywheel.attention"(%arg0, %arg1, %arg2) {causal = true, kv_heads = 4 : i64, layout = "BTNH", operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0>, q_heads = 4 : i64, scale = 1.250000e-01 : f32, window = array<i64: 31, 0>}
// SLIDING-WINDOW-F32-NOT: stablehlo.exponential

// RUN: flywheel-opt %S/../fixtures/attention_softcap_f32.mlir --flywheel-raise-attention | FileCheck %s --check-prefix=SOFTCAP-F32
// SOFTCAP-F32: "flywheel.attention"(%arg0, %arg1, %arg2) {causal = false, kv_heads = 4 : i64, layout = "BTNH", logit_soft_cap = 3.000000e+01 : f32, operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0>, q_heads = 4 : i64, scale = 1.250000e-01 : f32}
// SOFTCAP-F32-NOT: stablehlo.exponential

// RUN: flywheel-opt %S/../fixtures/attention_transformer_block_bf16.mlir --flywheel-raise-attention | FileCheck %s --check-prefix=TRANSFORMER-BLOCK-BF16
// TRANSFORMER-BLOCK-BF16: "flywheel.attention"(%67, %101, %32) {causal = true, kv_heads = 2 : i64, layout = "BTNH", operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0>, q_heads = 4 : i64, scale = 1.250000e-01 : f32}
// The block's other seven matmuls (Q/K/V/O projections, SwiGLU) stay; the attention's two
// are gone.
// RUN: flywheel-opt %S/../fixtures/attention_transformer_block_bf16.mlir --flywheel-raise-attention | grep -c '"stablehlo.dot_general"' | FileCheck %s --check-prefix=BLOCK-MATMULS
// BLOCK-MATMULS: {{^}}7{{$}}

