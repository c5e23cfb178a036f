// flywheel-emulate-tpu-precision: a DEFAULT-precision product of f32 operands runs on a
// TPU as one bf16 pass of the MXU; the pass writes the operands' rounding out, so the CPU
// computes what the TPU does (the reference of `flywheel check --reference tpu`).

// RUN: flywheel-opt %s --split-input-file --flywheel-emulate-tpu-precision --verify-diagnostics | FileCheck %s

// Both operands f32, DEFAULT: each rounded to bf16 and back.
// CHECK-LABEL: sym_name = "default"
// CHECK: %[[A:.*]] = "stablehlo.convert"(%arg0) : (tensor<4x8xf32>) -> tensor<4x8xbf16>
// CHECK: %[[A32:.*]] = "stablehlo.convert"(%[[A]]) : (tensor<4x8xbf16>) -> tensor<4x8xf32>
// CHECK: %[[B:.*]] = "stablehlo.convert"(%arg1) : (tensor<8x2xf32>) -> tensor<8x2xbf16>
// CHECK: %[[B32:.*]] = "stablehlo.convert"(%[[B]]) : (tensor<8x2xbf16>) -> tensor<8x2xf32>
// CHECK: "stablehlo.dot_general"(%[[A32]], %[[B32]])
func.func @default(%a: tensor<4x8xf32>, %b: tensor<8x2xf32>) -> tensor<4x2xf32> {
  %p = "stablehlo.dot_general"(%a, %b) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<4x8xf32>, tensor<8x2xf32>) -> tensor<4x2xf32>
  return %p : tensor<4x2xf32>
}

// -----

// No precision_config is DEFAULT; a bf16 operand is left as it is.
// CHECK-LABEL: sym_name = "unsaid_mixed"
// CHECK: %[[A:.*]] = "stablehlo.convert"(%arg0) : (tensor<4x8xf32>) -> tensor<4x8xbf16>
// CHECK: %[[A32:.*]] = "stablehlo.convert"(%[[A]])
// CHECK-NOT: stablehlo.convert
// CHECK: "stablehlo.dot_general"(%[[A32]], %arg1)
func.func @unsaid_mixed(%a: tensor<4x8xf32>, %b: tensor<8x2xbf16>) -> tensor<4x2xf32> {
  %p = "stablehlo.dot_general"(%a, %b) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>}> : (tensor<4x8xf32>, tensor<8x2xbf16>) -> tensor<4x2xf32>
  return %p : tensor<4x2xf32>
}

// -----

// Near misses: HIGHEST or HIGH on either operand (several passes, about f32), and bf16
// operands (nothing to round): untouched.
// CHECK-LABEL: sym_name = "near_misses"
// CHECK-NOT: stablehlo.convert
// CHECK: "stablehlo.dot_general"(%arg0, %arg1) {{.*}}HIGHEST
// CHECK: "stablehlo.dot_general"(%arg0, %arg1) {{.*}}HIGH
// CHECK: "stablehlo.dot_general"(%arg2, %arg3)
func.func @near_misses(%a: tensor<4x8xf32>, %b: tensor<8x2xf32>, %c: tensor<4x8xbf16>, %d: tensor<8x2xbf16>) -> (tensor<4x2xf32>, tensor<4x2xf32>, tensor<4x2xf32>) {
  %p = "stablehlo.dot_general"(%a, %b) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision HIGHEST>]}> : (tensor<4x8xf32>, tensor<8x2xf32>) -> tensor<4x2xf32>
  %q = "stablehlo.dot_general"(%a, %b) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>, precision_config = [#stablehlo<precision HIGH>, #stablehlo<precision DEFAULT>]}> : (tensor<4x8xf32>, tensor<8x2xf32>) -> tensor<4x2xf32>
  %r = "stablehlo.dot_general"(%c, %d) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>}> : (tensor<4x8xbf16>, tensor<8x2xbf16>) -> tensor<4x2xf32>
  return %p, %q, %r : tensor<4x2xf32>, tensor<4x2xf32>, tensor<4x2xf32>
}

// -----

// Diagnostics: a precision the pass cannot read is an error at its op.
func.func @unreadable(%a: tensor<4x8xf32>, %b: tensor<8x2xf32>) -> tensor<4x2xf32> {
  // expected-error@+1 {{attribute 'precision_config': unknown precision `FASTEST`}}
  %p = "stablehlo.dot_general"(%a, %b) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>, precision_config = [#stablehlo<precision FASTEST>, #stablehlo<precision DEFAULT>]}> : (tensor<4x8xf32>, tensor<8x2xf32>) -> tensor<4x2xf32>
  return %p : tensor<4x2xf32>
}

// Numerics, known answers: (1 + 2^-10) is no bf16; times 1 it is 1 on a TPU at DEFAULT
// precision (3 is a bf16 and stays 3), and itself computed exactly.
// RUN: flywheel-opt %S/Inputs/fine-product-f32.mlir --flywheel-emulate-tpu-precision -o %t.tpu.mlir
// RUN: %python -c "import numpy as np; np.savez('%t.in.npz', np.array([[1 + 2**-10, 0], [0, 3]], np.float32), np.eye(2, dtype=np.float32))"
// RUN: flywheel run %t.tpu.mlir --inputs %t.in.npz --save %t.tpu.npz > /dev/null
// RUN: flywheel run %S/Inputs/fine-product-f32.mlir --inputs %t.in.npz --save %t.exact.npz > /dev/null
// RUN: %python -c "import numpy as np; t = np.load('%t.tpu.npz')['arr_0']; e = np.load('%t.exact.npz')['arr_0']; assert (t == [[1, 0], [0, 3]]).all(), t; assert (e == [[1 + 2**-10, 0], [0, 3]]).all(), e"
// `flywheel check --reference tpu` compares against the TPU's numbers: the exact program
// passes against itself only with the exact reference, the rounded one with either.
// RUN: flywheel check %S/Inputs/fine-product-f32.mlir %S/Inputs/fine-product-f32.mlir > /dev/null
// RUN: not flywheel check %S/Inputs/fine-product-f32.mlir %S/Inputs/fine-product-f32.mlir --reference tpu 2>&1 | FileCheck %s --check-prefix=EXACT-VS-TPU
// EXACT-VS-TPU: flywheel: error: check failed: output 0: relative L2 error
// RUN: flywheel check %S/Inputs/fine-product-f32.mlir %t.tpu.mlir --reference tpu | FileCheck %s --check-prefix=TPU-VS-TPU
// TPU-VS-TPU: 0 {{ *}}tensor<2x2xf32> {{ *}}0.000e0
// `--reference tpu-bound` compares against the exact numbers and also passes an output
// within twice the TPU's own error of them: the rounded program fails the exact check
// and passes this one; a program off by far more fails it.
// RUN: not flywheel check %S/Inputs/fine-product-f32.mlir %t.tpu.mlir > /dev/null
// RUN: flywheel check %S/Inputs/fine-product-f32.mlir %t.tpu.mlir --reference tpu-bound | FileCheck %s --check-prefix=TPU-BOUND
// TPU-BOUND: 0 {{ *}}tensor<2x2xf32> {{.*}} ok (the TPU's own rel L2 {{[0-9.]+}}e-3)
// TPU-BOUND: check: passed
// RUN: sed 's/return %p/%doubled = "stablehlo.add"(%p, %p) : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>\n  return %doubled/' %S/Inputs/fine-product-f32.mlir > %t.twice.mlir
// RUN: not flywheel check %S/Inputs/fine-product-f32.mlir %t.twice.mlir --reference tpu-bound 2>&1 | FileCheck %s --check-prefix=BEYOND-BOUND
// BEYOND-BOUND: FAIL
// BEYOND-BOUND: flywheel: error: check failed: output 0
