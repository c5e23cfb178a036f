// The PJRT front-end compiles real JAX attention for TPUs without one (libtpu,
// deviceless) and reads libtpu's cost analysis and static cycle estimates.

// RUN: flywheel compile --target v6e %S/../../fixtures/attention_mha_bf16.mlir -o %t.v6e 2>/dev/null | FileCheck %s --check-prefix=COMPILE
// RUN: test -s %t.v6e
// COMPILE: compiled {{.*}}attention_mha_bf16.mlir for v6e:1x1
// COMPILE: bytes accessed {{ *[1-9][0-9]*}}
// COMPILE: flops {{ *[1-9][0-9]*}}
// COMPILE: transcendentals {{ *[1-9][0-9]*}}
// Three 2x128x4x64 bf16 arguments and one such output, in HBM.
// COMPILE: memory: arguments {{ *}}393216
// COMPILE: memory: outputs {{ *}}131072
// COMPILE: memory: peak {{ *[1-9][0-9]*}}
// COMPILE: executable bytes {{ *[1-9][0-9]*}}
// A successful compile prints nothing on stderr (libtpu's own load-time logging is off).
// RUN: flywheel compile --target v6e %S/../../fixtures/attention_mha_bf16.mlir 2>&1 >/dev/null | not grep .

// RUN: flywheel profile --target tpu7x %S/../../fixtures/attention_mha_bf16.mlir 2>/dev/null | FileCheck %s --check-prefix=PROFILE
// PROFILE: static cycles, {{.*}} on tpu7x:1x1x1
// PROFILE: fusion{{.*}} {{ *[1-9][0-9]*}}
// PROFILE: total {{ *[1-9][0-9]*}}
// RUN: flywheel profile --target v6e --json %S/../../fixtures/attention_causal_bf16.mlir 2>/dev/null | FileCheck %s --check-prefix=JSON
// JSON: {"input":"{{.*}}attention_causal_bf16.mlir","topology":"v6e:1x1","parameter_layouts":"default","total_cycles":{{[1-9][0-9]*}},"ops":[{"hlo_op":
// With its default parameter layouts a boolean mask is relaid out by a DMA copy the
// static profiler cannot price; with the compiler choosing them there is no copy.
// RUN: not flywheel profile --target v6e %S/../../fixtures/attention_dpa_mask_bf16.mlir 2>&1 | FileCheck %s --check-prefix=MASK-DEFAULT
// MASK-DEFAULT: flywheel: error: libtpu aborted while profiling: Static LLO profiling of copy failed: INVALID_ARGUMENT: Unsupported DMA direction
// RUN: flywheel profile --target v6e --parameter-layouts compiler --json %S/../../fixtures/attention_dpa_mask_bf16.mlir 2>/dev/null | FileCheck %s --check-prefix=MASK-COMPILER
// MASK-COMPILER: "parameter_layouts":"compiler","total_cycles":{{[1-9][0-9]*}},
// RUN: flywheel profile --target v6e --parameter-layouts compiler %S/../../fixtures/attention_dpa_mask_bf16.mlir 2>/dev/null | FileCheck %s --check-prefix=MASK-TABLE
// MASK-TABLE: static cycles, {{.*}}attention_dpa_mask_bf16.mlir on v6e:1x1, parameter layouts chosen by the compiler

// Multi-chip topologies. An unsharded program runs whole on one chip; a heads-sharded
// one (mhlo.num_partitions = 4, Shardy shardings) is SPMD-partitioned, so each chip
// holds a quarter of the arguments.
// RUN: flywheel compile --target v6e --topology v6e:2x2 %S/../../fixtures/attention_gqa_bf16.mlir 2>/dev/null | FileCheck %s --check-prefix=MULTI
// MULTI: for v6e:2x2{{$}}
// RUN: flywheel compile --target v6e --topology v6e:2x2 %S/../../fixtures/attention_heads_sharded_bf16.mlir 2>/dev/null | FileCheck %s --check-prefix=SHARDED
// RUN: flywheel compile --target tpu7x --topology tpu7x:2x2x1 %S/../../fixtures/attention_heads_sharded_bf16.mlir 2>/dev/null | FileCheck %s --check-prefix=SHARDED
// SHARDED: for {{v6e:2x2|tpu7x:2x2x1}} as 4 SPMD partitions
// SHARDED: memory: arguments {{ *}}98304
// SHARDED: memory: outputs {{ *}}32768
// RUN: not flywheel compile --target v6e %S/../../fixtures/attention_heads_sharded_bf16.mlir 2>&1 | FileCheck %s --check-prefix=TOO-FEW-CHIPS
// TOO-FEW-CHIPS: flywheel: error: the module is partitioned over 4 devices but topology 'v6e:1x1' has 1
// A topology with an extent of 0 (once a division by zero inside libtpu) or no extents is
// refused before libtpu sees it: exit 2.
// RUN: not flywheel compile --target v6e --topology v6e:0x0 %S/../../fixtures/attention_gqa_bf16.mlir 2>&1 | FileCheck %s --check-prefix=BAD-TOPOLOGY
// RUN: not flywheel compile --target v6e --topology v6e %S/../../fixtures/attention_gqa_bf16.mlir 2>&1 | FileCheck %s --check-prefix=BAD-TOPOLOGY
// BAD-TOPOLOGY: is not a topology NAME:AxB or NAME:AxBxC with extents of 1 or more
// RUN: flywheel compile --target v5e %S/../../fixtures/gdn_chunked_f32.mlir 2>/dev/null | FileCheck %s --check-prefix=V5E
// V5E: for v5e:1x1

// Errors: one clear line each, non-zero exit, no output file.
// RUN: not flywheel compile --target v6e --libtpu %t.missing.so %s 2>&1 | FileCheck %s --check-prefix=PLUGIN
// PLUGIN: flywheel: error: libtpu not found at {{.*}}missing.so
// RUN: flywheel compile --target v6e --libtpu %t.missing.so %s 2>/dev/null; test $? -eq 2
// RUN: not flywheel compile --target v6e --topology v6e:3x7x9 %s 2>&1 | FileCheck %s --check-prefix=TOPOLOGY
// TOPOLOGY: flywheel: error: libtpu rejected topology 'v6e:3x7x9'
// RUN: not flywheel compile --target v6e --topology tpu7x:1x1x1 %s 2>&1 | FileCheck %s --check-prefix=MISMATCH
// MISMATCH: flywheel: error: topology 'tpu7x:1x1x1' does not belong to target v6e
// RUN: not flywheel compile --target v7x %s 2>&1 | FileCheck %s --check-prefix=TARGET
// TARGET: invalid value 'v7x' for '--target <TARGET>'
// RUN: not flywheel compile --target v6e %S/../flywheel-opt/Inputs/malformed.mlir 2>&1 | FileCheck %s --check-prefix=MALFORMED
// MALFORMED: malformed.mlir:3:12: error: expected ':'
// RUN: not flywheel compile --target v6e %s -o %t.rejected 2>&1 | FileCheck %s --check-prefix=REJECTED
// REJECTED: flywheel: error: libtpu could not compile the module: {{.*}}unregistered operation 'stablehlo.frobnicate'
// RUN: flywheel compile --target v6e %s -o %t.rejected 2>/dev/null; test $? -eq 1
// RUN: test ! -e %t.rejected

// A module libtpu rejects: StableHLO has no such op.
func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "stablehlo.frobnicate"(%a) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
