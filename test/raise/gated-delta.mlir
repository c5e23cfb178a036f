// flywheel-raise-gated-delta on JAX's Gated DeltaNet, per token (lax.scan -> while) and
// chunked (cumsum, decay matrix, K Kᵀ, triangular solve, WY, chunk scan): either becomes
// one flywheel.gated_delta on the layer's q, k, v, g, beta (the prelude that computes
// them stays), and programs that are not the gated delta rule are left alone with a
// remark. raise + lower-to-stablehlo is checked against the originals on the CPU
// plugin by the suite's pjrt::raise_roundtrip tests.

// f32: q arrives scaled by dk^-1/2 (a constant multiply), which becomes `scale`.
// RUN: flywheel-opt %S/../fixtures/gdn_recurrent_f32.mlir --flywheel-raise-gated-delta | FileCheck %s --check-prefix=F32
// F32: %[[R:.*]]:2 = "flywheel.gated_delta"(%{{.*}}, %{{.*}}, %arg{{[0-9]+}}, %{{.*}}, %{{.*}}) {chunk_size = 64 : i64, layout = "BTNH", precision = "DEFAULT", scale = 0.176776692 : f32} : (tensor<2x128x2x32xf32>, tensor<2x128x2x32xf32>, tensor<2x128x2x32xf32>, tensor<2x128x2xf32>, tensor<2x128x2xf32>) -> (tensor<2x128x2x32xf32>, tensor<2x2x32x32xf32>)
// F32-NEXT: "func.return"(%[[R]]#0, %[[R]]#1)
// F32-NOT: stablehlo.while
// F32-NOT: dynamic_index_in_dim

// The op records the precision the source's products asked for: the most precise of
// them (one product at HIGH makes the op HIGH; products written as multiplies, as in
// SPELLED below, make it HIGHEST), and the readout of the state with q apart where it
// asks otherwise (the f32 fixture's products: the prediction, the outer product, the
// readout).
// RUN: sed '0,/precision DEFAULT>, #stablehlo<precision DEFAULT/s//precision HIGH>, #stablehlo<precision DEFAULT/' %S/../fixtures/gdn_recurrent_f32.mlir | flywheel-opt --flywheel-raise-gated-delta | FileCheck %s --check-prefix=ONE-HIGH
// ONE-HIGH: "flywheel.gated_delta"({{.*}}) {chunk_size = 64 : i64, layout = "BTNH", precision = "HIGH", readout_precision = "DEFAULT", scale
// RUN: grep -n dot_general %S/../fixtures/gdn_recurrent_f32.mlir | sed -n 3p | cut -d: -f1 > %t.readout-line
// RUN: sed "$(cat %t.readout-line)s/precision DEFAULT/precision HIGHEST/g" %S/../fixtures/gdn_recurrent_f32.mlir | flywheel-opt --flywheel-raise-gated-delta | FileCheck %s --check-prefix=READOUT-HIGHEST
// READOUT-HIGHEST: "flywheel.gated_delta"({{.*}}) {chunk_size = 64 : i64, layout = "BTNH", precision = "DEFAULT", readout_precision = "HIGHEST", scale

// bf16: the scan runs on f32 copies (widening converts are part of the op's f32
// semantics) and the output is rounded back to bf16: the op takes bf16 q, k, v and returns bf16.
// RUN: flywheel-opt %S/../fixtures/gdn_recurrent_bf16.mlir --flywheel-raise-gated-delta=chunk-size=16 | FileCheck %s --check-prefix=BF16
// BF16: "flywheel.gated_delta"({{.*}}) {chunk_size = 16 : i64, layout = "BTNH", precision = "DEFAULT", scale = 1.000000e+00 : f32} : (tensor<2x128x2x32xbf16>, tensor<2x128x2x32xbf16>, tensor<2x128x2x32xbf16>, tensor<2x128x2xf32>, tensor<2x128x2xf32>) -> (tensor<2x128x2x32xbf16>, tensor<2x2x32x32xf32>)
// BF16-NOT: stablehlo.while

// The chunked form keeps its chunk length (16 here) whatever the option says; its
// precompute (solve, masks, decay matrix, cumsum) goes with the loop.
// RUN: flywheel-opt %S/../fixtures/gdn_chunked_f32.mlir --flywheel-raise-gated-delta=chunk-size=64 | FileCheck %s --check-prefix=CHUNKED
// CHUNKED: "flywheel.gated_delta"(%{{.*}}, %{{.*}}, %arg{{[0-9]+}}, %{{.*}}, %{{.*}}) {chunk_size = 16 : i64, layout = "BTNH", precision = "DEFAULT", scale = 0.176776692 : f32}
// CHUNKED-NOT: stablehlo.triangular_solve
// CHUNKED-NOT: stablehlo.reduce_window
// CHUNKED-NOT: stablehlo.while
// CHUNKED-NOT: sym_name = "cumsum

// Spelled as fla's reference writes it (test/Inputs/gdn_spelled.mlir, by hand): a fori
// index beside the scan's counter, wrapped as JAX wraps x[i]; inputs stepped along their
// second axis; prediction and readout as multiply + reduce, the update as a broadcast
// multiply; q_t scaled in the body; the row written by a scatter; an unbatched state.
// Raised with a batch of one in Q's own layout (BNTH: reshapes, no transposes) and the
// body's 0.5 as the scale; lowered back to StableHLO it computes what the original does.
// RUN: flywheel-opt %S/../Inputs/gdn_spelled.mlir --flywheel-raise-gated-delta | FileCheck %s --check-prefix=SPELLED
// SPELLED: %[[Q:.*]] = "stablehlo.reshape"(%arg0) : (tensor<2x8x4xf32>) -> tensor<1x2x8x4xf32>
// SPELLED: %[[R:.*]]:2 = "flywheel.gated_delta"(%[[Q]], {{.*}}) {chunk_size = 64 : i64, layout = "BNTH", precision = "HIGHEST", scale = 5.000000e-01 : f32}
// SPELLED-NEXT: %[[O:.*]] = "stablehlo.reshape"(%[[R]]#0) : (tensor<1x2x8x8xf32>) -> tensor<2x8x8xf32>
// SPELLED: "func.return"(%[[O]])
// SPELLED-NOT: stablehlo.while
// RUN: flywheel-opt %S/../Inputs/gdn_spelled.mlir --pass-pipeline='builtin.module(flywheel-raise-gated-delta,flywheel-lower-to-stablehlo)' -o %t.spelled.mlir
// RUN: flywheel check %S/../Inputs/gdn_spelled.mlir %t.spelled.mlir | FileCheck %s --check-prefix=CHECKED
// CHECKED: check: passed

// Its one-change near misses: the scatter accumulates (o.at[i].add), the wrap selects
// the wrong side (reads x[i + 8], clamped), the fori index steps by 8.
// RUN: sed 's|"stablehlo.return"(%new) : (tensor<f32>) -> ()|%acc = "stablehlo.add"(%old, %new) : (tensor<f32>, tensor<f32>) -> tensor<f32>\n "stablehlo.return"(%acc) : (tensor<f32>) -> ()|' %S/../Inputs/gdn_spelled.mlir \
// RUN:   | flywheel-opt --flywheel-raise-gated-delta=remarks=true 2>&1 | FileCheck %s --check-prefix=ACCUMULATES
// ACCUMULATES: remark: gated delta recurrence not raised: the loop does not write one output row per step
// ACCUMULATES-NOT: flywheel.gated_delta
// RUN: sed 's|(%negative, %wrapped, %j)|(%negative, %j, %wrapped)|' %S/../Inputs/gdn_spelled.mlir \
// RUN:   | flywheel-opt --flywheel-raise-gated-delta=remarks=true 2>&1 | FileCheck %s --check-prefix=NOT-THE-STEP
// NOT-THE-STEP: remark: gated delta recurrence not raised: the loop does not write one output row per step
// NOT-THE-STEP-NOT: flywheel.gated_delta
// RUN: sed 's|%j1 = "stablehlo.add"(%j, %c1)|%j1 = "stablehlo.add"(%j, %c8)|' %S/../Inputs/gdn_spelled.mlir \
// RUN:   | flywheel-opt --flywheel-raise-gated-delta=remarks=true 2>&1 | FileCheck %s --check-prefix=OTHER-PACE
// OTHER-PACE: remark: gated delta recurrence not raised: the loop carries more than a state and an output
// OTHER-PACE-NOT: flywheel.gated_delta

// Near misses (JAX programs with another step; test/fixtures/generate.py writes them): each
// keeps its loop, with a remark naming what differs.
// RUN: flywheel-opt %S/../Inputs/gdn_near_miss_no_delta.mlir --flywheel-raise-gated-delta=remarks=true 2>&1 | FileCheck %s --check-prefix=NO-DELTA
// NO-DELTA: remark: gated delta recurrence not raised: the update does not subtract the state's prediction (no delta rule)
// NO-DELTA-NOT: flywheel.gated_delta
// NO-DELTA: "stablehlo.while"
// RUN: flywheel-opt %S/../Inputs/gdn_near_miss_readout_first.mlir --flywheel-raise-gated-delta=remarks=true 2>&1 | FileCheck %s --check-prefix=READOUT-FIRST
// READOUT-FIRST: remark: gated delta recurrence not raised: the output row is not read from the updated state
// READOUT-FIRST-NOT: flywheel.gated_delta
// READOUT-FIRST: "stablehlo.while"
// RUN: flywheel-opt %S/../Inputs/gdn_near_miss_transposed_update.mlir --flywheel-raise-gated-delta=remarks=true 2>&1 | FileCheck %s --check-prefix=TRANSPOSED
// TRANSPOSED: remark: gated delta recurrence not raised: the state update is u kᵀ, transposed from the k uᵀ its reads assume
// TRANSPOSED-NOT: flywheel.gated_delta
// TRANSPOSED: "stablehlo.while"
// RUN: flywheel-opt %S/../Inputs/gdn_near_miss_ungated.mlir --flywheel-raise-gated-delta=remarks=true 2>&1 | FileCheck %s --check-prefix=UNGATED
// UNGATED: remark: gated delta recurrence not raised: the state is not decayed by exp(g) before the update
// UNGATED-NOT: flywheel.gated_delta
// UNGATED: "stablehlo.while"
// The prediction Sᵀ k read from the state before its decay. Were it raised, the lowered
// program would not compute the original: checked by running both.
// RUN: flywheel-opt %S/../Inputs/gdn_near_miss_undecayed_prediction.mlir --flywheel-raise-gated-delta=remarks=true 2>&1 | FileCheck %s --check-prefix=UNDECAYED
// UNDECAYED: remark: gated delta recurrence not raised: the prediction is not read from the decayed state
// UNDECAYED-NOT: flywheel.gated_delta
// UNDECAYED: "stablehlo.while"
// RUN: flywheel-opt %S/../Inputs/gdn_near_miss_undecayed_prediction.mlir --pass-pipeline='builtin.module(flywheel-normalize,flywheel-raise-gated-delta,flywheel-lower-to-stablehlo)' -o %t.undecayed.mlir
// RUN: flywheel check %S/../Inputs/gdn_near_miss_undecayed_prediction.mlir %t.undecayed.mlir > /dev/null

// RUN: flywheel-opt %S/../Inputs/gdn_near_miss_chunked_diagonal.mlir --flywheel-raise-gated-delta=remarks=true 2>&1 | FileCheck %s --check-prefix=CHUNKED-DIAGONAL
// CHUNKED-DIAGONAL: remark: gated delta recurrence not raised: chunked form: A is not masked to its strictly lower triangle
// CHUNKED-DIAGONAL-NOT: flywheel.gated_delta
// CHUNKED-DIAGONAL: "stablehlo.triangular_solve"

// MaxText's jax_chunk_gated_delta_rule (test/Inputs/real, translated from MaxText; its
// numerics are checked by test/tools/coverage.mlir): P computed in the chunk loop with
// masks before exp, U and W as two products of solve(I + S, I), the scan's chunk-first
// transposes, bf16 roundings in between (computed in f32), 200 tokens padded to 256.
// RUN: flywheel-opt %S/../Inputs/real/maxtext_chunk_padded_bf16.mlir --pass-pipeline='builtin.module(flywheel-normalize,flywheel-raise-gated-delta)' | FileCheck %s --check-prefix=MAXTEXT
// MAXTEXT: "flywheel.gated_delta"({{.*}}) {chunk_size = 64 : i64, layout = "BTNH", precision = "HIGHEST", scale = 1.000000e+00 : f32} : (tensor<2x256x4x64xbf16>, tensor<2x256x4x64xbf16>, tensor<2x256x4x64xbf16>, tensor<2x256x4xf32>, tensor<2x256x4xf32>) -> (tensor<2x256x4x64xf32>, tensor<2x4x64x64xf32>)
// MAXTEXT-NOT: stablehlo.while
// MAXTEXT-NOT: stablehlo.triangular_solve
// Its near misses: the in-loop P masked strictly (o_t misses its own token), the state
// not decayed between chunks.
// RUN: flywheel-opt %S/../Inputs/real/nm_maxtext_chunk_strict_intra_bf16.mlir --pass-pipeline='builtin.module(flywheel-normalize,flywheel-raise-gated-delta{remarks=true})' 2>&1 | FileCheck %s --check-prefix=STRICT-INTRA
// STRICT-INTRA: remark: gated delta recurrence not raised: chunked form: P is not masked to its lower triangle
// STRICT-INTRA-NOT: flywheel.gated_delta
// RUN: flywheel-opt %S/../Inputs/real/nm_maxtext_chunk_no_state_decay_bf16.mlir --pass-pipeline='builtin.module(flywheel-normalize,flywheel-raise-gated-delta{remarks=true})' 2>&1 | FileCheck %s --check-prefix=NO-STATE-DECAY
// NO-STATE-DECAY: remark: gated delta recurrence not raised: chunked form: the state is not decayed across the chunk
// NO-STATE-DECAY-NOT: flywheel.gated_delta

// torch's chunked form (transformers' torch_chunk_gated_delta_rule with a triangular
// solve, translated): P by masked_fill with a mask carried into the loop, the decay matrix
// computed before the loop and sliced per chunk, β applied to the tokens before the chunk
// split, the solve's matrix written I - (-A).
// RUN: flywheel-opt %S/../Inputs/real/hf_chunk_triangular_solve_f32.mlir --pass-pipeline='builtin.module(flywheel-normalize,flywheel-raise-gated-delta{remarks=true})' 2>&1 | FileCheck %s --check-prefix=TORCH-CHUNKED
// TORCH-CHUNKED: remark: raised to flywheel.gated_delta
// TORCH-CHUNKED: "flywheel.gated_delta"({{.*}}) {chunk_size = 64 : i64, layout = "BNTH", precision = "DEFAULT", scale = 1.250000e-01 : f32}
// TORCH-CHUNKED-NOT: stablehlo.while
// TORCH-CHUNKED-NOT: stablehlo.triangular_solve

// The same with the inverse as torch writes it, row by row (63 in-place row updates,
// each checked at its row), and the chunks in lax.scan.
// RUN: flywheel-opt %S/../Inputs/real/hf_chunk_scan_f32.mlir --pass-pipeline='builtin.module(flywheel-normalize,flywheel-raise-gated-delta)' | FileCheck %s --check-prefix=TORCH-ROWS
// TORCH-ROWS: "flywheel.gated_delta"({{.*}}) {chunk_size = 64 : i64, layout = "BNTH", precision = "HIGHEST", readout_precision = "DEFAULT", scale = 1.250000e-01 : f32}
// TORCH-ROWS-NOT: stablehlo.while
// TORCH-ROWS-NOT: stablehlo.scatter
// Near miss: row 1's update written into row 2 (line 126 holds that step's row index).
// RUN: sed '126s/dense<1> : tensor<i32>/dense<2> : tensor<i32>/' %S/../Inputs/real/hf_chunk_scan_f32.mlir \
// RUN:   | flywheel-opt --pass-pipeline='builtin.module(flywheel-normalize,flywheel-raise-gated-delta{remarks=true})' 2>&1 | FileCheck %s --check-prefix=WRONG-ROW
// WRONG-ROW: remark: gated delta recurrence not raised: chunked form: U and W do not come from a triangular solve or a row-by-row inverse
// WRONG-ROW-NOT: flywheel.gated_delta

// MaxText's naive chunked rule: the inverse row by row in a fori_loop over i = 1 .. 63,
// each step masked by `indices < i` (the masks evaluated at every i), and -A written as
// where(mask, 0, -(β K Kᵀ) * D) (the negation inside the product).
// RUN: flywheel-opt %S/../Inputs/real/maxtext_naive_chunk_fori_f32.mlir --pass-pipeline='builtin.module(flywheel-normalize,flywheel-raise-gated-delta)' | FileCheck %s --check-prefix=FORI-ROWS
// FORI-ROWS: "flywheel.gated_delta"({{.*}}) {chunk_size = 64 : i64, layout = "BTNH", precision = "HIGHEST", scale = 1.250000e-01 : f32}
// FORI-ROWS-NOT: stablehlo.while
// FORI-ROWS-NOT: stablehlo.scatter
// Near miss: the row's sum subtracted (row - (row[..., None] * sub).sum(-2)).
// RUN: sed 's|%298 = "stablehlo.add"|%298 = "stablehlo.subtract"|' %S/../Inputs/real/maxtext_naive_chunk_fori_f32.mlir \
// RUN:   | flywheel-opt --pass-pipeline='builtin.module(flywheel-normalize,flywheel-raise-gated-delta{remarks=true})' 2>&1 | FileCheck %s --check-prefix=FORI-SUBTRACTS
// FORI-SUBTRACTS: remark: gated delta recurrence not raised: chunked form: U and W do not come from a triangular solve or a row-by-row inverse
// FORI-SUBTRACTS-NOT: flywheel.gated_delta
// Near miss: the sub-matrix's rows masked by `indices > i` (line 165).
// RUN: sed '165s/comparison_direction LT/comparison_direction GT/' %S/../Inputs/real/maxtext_naive_chunk_fori_f32.mlir \
// RUN:   | flywheel-opt --pass-pipeline='builtin.module(flywheel-normalize,flywheel-raise-gated-delta{remarks=true})' 2>&1 | FileCheck %s --check-prefix=FORI-LATER-ROWS
// FORI-LATER-ROWS: remark: gated delta recurrence not raised: chunked form: U and W do not come from a triangular solve or a row-by-row inverse
// FORI-LATER-ROWS-NOT: flywheel.gated_delta
// Near miss: A's sign flipped (the negation of β K Kᵀ on line 100 made a no-op convert).
// RUN: sed '100s/"stablehlo.negate"/"stablehlo.convert"/' %S/../Inputs/real/maxtext_naive_chunk_fori_f32.mlir \
// RUN:   | flywheel-opt --pass-pipeline='builtin.module(flywheel-normalize,flywheel-raise-gated-delta{remarks=true})' 2>&1 | FileCheck %s --check-prefix=FORI-SIGN
// FORI-SIGN: remark: gated delta recurrence not raised: chunked form: A has the wrong sign
// FORI-SIGN-NOT: flywheel.gated_delta

// A Python loop over tokens that tracing unrolled (hand-written, three steps): rolled
// back into a loop, raised, and the lowered program checks against the source.
// RUN: flywheel-opt %S/../Inputs/gdn_unrolled.mlir --flywheel-raise-gated-delta=remarks=true 2>&1 | FileCheck %s --check-prefix=UNROLLED
// UNROLLED: remark: raised to flywheel.gated_delta (a Python loop, unrolled by tracing)
// UNROLLED: "flywheel.gated_delta"({{.*}}) {chunk_size = 64 : i64, layout = "BNTH", precision = "HIGHEST", scale = 1.000000e+00 : f32}
// UNROLLED-NOT: stablehlo.scatter
// UNROLLED-NOT: stablehlo.while
// RUN: flywheel-opt %S/../Inputs/gdn_unrolled.mlir --pass-pipeline='builtin.module(flywheel-raise-gated-delta,flywheel-lower-to-stablehlo)' -o %t.unrolled.mlir
// RUN: flywheel check %S/../Inputs/gdn_unrolled.mlir %t.unrolled.mlir | FileCheck %s --check-prefix=CHECKED
// Near miss: step 1 reads k at token 2 (line 54), so the steps are not one loop: left
// alone, its three writes kept and no loop left behind.
// RUN: sed '54s/limit_indices = array<i64: 2, 2, 4>, start_indices = array<i64: 0, 1, 0>/limit_indices = array<i64: 2, 3, 4>, start_indices = array<i64: 0, 2, 0>/' %S/../Inputs/gdn_unrolled.mlir \
// RUN:   | flywheel-opt --flywheel-raise-gated-delta=remarks=true 2>&1 | FileCheck %s --check-prefix=UNROLLED-OTHER-TOKEN
// UNROLLED-OTHER-TOKEN-NOT: remark
// UNROLLED-OTHER-TOKEN-COUNT-3: "stablehlo.scatter"
// UNROLLED-OTHER-TOKEN-NOT: flywheel.gated_delta
// UNROLLED-OTHER-TOKEN-NOT: stablehlo.while
// Near miss: steps 1 and 2 write each other's rows (lines 86 and 126).
// RUN: sed -e '86s/dense<1>/dense<2>/' -e '126s/dense<2>/dense<1>/' %S/../Inputs/gdn_unrolled.mlir \
// RUN:   | flywheel-opt --flywheel-raise-gated-delta=remarks=true 2>&1 | FileCheck %s --check-prefix=UNROLLED-SWAPPED
// UNROLLED-SWAPPED-NOT: remark
// UNROLLED-SWAPPED-NOT: flywheel.gated_delta
// UNROLLED-SWAPPED-NOT: stablehlo.while
// Near miss: the last step adds the decay instead of multiplying by it (line 104).
// RUN: sed '104s/multiply/add/' %S/../Inputs/gdn_unrolled.mlir \
// RUN:   | flywheel-opt --flywheel-raise-gated-delta=remarks=true 2>&1 | FileCheck %s --check-prefix=UNROLLED-LAST-ADDS
// UNROLLED-LAST-ADDS-NOT: remark
// UNROLLED-LAST-ADDS-NOT: flywheel.gated_delta
// UNROLLED-LAST-ADDS-NOT: stablehlo.while
// Near miss, from transformers' reference (64 tokens unrolled): the decay applied after
// the delta update in every step is one loop, but not the rule: rolled, refused, and
// unrolled again.
// RUN: flywheel-opt %S/../Inputs/real/nm_hf_recurrent_decay_after_update_f32.mlir --pass-pipeline='builtin.module(flywheel-normalize,flywheel-raise-gated-delta{remarks=true})' 2>&1 | FileCheck %s --check-prefix=UNROLLED-DECAY-AFTER
// UNROLLED-DECAY-AFTER: remark: gated delta recurrence not raised (a Python loop, unrolled by tracing): the state update is not S + k uᵀ
// UNROLLED-DECAY-AFTER-NOT: flywheel.gated_delta
// UNROLLED-DECAY-AFTER-NOT: stablehlo.while
// Near miss: one middle step of the 64 (token 4, line 269) reads k at token 5.
// RUN: sed '269s/limit_indices = array<i64: 2, 4, 5, 64>, start_indices = array<i64: 0, 0, 4, 0>/limit_indices = array<i64: 2, 4, 6, 64>, start_indices = array<i64: 0, 0, 5, 0>/' %S/../Inputs/real/hf_recurrent_python_loop_f32.mlir \
// RUN:   | flywheel-opt --pass-pipeline='builtin.module(flywheel-normalize,flywheel-raise-gated-delta{remarks=true})' 2>&1 | FileCheck %s --check-prefix=UNROLLED-ONE-STEP
// UNROLLED-ONE-STEP-NOT: remark
// UNROLLED-ONE-STEP-NOT: flywheel.gated_delta
// UNROLLED-ONE-STEP-NOT: stablehlo.while

// Attention is not a recurrence: nothing to say, nothing changed.
// RUN: flywheel-opt %S/../fixtures/attention_mha_f32.mlir --flywheel-raise-gated-delta=remarks=true 2>&1 | FileCheck %s --check-prefix=ATTENTION
// ATTENTION-NOT: remark
// ATTENTION: "stablehlo.dot_general"

// Diagnostics: a chunk size that is not a power of two.
// RUN: not flywheel-opt %S/../fixtures/gdn_recurrent_f32.mlir --flywheel-raise-gated-delta=chunk-size=48 2>&1 | FileCheck %s --check-prefix=CHUNK
// CHUNK: error: flywheel-raise-gated-delta: chunk-size must be a power of two, got 48

// Gates in the model dtype (Qwen3-Next computes beta = sigmoid(b) in bf16): raised with g
// and beta widened to f32, which flywheel.gated_delta takes; the whole chain then compiles
// its kernel, and the result is at least as accurate as the source against the source
// computed in f32 (the source rounds the recurrence's products to bf16).
// RUN: flywheel-opt %S/../Inputs/gdn_bf16_gates.mlir --flywheel-raise-gated-delta | FileCheck %s --check-prefix=BF16-GATES
// BF16-GATES: %[[G:.*]] = "stablehlo.convert"(%{{.*}}) : (tensor<2x128x2xbf16>) -> tensor<2x128x2xf32>
// BF16-GATES: %[[BETA:.*]] = "stablehlo.convert"(%{{.*}}) : (tensor<2x128x2xbf16>) -> tensor<2x128x2xf32>
// BF16-GATES: "flywheel.gated_delta"(%{{.*}}, %{{.*}}, %{{.*}}, %[[G]], %[[BETA]])
// RUN: flywheel-opt %S/../Inputs/gdn_bf16_gates.mlir --flywheel-tpu=target=v6e -o %t.bf16-gates.mlir
// RUN: %python %S/../fixtures/coverage.py --accuracy %S/../Inputs/gdn_bf16_gates.mlir %t.bf16-gates.mlir | FileCheck %s --check-prefix=BF16-GATES-ACCURACY
// BF16-GATES-ACCURACY: accuracy: at least as accurate as the original
