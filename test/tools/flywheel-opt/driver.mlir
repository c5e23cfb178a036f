// flywheel-opt behaves like mlir-opt: pipelines mixing FlyWheel and upstream passes,
// pass flags, split input, bytecode, generic printing of unregistered ops, and exit codes
// (0 ok, 1 failure, 2 usage/IO) that never leave a partial output file.

// RUN: flywheel-opt %s --pass-pipeline='builtin.module(flywheel-verify,canonicalize,func.func(cse))' | FileCheck %s
// RUN: flywheel-opt %s --flywheel-verify --canonicalize --cse | FileCheck %s
// RUN: cat %s | flywheel-opt - --flywheel-verify | FileCheck %s --check-prefix=KEPT
// RUN: flywheel-opt %s -o /dev/null && test -c /dev/null
// RUN: flywheel-opt %s --emit-bytecode -o %t.bc && flywheel-opt %t.bc | FileCheck %s --check-prefix=KEPT
// -o through a symbolic link writes its target and keeps the target's permissions.
// RUN: rm -rf %t.dir && mkdir %t.dir && echo old > %t.dir/real.mlir && chmod 640 %t.dir/real.mlir
// RUN: ln -s real.mlir %t.dir/link.mlir && flywheel-opt %s -o %t.dir/link.mlir
// RUN: test -L %t.dir/link.mlir && stat -c %a %t.dir/real.mlir | FileCheck %s --check-prefix=MODE
// MODE: 640
// RUN: FileCheck %s --check-prefix=KEPT < %t.dir/real.mlir

// RUN: flywheel-opt --help | FileCheck %s --check-prefix=HELP
// HELP: Usage: flywheel-opt [OPTIONS] [INPUT]
// RUN: flywheel-opt --list-passes | FileCheck %s --check-prefix=LIST
// LIST: flywheel-verify {{.*}}Check flywheel ops

// RUN: flywheel-opt %s --canonicalize --mlir-print-ir-after-all 2>&1 >/dev/null | FileCheck %s --check-prefix=AFTER
// AFTER: IR Dump After Canonicalizer
// RUN: flywheel-opt %s --canonicalize --mlir-timing 2>&1 >/dev/null | FileCheck %s --check-prefix=TIMING
// TIMING: Execution time report
// TIMING: Canonicalizer

// Usage errors exit 2 and name the problem.
// RUN: flywheel-opt %s --flywheel-nonexistent 2>&1 >/dev/null; test $? -eq 2
// RUN: not flywheel-opt %s --flywheel-nonexistent 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// UNKNOWN: flywheel-nonexistent
// RUN: not flywheel-opt %s --flywheel-verify=frobnicate=1 2>&1 | FileCheck %s --check-prefix=OPTION
// OPTION: pass 'flywheel-verify': unknown option 'frobnicate' (this pass has no options)
// RUN: not flywheel-opt %s --pass-pipeline='builtin.module(cse' 2>&1 | FileCheck %s --check-prefix=PIPELINE
// PIPELINE: invalid pass pipeline
// RUN: not flywheel-opt %s --pass-pipeline='builtin.module(cse)' --cse 2>&1 | FileCheck %s --check-prefix=BOTH
// BOTH: '--pass-pipeline' cannot be used with individual pass flags
// RUN: flywheel-opt %S/Inputs/does-not-exist.mlir 2>&1 >/dev/null; test $? -eq 2
// A closed stdout or stdin is an I/O error (exit 2), not output lost or an empty input.
// RUN: flywheel-opt %s >&- 2>%t.closed; test $? -eq 2 && FileCheck %s --check-prefix=CLOSED-OUT < %t.closed
// CLOSED-OUT: flywheel-opt: cannot write '-': Bad file descriptor
// RUN: flywheel-opt - <&- 2>%t.closed >/dev/null; test $? -eq 2 && FileCheck %s --check-prefix=CLOSED-IN < %t.closed
// CLOSED-IN: flywheel-opt: cannot read '-': Bad file descriptor
// RUN: flywheel-opt %s -o %t.closed.mlir >&- && FileCheck %s --check-prefix=KEPT < %t.closed.mlir

// Malformed input: a located error, exit 1, and no output file (an existing one is kept).
// RUN: not flywheel-opt %S/Inputs/malformed.mlir -o %t.out 2>&1 | FileCheck %s --check-prefix=MALFORMED
// A dense array of index elements, on which MLIR 22's parser segfaults (mlir-opt-22 too),
// is refused before parsing, at its position: exit 1, no output.
// RUN: printf '"test.op"() {x = array<index: 1>} : () -> ()\n' > %t.index.mlir
// RUN: not flywheel-opt %t.index.mlir -o %t.index.out 2>&1 | FileCheck %s --check-prefix=INDEX-ARRAY
// INDEX-ARRAY: index.mlir:1:18: error: dense arrays of index elements (`array<index: ...>`) are not accepted
// RUN: not test -e %t.index.out
// A diagnostic whose text is not UTF-8 (an op name with a byte 0xFF) is reported as far
// as it is text (it once panicked while being formatted): exit 1.
// RUN: printf '"flywheel.attention\377"() : () -> ()\n' > %t.bytes.mlir
// RUN: not flywheel-opt %t.bytes.mlir --flywheel-verify 2>&1 | FileCheck %s --check-prefix=NOT-UTF8
// NOT-UTF8: bytes.mlir:1:1: error: unregistered operation {{.*}}[the rest of the message is not UTF-8]
// A FlyWheel op in custom form, which MLIR fails to parse without a diagnostic: still an
// error line, exit 1, no output.
// RUN: printf 'flywheel.gated_delta\n' > %t.custom.mlir
// RUN: not flywheel-opt %t.custom.mlir -o %t.custom.out 2>&1 | FileCheck %s --check-prefix=SILENT
// SILENT: custom.mlir: error: the input does not parse, and MLIR says not why
// RUN: not test -e %t.custom.out
// MALFORMED: Inputs/malformed.mlir:3:12: error: expected ':'
// MALFORMED-NEXT: return %0 tensor<4xf32>
// MALFORMED-NEXT: {{^           \^}}
// RUN: flywheel-opt %S/Inputs/malformed.mlir -o %t.out; test $? -eq 1
// RUN: test ! -e %t.out
// RUN: echo keep > %t.old && not flywheel-opt %S/Inputs/malformed.mlir -o %t.old 2>/dev/null && grep -q keep %t.old

// A location in another file (the Python source of an exported program) is named by that
// file, its line not quoted from this one.
// RUN: not flywheel-opt %S/Inputs/python-location.mlir 2>&1 | FileCheck %s --check-prefix=ELSEWHERE
// ELSEWHERE: {{^}}model.py:1:5: error: 'flywheel.attention' op attribute 'layout'
// ELSEWHERE-NEXT: {{^.*}}Inputs/python-location.mlir:5:8: error: 'flywheel.attention' op attribute 'layout'
// ELSEWHERE-NEXT: {{^  %p = "flywheel.attention"}}

// Unmet expectations under --verify-diagnostics fail and say why.
// RUN: not flywheel-opt %S/Inputs/wrong-expectation.mlir --verify-diagnostics 2>&1 | FileCheck %s --check-prefix=EXPECT
// EXPECT-DAG: wrong-expectation.mlir:3:8: error: unexpected error: 'flywheel.attention' op 'q_heads' and the heads axis of q disagree: 3 vs 2
// EXPECT-DAG: wrong-expectation.mlir:2:1: error: expected error "a message the verifier never says" was not produced

// CHECK-LABEL: func.func @folds
// CHECK-NEXT: %[[C:.*]] = arith.constant 3 : i32
// CHECK-NEXT: return %[[C]], %[[C]]
// KEPT-LABEL: func.func @folds
// KEPT: arith.addi
func.func @folds() -> (i32, i32) {
  %a = arith.constant 1 : i32
  %b = arith.constant 2 : i32
  %c = arith.addi %a, %b : i32
  %d = arith.addi %a, %b : i32
  return %c, %d : i32, i32
}
