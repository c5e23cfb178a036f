// Every check of the flywheel dialect's verifiers (IRDL structure and the Rust-side
// semantics), each reported at the op's location.
// RUN: flywheel-opt %s --split-input-file --verify-diagnostics

func.func @missing_causal(%q: tensor<1x16x2x8xf32>) -> tensor<1x16x2x8xf32> {
  // expected-error@+1 {{attribute "causal" is expected but not provided}}
  %o = "flywheel.attention"(%q, %q, %q) {operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0>, scale = 0.5 : f32, layout = "BTNH", q_heads = 2, kv_heads = 2} : (tensor<1x16x2x8xf32>, tensor<1x16x2x8xf32>, tensor<1x16x2x8xf32>) -> tensor<1x16x2x8xf32>
  return %o : tensor<1x16x2x8xf32>
}

// -----

func.func @segment_sizes(%q: tensor<1x16x2x8xf32>) -> tensor<1x16x2x8xf32> {
  // expected-error@+1 {{'operandSegmentSizes' attribute for specifying operand segments must have 7 elements}}
  %o = "flywheel.attention"(%q, %q, %q) {operandSegmentSizes = array<i32: 1, 1, 1>, scale = 0.5 : f32, causal = false, layout = "BTNH", q_heads = 2, kv_heads = 2} : (tensor<1x16x2x8xf32>, tensor<1x16x2x8xf32>, tensor<1x16x2x8xf32>) -> tensor<1x16x2x8xf32>
  return %o : tensor<1x16x2x8xf32>
}

// -----

func.func @bad_layout(%q: tensor<1x16x2x8xf32>) -> tensor<1x16x2x8xf32> {
  // expected-error@+1 {{attribute 'layout' must be a permutation of "BTNH", got "BTNX"}}
  %o = "flywheel.attention"(%q, %q, %q) {operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0>, scale = 0.5 : f32, causal = false, layout = "BTNX", q_heads = 2, kv_heads = 2} : (tensor<1x16x2x8xf32>, tensor<1x16x2x8xf32>, tensor<1x16x2x8xf32>) -> tensor<1x16x2x8xf32>
  return %o : tensor<1x16x2x8xf32>
}

// -----

// An empty string (once a panic inside melior, which reads strings as NUL-terminated).
func.func @empty_layout(%q: tensor<1x16x2x8xf32>) -> tensor<1x16x2x8xf32> {
  // expected-error@+1 {{attribute 'layout' must be a permutation of "BTNH", got ""}}
  %o = "flywheel.attention"(%q, %q, %q) {operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0>, scale = 0.5 : f32, causal = false, layout = "", q_heads = 2, kv_heads = 2} : (tensor<1x16x2x8xf32>, tensor<1x16x2x8xf32>, tensor<1x16x2x8xf32>) -> tensor<1x16x2x8xf32>
  return %o : tensor<1x16x2x8xf32>
}

// -----

func.func @causal_not_bool(%q: tensor<1x16x2x8xf32>) -> tensor<1x16x2x8xf32> {
  // expected-error@+1 {{attribute 'causal' must be a bool}}
  %o = "flywheel.attention"(%q, %q, %q) {operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0>, scale = 0.5 : f32, causal = 1 : i64, layout = "BTNH", q_heads = 2, kv_heads = 2} : (tensor<1x16x2x8xf32>, tensor<1x16x2x8xf32>, tensor<1x16x2x8xf32>) -> tensor<1x16x2x8xf32>
  return %o : tensor<1x16x2x8xf32>
}

// -----

func.func @infinite_scale(%q: tensor<1x16x2x8xf32>) -> tensor<1x16x2x8xf32> {
  // expected-error@+1 {{attribute 'scale' must be finite}}
  %o = "flywheel.attention"(%q, %q, %q) {operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0>, scale = 0x7F800000 : f32, causal = false, layout = "BTNH", q_heads = 2, kv_heads = 2} : (tensor<1x16x2x8xf32>, tensor<1x16x2x8xf32>, tensor<1x16x2x8xf32>) -> tensor<1x16x2x8xf32>
  return %o : tensor<1x16x2x8xf32>
}

// -----

func.func @rank3_q(%q: tensor<16x2x8xf32>, %k: tensor<1x16x2x8xf32>) -> tensor<1x16x2x8xf32> {
  // expected-error@+1 {{operand 'q' must be 4-D in layout BTNH, got rank 3}}
  %o = "flywheel.attention"(%q, %k, %k) {operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0>, scale = 0.5 : f32, causal = false, layout = "BTNH", q_heads = 2, kv_heads = 2} : (tensor<16x2x8xf32>, tensor<1x16x2x8xf32>, tensor<1x16x2x8xf32>) -> tensor<1x16x2x8xf32>
  return %o : tensor<1x16x2x8xf32>
}

// -----

func.func @integer_q(%q: tensor<1x16x2x8xi32>, %k: tensor<1x16x2x8xf32>) -> tensor<1x16x2x8xf32> {
  // expected-error@+1 {{operand 'q' must have a float element type, got i32}}
  %o = "flywheel.attention"(%q, %k, %k) {operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0>, scale = 0.5 : f32, causal = false, layout = "BTNH", q_heads = 2, kv_heads = 2} : (tensor<1x16x2x8xi32>, tensor<1x16x2x8xf32>, tensor<1x16x2x8xf32>) -> tensor<1x16x2x8xf32>
  return %o : tensor<1x16x2x8xf32>
}

// -----

func.func @head_dim_mismatch(%q: tensor<1x16x2x8xf32>, %k: tensor<1x16x2x16xf32>) -> tensor<1x16x2x8xf32> {
  // expected-error@+1 {{head dims of q and k disagree: 8 vs 16}}
  %o = "flywheel.attention"(%q, %k, %q) {operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0>, scale = 0.5 : f32, causal = false, layout = "BTNH", q_heads = 2, kv_heads = 2} : (tensor<1x16x2x8xf32>, tensor<1x16x2x16xf32>, tensor<1x16x2x8xf32>) -> tensor<1x16x2x8xf32>
  return %o : tensor<1x16x2x8xf32>
}

// -----

func.func @kv_length_mismatch(%q: tensor<1x16x2x8xf32>, %v: tensor<1x32x2x8xf32>) -> tensor<1x16x2x8xf32> {
  // expected-error@+1 {{sequence lengths of k and v disagree: 16 vs 32}}
  %o = "flywheel.attention"(%q, %q, %v) {operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0>, scale = 0.5 : f32, causal = false, layout = "BTNH", q_heads = 2, kv_heads = 2} : (tensor<1x16x2x8xf32>, tensor<1x16x2x8xf32>, tensor<1x32x2x8xf32>) -> tensor<1x16x2x8xf32>
  return %o : tensor<1x16x2x8xf32>
}

// -----

func.func @result_head_dim(%q: tensor<1x16x2x8xf32>) -> tensor<1x16x2x4xf32> {
  // expected-error@+1 {{head dims of v and the result disagree: 8 vs 4}}
  %o = "flywheel.attention"(%q, %q, %q) {operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0>, scale = 0.5 : f32, causal = false, layout = "BTNH", q_heads = 2, kv_heads = 2} : (tensor<1x16x2x8xf32>, tensor<1x16x2x8xf32>, tensor<1x16x2x8xf32>) -> tensor<1x16x2x4xf32>
  return %o : tensor<1x16x2x4xf32>
}

// -----

func.func @q_heads_attribute(%q: tensor<1x16x2x8xf32>) -> tensor<1x16x2x8xf32> {
  // expected-error@+1 {{'q_heads' and the heads axis of q disagree: 4 vs 2}}
  %o = "flywheel.attention"(%q, %q, %q) {operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0>, scale = 0.5 : f32, causal = false, layout = "BTNH", q_heads = 4, kv_heads = 2} : (tensor<1x16x2x8xf32>, tensor<1x16x2x8xf32>, tensor<1x16x2x8xf32>) -> tensor<1x16x2x8xf32>
  return %o : tensor<1x16x2x8xf32>
}

// -----

func.func @kv_heads_divide(%q: tensor<1x16x6x8xf32>, %k: tensor<1x16x4x8xf32>) -> tensor<1x16x6x8xf32> {
  // expected-error@+1 {{kv heads (4) must divide q heads (6)}}
  %o = "flywheel.attention"(%q, %k, %k) {operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0>, scale = 0.5 : f32, causal = false, layout = "BTNH", q_heads = 6, kv_heads = 4} : (tensor<1x16x6x8xf32>, tensor<1x16x4x8xf32>, tensor<1x16x4x8xf32>) -> tensor<1x16x6x8xf32>
  return %o : tensor<1x16x6x8xf32>
}

// -----

func.func @mask_not_bool(%q: tensor<1x16x2x8xf32>, %m: tensor<1x1x16x16xf32>) -> tensor<1x16x2x8xf32> {
  // expected-error@+1 {{operand 'mask' must have element type i1, got f32}}
  %o = "flywheel.attention"(%q, %q, %q, %m) {operandSegmentSizes = array<i32: 1, 1, 1, 1, 0, 0, 0>, scale = 0.5 : f32, causal = false, layout = "BTNH", q_heads = 2, kv_heads = 2} : (tensor<1x16x2x8xf32>, tensor<1x16x2x8xf32>, tensor<1x16x2x8xf32>, tensor<1x1x16x16xf32>) -> tensor<1x16x2x8xf32>
  return %o : tensor<1x16x2x8xf32>
}

// -----

func.func @bias_key_length(%q: tensor<1x16x2x8xf32>, %b: tensor<1x2x16x8xf32>) -> tensor<1x16x2x8xf32> {
  // expected-error@+1 {{key length of 'bias' and of the scores disagree: 8 vs 16}}
  %o = "flywheel.attention"(%q, %q, %q, %b) {operandSegmentSizes = array<i32: 1, 1, 1, 0, 1, 0, 0>, scale = 0.5 : f32, causal = false, layout = "BTNH", q_heads = 2, kv_heads = 2} : (tensor<1x16x2x8xf32>, tensor<1x16x2x8xf32>, tensor<1x16x2x8xf32>, tensor<1x2x16x8xf32>) -> tensor<1x16x2x8xf32>
  return %o : tensor<1x16x2x8xf32>
}

// -----

func.func @one_segment_ids(%q: tensor<1x16x2x8xf32>, %s: tensor<1x16xi32>) -> tensor<1x16x2x8xf32> {
  // expected-error@+1 {{requires both 'q_segment_ids' and 'kv_segment_ids', or neither}}
  %o = "flywheel.attention"(%q, %q, %q, %s) {operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 1, 0>, scale = 0.5 : f32, causal = false, layout = "BTNH", q_heads = 2, kv_heads = 2} : (tensor<1x16x2x8xf32>, tensor<1x16x2x8xf32>, tensor<1x16x2x8xf32>, tensor<1x16xi32>) -> tensor<1x16x2x8xf32>
  return %o : tensor<1x16x2x8xf32>
}

// -----

func.func @negative_window(%q: tensor<1x16x2x8xf32>) -> tensor<1x16x2x8xf32> {
  // expected-error@+1 {{attribute 'window' must be non-negative, got [-1, 0]}}
  %o = "flywheel.attention"(%q, %q, %q) {operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0>, scale = 0.5 : f32, causal = false, layout = "BTNH", q_heads = 2, kv_heads = 2, window = array<i64: -1, 0>} : (tensor<1x16x2x8xf32>, tensor<1x16x2x8xf32>, tensor<1x16x2x8xf32>) -> tensor<1x16x2x8xf32>
  return %o : tensor<1x16x2x8xf32>
}

// -----

func.func @window_shape(%q: tensor<1x16x2x8xf32>) -> tensor<1x16x2x8xf32> {
  // expected-error@+1 {{attribute 'window' must be array<i64: left, right>}}
  %o = "flywheel.attention"(%q, %q, %q) {operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0>, scale = 0.5 : f32, causal = false, layout = "BTNH", q_heads = 2, kv_heads = 2, window = array<i64: 4>} : (tensor<1x16x2x8xf32>, tensor<1x16x2x8xf32>, tensor<1x16x2x8xf32>) -> tensor<1x16x2x8xf32>
  return %o : tensor<1x16x2x8xf32>
}

// -----

func.func @soft_cap(%q: tensor<1x16x2x8xf32>) -> tensor<1x16x2x8xf32> {
  // expected-error@+1 {{attribute 'logit_soft_cap' must be positive, got 0}}
  %o = "flywheel.attention"(%q, %q, %q) {operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0>, scale = 0.5 : f32, causal = false, layout = "BTNH", q_heads = 2, kv_heads = 2, logit_soft_cap = 0.0 : f32} : (tensor<1x16x2x8xf32>, tensor<1x16x2x8xf32>, tensor<1x16x2x8xf32>) -> tensor<1x16x2x8xf32>
  return %o : tensor<1x16x2x8xf32>
}

// -----

func.func @gd_chunk(%q: tensor<1x64x2x8xf32>, %g: tensor<1x64x2xf32>) -> (tensor<1x64x2x8xf32>, tensor<1x2x8x8xf32>) {
  // expected-error@+1 {{attribute 'chunk_size' must be a power of two, got 48}}
  %o:2 = "flywheel.gated_delta"(%q, %q, %q, %g, %g) {scale = 1.0 : f32, chunk_size = 48, layout = "BTNH"} : (tensor<1x64x2x8xf32>, tensor<1x64x2x8xf32>, tensor<1x64x2x8xf32>, tensor<1x64x2xf32>, tensor<1x64x2xf32>) -> (tensor<1x64x2x8xf32>, tensor<1x2x8x8xf32>)
  return %o#0, %o#1 : tensor<1x64x2x8xf32>, tensor<1x2x8x8xf32>
}

// -----

func.func @gd_precision(%q: tensor<1x64x2x8xf32>, %g: tensor<1x64x2xf32>) -> (tensor<1x64x2x8xf32>, tensor<1x2x8x8xf32>) {
  // expected-error@+1 {{attribute 'precision' must be "DEFAULT", "HIGH" or "HIGHEST", got "default"}}
  %o:2 = "flywheel.gated_delta"(%q, %q, %q, %g, %g) {scale = 1.0 : f32, chunk_size = 64, layout = "BTNH", precision = "default"} : (tensor<1x64x2x8xf32>, tensor<1x64x2x8xf32>, tensor<1x64x2x8xf32>, tensor<1x64x2xf32>, tensor<1x64x2xf32>) -> (tensor<1x64x2x8xf32>, tensor<1x2x8x8xf32>)
  return %o#0, %o#1 : tensor<1x64x2x8xf32>, tensor<1x2x8x8xf32>
}

// -----

func.func @gd_gate_dtype(%q: tensor<1x64x2x8xf32>, %g: tensor<1x64x2xbf16>) -> (tensor<1x64x2x8xf32>, tensor<1x2x8x8xf32>) {
  // expected-error@+1 {{operand 'g' must be a 3-D f32 tensor, got tensor<1x64x2xbf16>}}
  %o:2 = "flywheel.gated_delta"(%q, %q, %q, %g, %g) {scale = 1.0 : f32, chunk_size = 64, layout = "BTNH"} : (tensor<1x64x2x8xf32>, tensor<1x64x2x8xf32>, tensor<1x64x2x8xf32>, tensor<1x64x2xbf16>, tensor<1x64x2xbf16>) -> (tensor<1x64x2x8xf32>, tensor<1x2x8x8xf32>)
  return %o#0, %o#1 : tensor<1x64x2x8xf32>, tensor<1x2x8x8xf32>
}

// -----

func.func @gd_gate_layout(%q: tensor<1x64x2x8xf32>, %g: tensor<1x2x64xf32>) -> (tensor<1x64x2x8xf32>, tensor<1x2x8x8xf32>) {
  // expected-error@+1 {{'g' and v along Sequence disagree: 2 vs 64}}
  %o:2 = "flywheel.gated_delta"(%q, %q, %q, %g, %g) {scale = 1.0 : f32, chunk_size = 64, layout = "BTNH"} : (tensor<1x64x2x8xf32>, tensor<1x64x2x8xf32>, tensor<1x64x2x8xf32>, tensor<1x2x64xf32>, tensor<1x2x64xf32>) -> (tensor<1x64x2x8xf32>, tensor<1x2x8x8xf32>)
  return %o#0, %o#1 : tensor<1x64x2x8xf32>, tensor<1x2x8x8xf32>
}

// -----

func.func @gd_heads(%q: tensor<1x64x2x8xf32>, %v: tensor<1x64x3x8xf32>, %g: tensor<1x64x3xf32>) -> (tensor<1x64x3x8xf32>, tensor<1x3x8x8xf32>) {
  // expected-error@+1 {{q/k heads (2) must divide v heads (3)}}
  %o:2 = "flywheel.gated_delta"(%q, %q, %v, %g, %g) {scale = 1.0 : f32, chunk_size = 64, layout = "BTNH"} : (tensor<1x64x2x8xf32>, tensor<1x64x2x8xf32>, tensor<1x64x3x8xf32>, tensor<1x64x3xf32>, tensor<1x64x3xf32>) -> (tensor<1x64x3x8xf32>, tensor<1x3x8x8xf32>)
  return %o#0, %o#1 : tensor<1x64x3x8xf32>, tensor<1x3x8x8xf32>
}

// -----

func.func @gd_state(%q: tensor<1x64x2x8xf32>, %g: tensor<1x64x2xf32>, %s: tensor<1x2x8x4xf32>) -> (tensor<1x64x2x8xf32>, tensor<1x2x8x8xf32>) {
  // expected-error@+1 {{shape of 'initial_state' and [B, Nv, Dk, Dv] disagree: 4 vs 8}}
  %o:2 = "flywheel.gated_delta"(%q, %q, %q, %g, %g, %s) {scale = 1.0 : f32, chunk_size = 64, layout = "BTNH"} : (tensor<1x64x2x8xf32>, tensor<1x64x2x8xf32>, tensor<1x64x2x8xf32>, tensor<1x64x2xf32>, tensor<1x64x2xf32>, tensor<1x2x8x4xf32>) -> (tensor<1x64x2x8xf32>, tensor<1x2x8x8xf32>)
  return %o#0, %o#1 : tensor<1x64x2x8xf32>, tensor<1x2x8x8xf32>
}
