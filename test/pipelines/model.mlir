// The whole-model demo (issue 8): a small Qwen3-Next-style decoder stack in plain JAX
// (python/flywheel/models/qwen3_next.py, two Gated DeltaNet and two causal GQA attention
// layers with RMSNorm, projections, RoPE and SwiGLU MLPs) through flywheel.jax.optimize
// for v6e with profitability off (at 256 tokens XLA would keep the attention layers).
// Every layer's mixer gets its kernel, no per-token loop is left, the optimized
// model matches the original on the CPU plugin, and it compiles for v6e without a TPU.

// RUN: %python %S/../Inputs/model_demo.py %t.mlir 2>/dev/null | FileCheck %s
// CHECK: layers attention 2 gdn 2
// CHECK-NEXT: kernels 4 attention 2 gdn 2
// CHECK-NEXT: while loops 2 -> 0
// CHECK-NEXT: check: passed (1 outputs within tolerance)
// RUN: flywheel compile --target v6e %t.mlir 2>/dev/null | FileCheck %s --check-prefix=COMPILE
// COMPILE: compiled {{.*}} for v6e:1x1
