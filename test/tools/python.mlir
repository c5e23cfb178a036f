// The Python package (python/flywheel, importable from the venv): flywheel.jax.optimize
// lowers a JAX function, runs flywheel-tpu over its StableHLO and returns both programs;
// the optimized one holds the kernel, profiles devicelessly before and after (libtpu's
// static cycles), and matches the original on the CPU plugin. The tools' diagnostics
// surface as FlyWheelError with their text.

// RUN: %python %S/../Inputs/optimize_attention.py v6e --profile 2>/dev/null | FileCheck %s
// CHECK: default kernels 0 kept 1
// CHECK-NEXT: kernels 1
// CHECK-NEXT: original kernels 0
// CHECK-NEXT: profiled ['after', 'before'] True
// CHECK-NEXT: check: passed (1 outputs within tolerance)
// CHECK-NEXT: error: flywheel-opt: pipeline 'flywheel-tpu': unknown option 'key-splits' (known: target, auto-blocks, remarks, profitability)
// CHECK-NEXT: error: unknown target 'v7' (one of v5e, v6e, tpu7x)
// CHECK-NEXT: error: flywheel-opt not found (looked at $FLYWHEEL_OPT, the PATH and /nonexistent/flywheel-opt): build it with `cargo build --release`

// Other targets optimize the same way (tpu7x's kernel checked on the CPU too).
// RUN: %python %S/../Inputs/optimize_attention.py tpu7x 2>/dev/null | FileCheck %s --check-prefix=TPU7X
// TPU7X: kernels 1
// TPU7X: check: passed

// A jax.export round trip: the Exported's module optimized, everything else kept; it
// serializes and deserializes, and its module compiles for v6e without a TPU.
// RUN: %python %S/../Inputs/optimize_exported.py %t.restored.mlir 2>/dev/null | FileCheck %s --check-prefix=EXPORT
// EXPORT: kernels 1 before 0
// EXPORT-NEXT: calling convention kept True
// RUN: flywheel compile --target v6e %t.restored.mlir 2>/dev/null | FileCheck %s --check-prefix=COMPILE
// COMPILE: compiled {{.*}} for v6e:1x1

// Sharded over four chips (heads of a jax.ShapeDtypeStruct with a NamedSharding): the
// kernel sits in one manual region, both programs profile per chip on the 2x2
// topologies, and the check runs them on four CPU devices.
// RUN: %python %S/../Inputs/optimize_sharded.py v6e v6e:2x2 2>/dev/null | FileCheck %s --check-prefix=SHARDED
// RUN: %python %S/../Inputs/optimize_sharded.py tpu7x tpu7x:2x2x1 2>/dev/null | FileCheck %s --check-prefix=SHARDED
// SHARDED: kernels 1 manual regions 1
// SHARDED-NEXT: profiled per chip True
// SHARDED-NEXT: check: passed (1 outputs within tolerance)

// A candidate left without a kernel is a warning, with the remark that says why; remarks
// are on the result either way.
// RUN: %python %S/../Inputs/optimize_warns.py 2>/dev/null | FileCheck %s --check-prefix=WARNS
// WARNS: scaled_probabilities: 0 kernel(s) of 1 candidate(s), 0 kept, 1 warning(s)
// WARNS-NEXT: warning: UserWarning: FlyWheel made 0 kernel(s) of 1 candidate(s):
// WARNS-NEXT: attention not raised: the probabilities pass through 'stablehlo.multiply' between the softmax and P·V
// WARNS: causal: 0 kernel(s) of 1 candidate(s), 1 kept, 0 warning(s)
// WARNS-NEXT: remarks: normalized: {{.*}} | attention kept as XLA's ops (256 queries x 256 keys at head dim 64 in f32: no measured length has the kernel beat XLA on v6e)
// WARNS: causal{'profitability': 'off'}: 1 kernel(s) of 1 candidate(s), 0 kept, 0 warning(s)
// WARNS-NEXT: remarks: normalized: {{.*}} | raised to flywheel.attention (layout BTNH, 2 query / 2 key-value heads, scale 0.125, causal) |{{.*}}tiled into a Mosaic kernel
