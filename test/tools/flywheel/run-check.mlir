// `flywheel run` and `flywheel check` on the PJRT CPU plugin. Known answers computed
// independently live in tools/tests/suite/pjrt.rs; this file covers the command line,
// numpy interoperability and the errors.

// RUN: flywheel run %S/Inputs/known_answer_bf16.mlir --seed 7 | FileCheck %s --check-prefix=RAN
// RUN: flywheel run %S/Inputs/known_answer_bf16.mlir --seed 7 > %t.first
// RUN: flywheel run %S/Inputs/known_answer_bf16.mlir --seed 7 | diff %t.first -
// RUN: flywheel run %S/Inputs/known_answer_bf16.mlir --seed 8 | not diff %t.first -
// The report has nowhere to go when stdout is closed: exit 2, not a run that prints nothing.
// RUN: flywheel run %S/Inputs/known_answer_bf16.mlir >&- 2>%t.closed; test $? -eq 2 && FileCheck %s --check-prefix=CLOSED < %t.closed
// CLOSED: flywheel: error: cannot print the report on standard output: Bad file descriptor
// RAN: ran {{.*}}known_answer_bf16.mlir on the CPU plugin (random inputs, seed 7)
// RAN-NEXT: output 0  tensor<2x3xbf16>  checksum {{[0-9a-f]+}}  mean {{.*}}  nan 0  inf 0
// RAN-NEXT: output 1  tensor<2xbf16>
// RAN-NEXT: output 2  tensor<2x3xbf16>

// numpy writes the inputs (compressed, bf16 via ml_dtypes as `<V2`, a Fortran-ordered
// array) and checks the saved outputs against its own arithmetic.
// RUN: %python -c "import numpy as np, ml_dtypes as m; x = np.array([[-1.5, 0.25, 1.0], [2.0, -0.5, 0.125]], m.bfloat16); y = np.asfortranarray(np.ones((2, 3), m.bfloat16) * 2); np.savez_compressed('%t.in.npz', x, y, np.array([[1, 0, 1], [0, 1, 0]], bool))"
// RUN: flywheel run %S/Inputs/known_answer_bf16.mlir --inputs %t.in.npz --save %t.out.npz | FileCheck %s --check-prefix=NPZ
// NPZ: ran {{.*}} on the CPU plugin (inputs from {{.*}}.in.npz)
// RUN: %python -c "import numpy as np, ml_dtypes as m; d = np.load('%t.out.npz'); x = np.array([[-1.5, 0.25, 1.0], [2.0, -0.5, 0.125]], np.float32); p, s, q = (d[k].view(m.bfloat16).astype(np.float32) for k in ('arr_0', 'arr_1', 'arr_2')); assert np.allclose(p, np.exp(x) * 2, rtol=2**-7), p; assert (s == x.sum(1)).all(), s; assert (q == np.where([[1, 0, 1], [0, 1, 0]], x, -x)).all(), q"

// check: the same program passes; the table names each output.
// RUN: flywheel check %S/Inputs/known_answer_f32.mlir %S/Inputs/known_answer_f32.mlir | FileCheck %s --check-prefix=CHECK-SAME-PROGRAM
// CHECK-SAME-PROGRAM: check {{.*}}known_answer_f32.mlir against {{.*}}known_answer_f32.mlir on the CPU plugin (random inputs, seed 0)
// CHECK-SAME-PROGRAM: output type {{ *}}max abs {{ *}}max rel {{ *}}rel L2
// CHECK-SAME-PROGRAM-NEXT: 0 {{ *}}tensor<2x3xf32> {{ *}}0.000e0 {{.*}} 1e-5  ok
// CHECK-SAME-PROGRAM: check: passed (3 outputs within tolerance)
// A tolerance loose enough passes a perturbed program; the default does not.
// RUN: sed 's/"stablehlo.exponential"/"stablehlo.exponential_minus_one"/' %S/Inputs/known_answer_f32.mlir > %t.expm1.mlir
// RUN: not flywheel check %S/Inputs/known_answer_f32.mlir %t.expm1.mlir 2>&1 | FileCheck %s --check-prefix=PERTURBED
// PERTURBED: 0 {{ *}}tensor<2x3xf32> {{.*}}FAIL
// PERTURBED: 1 {{ *}}tensor<2xf32> {{.*}}ok
// PERTURBED: flywheel: error: check failed: output 0: relative L2 error
// RUN: flywheel check %S/Inputs/known_answer_f32.mlir %t.expm1.mlir --rtol 10 > /dev/null
// The pass/fail boundary: an output 1% off everywhere has a relative L2 error of 1e-2
// (the square root of the summed squares' ratio, not the ratio), so rtol 1.02e-2 passes
// it and 0.98e-2 does not.
// RUN: sed 's/dense<1.000000e+00>/dense<1.010000e+00>/' %S/Inputs/scaled_f32.mlir > %t.scaled.mlir
// RUN: flywheel check %S/Inputs/scaled_f32.mlir %t.scaled.mlir --rtol 1.02e-2 | FileCheck %s --check-prefix=BOUNDARY-PASS
// BOUNDARY-PASS: 0 {{ *}}tensor<256xf32> {{ *}}{{[0-9.e-]+}} {{ *}}1.000e-2 {{ *}}1.000e-2 {{.*}} 1.02e-2  ok
// BOUNDARY-PASS: check: passed
// RUN: not flywheel check %S/Inputs/scaled_f32.mlir %t.scaled.mlir --rtol 0.98e-2 2>&1 | FileCheck %s --check-prefix=BOUNDARY-FAIL
// BOUNDARY-FAIL: flywheel: error: check failed: output 0: relative L2 error 1.000e-2 > rtol 9.8e-3
// A tolerance that is not a finite number of zero or more is refused (NaN compared with
// anything is false, so it would pass every program): exit 2, nothing compared.
// RUN: not flywheel check %S/Inputs/known_answer_f32.mlir %t.expm1.mlir --rtol nan 2>&1 | FileCheck %s --check-prefix=NAN-TOLERANCE
// RUN: not flywheel check %S/Inputs/known_answer_f32.mlir %t.expm1.mlir --atol=-1 2>&1 | FileCheck %s --check-prefix=NAN-TOLERANCE
// RUN: not flywheel check %S/Inputs/known_answer_f32.mlir %t.expm1.mlir --atol inf 2>&1 | FileCheck %s --check-prefix=NAN-TOLERANCE
// NAN-TOLERANCE: is not a finite tolerance of zero or more
// NAN-TOLERANCE-NOT: check: passed

// Errors: one line each, exit 1 for the module, 2 for everything else.
// A parameter larger than any machine holds is refused before anything is allocated
// (it once aborted on the allocation).
// RUN: sed 's/tensor<2x3xf32>/tensor<6148914691236517206x3xf32>/g' %S/Inputs/known_answer_f32.mlir > %t.huge.mlir
// RUN: not flywheel run %t.huge.mlir 2>&1 | FileCheck %s --check-prefix=HUGE
// HUGE: flywheel: error: {{.*}}huge.mlir: parameter 0 is tensor<6148914691236517206x3xf32>, too large to run on the CPU
// RUN: not flywheel run --plugin %t.missing.so %S/Inputs/known_answer_f32.mlir 2>&1 | FileCheck %s --check-prefix=MISSING
// MISSING: flywheel: error: PJRT CPU plugin not found at {{.*}}missing.so
// RUN: flywheel run --plugin %t.missing.so %S/Inputs/known_answer_f32.mlir 2>/dev/null; test $? -eq 2
// RUN: not flywheel run --plugin %s %S/Inputs/known_answer_f32.mlir 2>&1 | FileCheck %s --check-prefix=NOT-A-PLUGIN
// NOT-A-PLUGIN: flywheel: error: cannot load the PJRT CPU plugin from {{.*}}run-check.mlir:
// RUN: not flywheel run --inputs %t.nothing.npz %S/Inputs/known_answer_f32.mlir 2>&1 | FileCheck %s --check-prefix=NO-INPUTS
// NO-INPUTS: flywheel: error: cannot read '{{.*}}nothing.npz'
// RUN: not flywheel run --inputs %s %S/Inputs/known_answer_f32.mlir 2>&1 | FileCheck %s --check-prefix=NOT-NPZ
// NOT-NPZ: flywheel: error: {{.*}}run-check.mlir: not an .npz file
// RUN: not flywheel run --inputs %t.in.npz %S/Inputs/known_answer_f32.mlir 2>&1 | FileCheck %s --check-prefix=WRONG-TYPE
// WRONG-TYPE: flywheel: error: {{.*}}in.npz: 'arr_0' is tensor<2x3xbf16> but parameter 0 of {{.*}}known_answer_f32.mlir is tensor<2x3xf32>
// RUN: not flywheel run --inputs %t.out.npz %S/Inputs/known_answer_bf16.mlir 2>&1 | FileCheck %s --check-prefix=WRONG-SHAPE
// WRONG-SHAPE: flywheel: error: {{.*}}out.npz: 'arr_1' is tensor<2xbf16> but parameter 1 of {{.*}} is tensor<2x3xbf16>
// RUN: %python -c "import numpy as np; np.savez('%t.two.npz', np.zeros((2, 3), np.float32), np.zeros((2, 3), np.float32))"
// RUN: not flywheel run --inputs %t.two.npz %S/Inputs/known_answer_f32.mlir 2>&1 | FileCheck %s --check-prefix=WRONG-COUNT
// WRONG-COUNT: flywheel: error: {{.*}}two.npz holds 2 arrays but {{.*}}known_answer_f32.mlir takes 3 parameters
// RUN: not flywheel check %S/Inputs/known_answer_f32.mlir %S/Inputs/known_answer_bf16.mlir 2>&1 | FileCheck %s --check-prefix=SIGNATURES
// SIGNATURES: flywheel: error: {{.*}}known_answer_f32.mlir and {{.*}}known_answer_bf16.mlir take different parameters: (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xi1>) vs (tensor<2x3xbf16>, tensor<2x3xbf16>, tensor<2x3xi1>)
// RUN: not flywheel run %S/../flywheel-opt/Inputs/malformed.mlir 2>&1 | FileCheck %s --check-prefix=MALFORMED
// MALFORMED: malformed.mlir:3:12: error: expected ':'
// RUN: not flywheel run %s --save %t.rejected.npz 2>&1 | FileCheck %s --check-prefix=REJECTED
// REJECTED: flywheel: error: the CPU plugin could not compile the module: {{.*}}stablehlo.frobnicate
// RUN: flywheel run %s 2>/dev/null; test $? -eq 1
// RUN: test ! -e %t.rejected.npz
// RUN: not flywheel run %S/Inputs/complex.mlir 2>&1 | FileCheck %s --check-prefix=DTYPE
// DTYPE: flywheel: error: {{.*}}complex.mlir: unsupported element type complex<f32> in tensor<2xcomplex<f32>>
// RUN: not flywheel run %S/Inputs/dynamic.mlir 2>&1 | FileCheck %s --check-prefix=DYNAMIC
// DYNAMIC: flywheel: error: {{.*}}dynamic.mlir: dynamic shape tensor<?xf32> is not supported

// Programs with FlyWheel's Mosaic kernels run too: XLA:CPU runs the program, the plugin
// calls the Mosaic interpreter for each kernel (a typed FFI handler). A kernel that
// ignores causality is caught against the causal reference.
// RUN: flywheel-opt %S/../../Inputs/attention-bnth-causal-bf16.mlir --flywheel-lower-to-stablehlo -o %t.reference.mlir
// RUN: flywheel-opt %S/../../Inputs/attention-bnth-causal-bf16.mlir --flywheel-tile --flywheel-lower-to-mosaic -o %t.kernel.mlir
// RUN: flywheel check %t.reference.mlir %t.kernel.mlir --seed 3 | FileCheck %s --check-prefix=KERNEL
// KERNEL: 0 tensor<1x2x256x128xbf16> {{.*}} ok
// KERNEL: check: passed (1 outputs within tolerance)
// RUN: sed 's/causal = true/causal = false/' %S/../../Inputs/attention-bnth-causal-bf16.mlir | flywheel-opt --flywheel-tile --flywheel-lower-to-mosaic -o %t.acausal.mlir
// RUN: not flywheel check %t.reference.mlir %t.acausal.mlir --seed 3 | FileCheck %s --check-prefix=ACAUSAL
// ACAUSAL: 0 tensor<1x2x256x128xbf16> {{.*}} FAIL
// RUN: flywheel run %t.kernel.mlir | FileCheck %s --check-prefix=RAN-KERNEL
// RAN-KERNEL: 0 tensor<1x2x256x128xbf16>

// A module the CPU plugin rejects: StableHLO has no such op.
func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "stablehlo.frobnicate"(%a) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
