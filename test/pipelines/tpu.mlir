// flywheel-tpu: the whole chain for a target, as a flag or inside --pass-pipeline.

// Profitability: at 128 tokens XLA's fused attention beats the kernel, so by default a
// decoder block keeps XLA's ops, with a remark saying why; at 512 tokens and head dim 128
// (an encoder) the kernel wins on both measured targets and replaces them.
// RUN: flywheel-opt %S/../fixtures/attention_transformer_block_bf16.mlir '--flywheel-tpu=target=v6e remarks=true' -o %t.kept.mlir 2>&1 | FileCheck %s --check-prefix=KEPT
// KEPT: remark: attention kept as XLA's ops (128 queries x 128 keys at head dim 64 in bf16: the kernel beats XLA on v6e only from 1024 tokens)
// KEPT-NOT: raised to flywheel.attention
// RUN: FileCheck %s --check-prefix=NO-KERNEL < %t.kept.mlir
// NO-KERNEL-NOT: tpu_custom_call
// NO-KERNEL-NOT: flywheel.
// RUN: flywheel check %S/../fixtures/attention_transformer_block_bf16.mlir %t.kept.mlir | FileCheck %s --check-prefix=CHECKED
// A mask operand has its own crossover (none on v6e at head dim 64), an f32 attention none.
// RUN: flywheel-opt %S/../fixtures/attention_dpa_mask_bf16.mlir '--flywheel-tpu=target=v6e remarks=true' -o /dev/null 2>&1 | FileCheck %s --check-prefix=KEPT-MASKED
// KEPT-MASKED: remark: attention kept as XLA's ops (128 queries x 128 keys at head dim 64 in bf16, masked: no measured length has the kernel beat XLA on v6e)
// RUN: flywheel-opt %S/../fixtures/attention_mha_f32.mlir '--flywheel-tpu=target=tpu7x remarks=true' -o /dev/null 2>&1 | FileCheck %s --check-prefix=KEPT-F32
// KEPT-F32: remark: attention kept as XLA's ops (128 queries x 128 keys at head dim 64 in f32: no measured length has the kernel beat XLA on tpu7x)
// RUN: flywheel-opt %S/../fixtures/attention_encoder_bf16.mlir '--flywheel-tpu=target=v6e remarks=true' -o %t.encoder.mlir 2>&1 | FileCheck %s --check-prefix=REPLACED-V6E
// REPLACED-V6E: remark: raised to flywheel.attention ({{.*}}; kernel: 512 queries x 512 keys at head dim 128 in bf16: the kernel beats XLA on v6e from 512 tokens)
// RUN: flywheel-opt %S/../fixtures/attention_encoder_bf16.mlir '--flywheel-tpu=target=tpu7x remarks=true' -o %t.encoder.tpu7x.mlir 2>&1 | FileCheck %s --check-prefix=REPLACED-TPU7X
// REPLACED-TPU7X: remark: raised to flywheel.attention ({{.*}}; kernel: 512 queries x 512 keys at head dim 128 in bf16: the kernel beats XLA on tpu7x from 512 tokens)

// profitability=off forces the kernel: the decoder block's attention becomes a Mosaic
// kernel, the rest stays; the result compiles for every target.
// RUN: flywheel-opt %S/../fixtures/attention_transformer_block_bf16.mlir '--flywheel-tpu=target=v6e remarks=true profitability=off' -o %t.block.mlir 2>&1 | FileCheck %s --check-prefix=BLOCK
// BLOCK: remark: raised to flywheel.attention (layout BTNH, 4 query / 2 key-value heads, scale 0.125, causal)
// BLOCK: remark: tiled into a Mosaic kernel (grid 2x2x1x1, query group 2, blocks 128x128, {{.*}})
// RUN: FileCheck %s --check-prefix=KERNEL < %t.block.mlir
// KERNEL: call_target_name = "tpu_custom_call"
// KERNEL-NOT: flywheel.
// RUN: flywheel compile --target v6e %t.block.mlir 2>/dev/null | FileCheck %s --check-prefix=COMPILE
// RUN: flywheel-opt %S/../fixtures/attention_transformer_block_bf16.mlir --pass-pipeline='builtin.module(flywheel-tpu{target=v5e profitability=off})' -o %t.v5e.mlir
// RUN: flywheel compile --target v5e %t.v5e.mlir 2>/dev/null | FileCheck %s --check-prefix=COMPILE
// RUN: flywheel-opt %S/../fixtures/attention_transformer_block_bf16.mlir --pass-pipeline='builtin.module(flywheel-tpu{target=tpu7x profitability=off})' -o %t.tpu7x.mlir
// RUN: flywheel compile --target tpu7x %t.tpu7x.mlir 2>/dev/null | FileCheck %s --check-prefix=COMPILE
// COMPILE: compiled

// Attention without a band at head dim 128 takes the transposed orientation with the
// lagged max on v6e and tpu7x (v5e keeps the standard one), its lagged steps stabilized
// by the running sum (no max reduced); it compiles and matches the reference lowering on
// the CPU plugin.
// RUN: flywheel-opt %S/../Inputs/attention-bnth-bf16.mlir '--flywheel-tpu=target=v6e remarks=true' -o %t.transposed.mlir 2>&1 | FileCheck %s --check-prefix=TRANSPOSED
// RUN: flywheel-opt %S/../Inputs/attention-bnth-bf16.mlir '--flywheel-tpu=target=tpu7x remarks=true' -o %t.transposed.tpu7x.mlir 2>&1 | FileCheck %s --check-prefix=TRANSPOSED
// TRANSPOSED: remark: layouts: transposed orientation
// TRANSPOSED: remark: @flywheel_kernel_0: {{.*}}; {{[0-9]+}} step(s) exponentiated by their incoming max, redone when a row's max rises by more than 64, their max m₀ + log(l) (no max reduced; a first step shifts by 0; redone also when l < 2^-limit)
// RUN: flywheel compile --target v6e %t.transposed.mlir 2>/dev/null | FileCheck %s --check-prefix=COMPILE
// RUN: flywheel compile --target tpu7x %t.transposed.tpu7x.mlir 2>/dev/null | FileCheck %s --check-prefix=COMPILE
// RUN: flywheel-opt %S/../Inputs/attention-bnth-bf16.mlir --flywheel-lower-to-stablehlo -o %t.reference.mlir
// RUN: flywheel check %t.reference.mlir %t.transposed.mlir | FileCheck %s --check-prefix=CHECKED
// CHECKED: check: passed (1 outputs within tolerance)
// Causal attention at head dim 128 takes it too; on tpu7x its banded kernel folds the
// score scale only exactly (v6e splits a bf16 Q times it in two parts).
// RUN: flywheel-opt %S/../Inputs/attention-bnth-causal-bf16.mlir '--flywheel-tpu=target=v6e remarks=true' -o %t.causal.mlir 2>&1 | FileCheck %s --check-prefix=CAUSAL-V6E
// CAUSAL-V6E: remark: layouts: transposed orientation
// CAUSAL-V6E: remark: @flywheel_kernel_0: {{.*}}; score scale folded into Q as two bf16 parts; {{.*}} step(s) exponentiated by their incoming max
// RUN: flywheel compile --target v6e %t.causal.mlir 2>/dev/null | FileCheck %s --check-prefix=COMPILE
// RUN: flywheel-opt %S/../Inputs/attention-bnth-causal-bf16.mlir --flywheel-lower-to-stablehlo -o %t.causal.reference.mlir
// RUN: flywheel check %t.causal.reference.mlir %t.causal.mlir | FileCheck %s --check-prefix=CHECKED
// RUN: flywheel-opt %S/../Inputs/attention-bnth-causal-bf16.mlir '--flywheel-tpu=target=tpu7x remarks=true' -o %t.causal.tpu7x.mlir 2>&1 | FileCheck %s --check-prefix=CAUSAL-TPU7X
// CAUSAL-TPU7X: remark: layouts: transposed orientation
// CAUSAL-TPU7X: remark: @flywheel_kernel_0: {{.*}}; score scale not folded: a banded kernel folds only exactly: Q is bf16 {{.*}} step(s) exponentiated by their incoming max
// RUN: flywheel compile --target tpu7x %t.causal.tpu7x.mlir 2>/dev/null | FileCheck %s --check-prefix=COMPILE
// RUN: flywheel check %t.causal.reference.mlir %t.causal.tpu7x.mlir | FileCheck %s --check-prefix=CHECKED
// RUN: flywheel-opt %S/../Inputs/attention-bnth-bf16.mlir '--flywheel-tpu=target=v5e remarks=true' 2>&1 >/dev/null | FileCheck %s --check-prefix=V5E
// V5E: remark: layouts: standard orientation, row sum on the VPU (auto orientation: transposed on v6e and tpu7x only;
// V5E: remark: @flywheel_kernel_0: {{.*}}; max not lagged: the scores are not transposed (lagged-max=transposed)
// On v6e a causal kernel the layout keeps standard (here at head dim 64) is lagged too,
// and matches the reference; on tpu7x it is not (slower there), nor on v6e with a window.
// RUN: sed 's/x128xbf16/x64xbf16/g' %S/../Inputs/attention-bnth-causal-bf16.mlir > %t.causal64.mlir
// RUN: flywheel-opt %t.causal64.mlir '--flywheel-tpu=target=v6e remarks=true' -o %t.causal64.v6e.mlir 2>&1 | FileCheck %s --check-prefix=CAUSAL-STANDARD-V6E
// CAUSAL-STANDARD-V6E: remark: layouts: standard orientation
// CAUSAL-STANDARD-V6E: remark: @flywheel_kernel_0: {{.*}}; {{[0-9]+}} step(s) exponentiated by their incoming max, redone when a row's max rises by more than 64, their max m₀ + log(l)
// RUN: flywheel-opt %t.causal64.mlir --flywheel-lower-to-stablehlo -o %t.causal64.reference.mlir
// RUN: flywheel check %t.causal64.reference.mlir %t.causal64.v6e.mlir | FileCheck %s --check-prefix=CHECKED
// RUN: flywheel-opt %t.causal64.mlir '--flywheel-tpu=target=tpu7x remarks=true' 2>&1 >/dev/null | FileCheck %s --check-prefix=CAUSAL-STANDARD-TPU7X
// CAUSAL-STANDARD-TPU7X: remark: @flywheel_kernel_0: {{.*}}; max not lagged: the scores are not transposed (lagged-max=transposed)
// RUN: sed 's/kv_heads = 2}/kv_heads = 2, window = array<i64: 64, 0>}/' %S/../Inputs/attention-bnth-causal-bf16.mlir | flywheel-opt '--flywheel-tpu=target=v6e remarks=true' 2>&1 >/dev/null | FileCheck %s --check-prefix=WINDOW-V6E
// WINDOW-V6E: remark: layouts: standard orientation, {{.*}}a window keeps the standard orientation
// WINDOW-V6E: remark: @flywheel_kernel_0: {{.*}}; max not lagged: the scores are not transposed and the kernel's band is not causal (lagged-max=transposed-or-causal)

// Gated DeltaNet gets its kernel, which computes what the chunked original does: its
// products ask DEFAULT precision, so the kernel takes some in one bf16 pass, as a TPU
// runs the original's: it must be within twice the TPU's own error of the exact numbers.
// RUN: flywheel-opt %S/../fixtures/gdn_chunked_f32.mlir --flywheel-tpu=target=tpu7x -o %t.gdn.mlir
// RUN: grep -c tpu_custom_call %t.gdn.mlir | FileCheck %s --check-prefix=GDN-KERNEL
// GDN-KERNEL: 1
// RUN: flywheel check %S/../fixtures/gdn_chunked_f32.mlir %t.gdn.mlir --reference tpu-bound | FileCheck %s --check-prefix=GDN
// GDN: check: passed (2 outputs within tolerance)

// Segment ids are not in the kernel yet: that attention goes through the reference
// lowering, which the CPU plugin checks against the explicit-mask form.
// RUN: flywheel-opt %S/../Inputs/segments.mlir --flywheel-tpu=target=v6e -o %t.segments.mlir
// RUN: flywheel-opt %S/../Inputs/segments-as-mask.mlir --flywheel-lower-to-stablehlo -o %t.mask.mlir
// RUN: flywheel check %t.mask.mlir %t.segments.mlir | FileCheck %s --check-prefix=SEGMENTS
// SEGMENTS: check: passed (1 outputs within tolerance)

// Unknown targets are an error naming the choices.
// RUN: not flywheel-opt %S/../fixtures/attention_mha_f32.mlir --flywheel-tpu=target=v7x 2>&1 | FileCheck %s --check-prefix=TARGET
// TARGET: invalid value 'v7x' for option 'target' (v5e|v6e|tpu7x)
