// flywheel-tri-inverse: the Gated DeltaNet kernel's (I + A)^-1 (A strictly lower
// triangular, 64 x 64), written by flywheel-tile as forward substitution (an scf.for of
// 63 steps X <- I - A X from X = I), becomes the blocked inverse: the same loop on A's
// diagonal blocks for block - 1 steps, then merges X <- X - X (E X) on the MXU, E the
// lower-left blocks of A inside blocks twice the size solved so far.
// The kernels are flywheel-tile's, committed as tile IR (Inputs/*.tile.mlir, each with the
// command that made it), so that these checks follow this pass alone.

// One value head per grid step, two chunks, f32 products at Mosaic's fp32.
// RUN: flywheel-opt %S/Inputs/gdn-one-head-fp32.tile.mlir -o %t.tiled.mlir
// The baseline: 63 steps on A itself.
// RUN: FileCheck %s --check-prefix=BASE < %t.tiled.mlir
// BASE: %[[BELOW:.*]] = "arith.cmpi"(%[[ROW:.*]], %[[COLUMN:.*]]) <{predicate = 4 : i64}>
// BASE: %[[A:.*]] = "arith.select"(%[[BELOW]],
// BASE: %[[STEPS:.*]] = "arith.constant"() <{value = 63 : index}>
// BASE: "scf.for"(%{{.*}}, %[[STEPS]], %{{.*}}, %[[I:.*]]) ({
// BASE-NEXT: ^bb0(%{{.*}}: index, %[[X:.*]]: vector<64x64xf32>):
// BASE: %[[AX:.*]] = "flywheel.matmul"(%[[A]], %[[X]], %{{.*}})
// BASE-NEXT: %[[NEXT:.*]] = "arith.subf"(%[[I]], %[[AX]])
// BASE-NEXT: "scf.yield"(%[[NEXT]])

// Blocks of 8 by substitution: 7 steps on A's diagonal 8-blocks, straight-line (the
// scheduler may interleave them with other work), then 3 merges.
// RUN: flywheel-opt %t.tiled.mlir --flywheel-tri-inverse='block=8 diagonal=substitution remarks=true' 2>&1 -o %t.blocked.mlir | FileCheck %s --check-prefix=REMARK
// REMARK: t.tiled.mlir:{{[0-9]+}}:{{[0-9]+}}: remark: @flywheel_kernel_0: 64 x 64 triangular inverse blocked: diagonal blocks of 8 by forward substitution, 3 merge(s)
// RUN: FileCheck %s --check-prefix=BLOCKED < %t.blocked.mlir
// The loop is gone with its bound constants.
// RUN: not grep -e '"scf.for"' -e 'value = 63 : index' %t.blocked.mlir
// BLOCKED: %[[BELOW:.*]] = "arith.cmpi"({{.*}}) <{predicate = 4 : i64}>
// BLOCKED: %[[DIAG:.*]] = "arith.cmpi"({{.*}}) <{predicate = 0 : i64}>
// BLOCKED: %[[IDENTITY:.*]] = "arith.select"(%[[DIAG]],
// BLOCKED: %[[A:.*]] = "arith.select"(%[[BELOW]],
// The diagonal blocks: row / 8 == column / 8.
// BLOCKED: "arith.constant"() <{value = dense<8> : vector<64x64xi32>}>
// BLOCKED: "arith.divsi"
// BLOCKED: %[[SAME:.*]] = "arith.cmpi"({{.*}}) <{predicate = 0 : i64}>
// BLOCKED: %[[BLOCK_DIAGONAL:.*]] = "arith.select"(%[[SAME]], %[[A]], %{{.*}})
// BLOCKED-NOT: "scf.for"
// BLOCKED: %[[AX1:.*]] = "flywheel.matmul"(%[[BLOCK_DIAGONAL]], %[[IDENTITY]],
// BLOCKED-NEXT: %[[X1:.*]] = "arith.subf"(%[[IDENTITY]], %[[AX1]])
// BLOCKED-COUNT-6: "flywheel.matmul"(%[[BLOCK_DIAGONAL]],
// BLOCKED-NEXT: %[[SOLVED:.*]] = "arith.subf"(%[[IDENTITY]],
// First merge: within 16-blocks, not within 8-blocks.
// BLOCKED: "arith.constant"() <{value = dense<16> : vector<64x64xi32>}>
// BLOCKED: %[[APART:.*]] = "arith.xori"
// BLOCKED: %[[E:.*]] = "arith.select"(%[[APART]], %[[A]],
// BLOCKED: %[[EX:.*]] = "flywheel.matmul"(%[[E]], %[[SOLVED]],
// BLOCKED: %[[XEX:.*]] = "flywheel.matmul"(%[[SOLVED]], %[[EX]],
// BLOCKED: %[[X16:.*]] = "arith.subf"(%[[SOLVED]], %[[XEX]])
// BLOCKED: "arith.constant"() <{value = dense<32> : vector<64x64xi32>}>
// BLOCKED: "flywheel.matmul"({{.*}}, %[[X16]],
// BLOCKED: "arith.constant"() <{value = dense<64> : vector<64x64xi32>}>
// BLOCKED: %[[X64:.*]] = "arith.subf"
// U and W (one product, T [bV | b e^g K]) use the blocked inverse.
// BLOCKED: "flywheel.matmul"(%[[X64]], {{.*}} : (vector<64x64xf32>, vector<64x256xf32>, vector<64x256xf32>)

// Four value heads per grid step in one block (gdn-block-rows=0) stack their 64 x 64
// inverses into one 256 x 256 A
// that is zero off its diagonal 64-blocks (A's select also keeps row / 64 == column /
// 64): the loop has 63 steps, and the merges stop at 64. By default the inverse is
// solved on those blocks side by side (64 x 256: row i, the columns of head h hold row
// 64 h + i of the stacked tile), each product in lane groups of 128 (two heads): the
// group's left columns times its right columns stacked back, a 128 x 128 tile, so
// each product pushes 64 rows through the MXU against 128 x 128 weights, and the
// groups' products are independent. The products keep the loop's precision.
// RUN: flywheel-opt %S/Inputs/gdn-four-heads-whole.tile.mlir --flywheel-tri-inverse=remarks=true 2>&1 | FileCheck %s --check-prefix=SIDE
// SIDE: remark: @flywheel_kernel_0: 64 x 64 triangular inverse (4 of them on the diagonal, solved side by side) blocked: diagonal blocks of 8 by the doubling product, 3 merge(s)
// SIDE-NOT: "scf.for"
// Each element's column within its head's block: column - (column / 64) * 64.
// SIDE: %[[COLUMN:.*]] = "tpu.iota"() {dimensions = array<i32: 1>} : () -> vector<64x256xi32>
// SIDE: %[[HEAD:.*]] = "arith.divsi"(%[[COLUMN]],
// SIDE: %[[START:.*]] = "arith.muli"(%[[HEAD]],
// SIDE-NEXT: %[[WITHIN:.*]] = "arith.subi"(%[[COLUMN]], %[[START]])
// The diagonal 64-blocks of the stacked tile (where T is stacked back) and of a group.
// SIDE: %[[DIAGONAL_BLOCKS:.*]] = "arith.cmpi"({{.*}}) <{predicate = 0 : i64}> : (vector<256x256xi32>, vector<256x256xi32>) -> vector<256x256xi1>
// SIDE: %[[GROUP_BLOCKS:.*]] = "arith.cmpi"({{.*}}) <{predicate = 0 : i64}> : (vector<128x128xi32>, vector<128x128xi32>) -> vector<128x128xi1>
// A's diagonal blocks side by side: the sum of its four row blocks (the identity's
// likewise).
// SIDE-NEXT: "vector.extract_strided_slice"(%[[A:.*]]) <{offsets = [0, 0], sizes = [64, 256], strides = [1, 1]}> : (vector<256x256xf32>) -> vector<64x256xf32>
// SIDE-NEXT: "vector.extract_strided_slice"(%[[A]]) <{offsets = [64, 0], sizes = [64, 256], strides = [1, 1]}>
// SIDE-NEXT: "arith.addf"
// SIDE-NEXT: "vector.extract_strided_slice"(%[[A]]) <{offsets = [128, 0], sizes = [64, 256], strides = [1, 1]}>
// SIDE-NEXT: "arith.addf"
// SIDE-NEXT: "vector.extract_strided_slice"(%[[A]]) <{offsets = [192, 0], sizes = [64, 256], strides = [1, 1]}>
// SIDE-NEXT: %[[A_SIDE:.*]] = "arith.addf"
// SIDE: "vector.extract_strided_slice"(%{{.*}}) <{offsets = [192, 0], sizes = [64, 256], strides = [1, 1]}>
// SIDE-NEXT: %[[I_SIDE:.*]] = "arith.addf"
// N: the diagonal 8-blocks, row / 8 == (column within the head) / 8.
// SIDE: "arith.divsi"(%[[WITHIN]],
// SIDE: %[[N:.*]] = "arith.select"(%{{.*}}, %[[A_SIDE]], %{{.*}}) : (vector<64x256xi1>, vector<64x256xf32>, vector<64x256xf32>) -> vector<64x256xf32>
// SIDE-NEXT: %[[X:.*]] = "arith.subf"(%[[I_SIDE]], %[[N]])
// N N, group by group: the group's columns of N times its columns stacked back (two
// copies kept on the group's diagonal blocks), the products joined side by side.
// SIDE-NEXT: %[[LEFT:.*]] = "vector.extract_strided_slice"(%[[N]]) <{offsets = [0, 0], sizes = [64, 128], strides = [1, 1]}>
// SIDE-NEXT: %[[RIGHT:.*]] = "vector.extract_strided_slice"(%[[N]]) <{offsets = [0, 0], sizes = [64, 128], strides = [1, 1]}>
// SIDE-NEXT: %[[COPIES:.*]] = "tpu.concatenate"(%[[RIGHT]], %[[RIGHT]]) {dimension = 0 : i32} : ({{.*}}) -> vector<128x128xf32>
// SIDE-NEXT: %[[ZEROS:.*]] = "arith.constant"
// SIDE-NEXT: %[[N_STACKED:.*]] = "arith.select"(%[[GROUP_BLOCKS]], %[[COPIES]], %[[ZEROS]])
// SIDE-NEXT: "arith.constant"
// SIDE-NEXT: %[[FIRST:.*]] = "flywheel.matmul"(%[[LEFT]], %[[N_STACKED]], %{{.*}}) {precision = "bf16x3", transpose_rhs = false} : (vector<64x128xf32>, vector<128x128xf32>, vector<64x128xf32>) -> vector<64x128xf32>
// SIDE-NEXT: "vector.extract_strided_slice"(%[[N]]) <{offsets = [0, 128], sizes = [64, 128], strides = [1, 1]}>
// SIDE: %[[SECOND:.*]] = "flywheel.matmul"
// SIDE-NEXT: %[[N2:.*]] = "tpu.concatenate"(%[[FIRST]], %[[SECOND]]) {dimension = 1 : i32} : ({{.*}}) -> vector<64x256xf32>
// SIDE-NEXT: %[[F2:.*]] = "arith.addf"(%[[I_SIDE]], %[[N2]])
// SIDE-NEXT: "vector.extract_strided_slice"(%[[X]]) <{offsets = [0, 0], sizes = [64, 128]
// SIDE-NEXT: "vector.extract_strided_slice"(%[[F2]]) <{offsets = [0, 0], sizes = [64, 128]
// Every product of the inverse so: 10 products, 20 group products, none 256 wide.
// SIDE-COUNT-18: "flywheel.matmul"({{.*}}) {precision = "bf16x3", transpose_rhs = false} : (vector<64x128xf32>, vector<128x128xf32>, vector<64x128xf32>) -> vector<64x128xf32>
// SIDE-NOT: vector<256x256xf32>, vector<64x256xf32>) -> vector<64x256xf32>
// T stacked back for T [bV | b e^g K].
// SIDE: %[[SOLVED:.*]] = "arith.subf"
// SIDE-NEXT: "tpu.concatenate"(%[[SOLVED]], %[[SOLVED]], %[[SOLVED]], %[[SOLVED]])
// SIDE-NEXT: "arith.constant"
// SIDE-NEXT: %[[T:.*]] = "arith.select"(%[[DIAGONAL_BLOCKS]],
// SIDE-NOT: "flywheel.matmul"({{.*}} : (vector<64x
// SIDE: "flywheel.matmul"(%[[T]], {{.*}} -> vector<256x256xf32>

// Heads whose side-by-side row is not whole lane groups of 128 (three heads, 192
// lanes) take each product whole: the right operand stacked back to 192 x 192.
// RUN: flywheel-opt %S/Inputs/gdn-three-heads.tile.mlir --flywheel-tri-inverse | FileCheck %s --check-prefix=THREE
// THREE-NOT: (vector<64x128xf32>, vector<128x128xf32>
// THREE-COUNT-10: "flywheel.matmul"({{.*}}) {precision = "bf16x3", transpose_rhs = false} : (vector<64x192xf32>, vector<192x192xf32>, vector<64x192xf32>) -> vector<64x192xf32>

// Independent inverses of consecutive loops are solved together (interleave, on by
// default): by default a step works on diagonal blocks of 128 rows (two heads), so four
// heads make two loops per chunk; their products alternate, and both blocks' T [bV | b
// e^g K] come after all 20 products of the two inverses (here those of the first of two
// chunks a step, which are solved apart: below). With interleave=false each inverse is
// solved where its loop was.
// RUN: flywheel-opt %S/Inputs/gdn-four-heads.tile.mlir --flywheel-tri-inverse=remarks=true 2>&1 | FileCheck %s --check-prefix=TOGETHER
// TOGETHER: remark: @flywheel_kernel_0: 64 x 64 triangular inverse (2 of them on the diagonal, solved side by side) blocked: diagonal blocks of 8 by the doubling product, 3 merge(s), 2 loops solved together
// TOGETHER-NOT: "scf.for"
// TOGETHER-NOT: vector<128x256xf32>) -> vector<128x256xf32>
// TOGETHER: %[[N_FIRST:.*]] = "arith.select"({{.*}}) : (vector<64x128xi1>, vector<64x128xf32>, vector<64x128xf32>) -> vector<64x128xf32>
// TOGETHER-NEXT: "arith.constant"
// TOGETHER-NEXT: %[[N_SECOND:.*]] = "arith.select"({{.*}}) : (vector<64x128xi1>, vector<64x128xf32>, vector<64x128xf32>) -> vector<64x128xf32>
// TOGETHER: "flywheel.matmul"(%[[N_FIRST]], {{.*}}) {precision = "bf16x3", transpose_rhs = false} : (vector<64x128xf32>, vector<128x128xf32>, vector<64x128xf32>)
// TOGETHER: "flywheel.matmul"(%[[N_SECOND]], {{.*}}) {precision = "bf16x3", transpose_rhs = false} : (vector<64x128xf32>, vector<128x128xf32>, vector<64x128xf32>)
// TOGETHER-COUNT-18: "flywheel.matmul"({{.*}}) {precision = "bf16x3", transpose_rhs = false} : (vector<64x128xf32>, vector<128x128xf32>, vector<64x128xf32>)
// TOGETHER-COUNT-2: "flywheel.matmul"({{.*}}) {precision = "bf16x3", transpose_rhs = false} : (vector<128x128xf32>, vector<128x256xf32>, vector<128x256xf32>)
// RUN: flywheel-opt %S/Inputs/gdn-four-heads.tile.mlir --flywheel-tri-inverse='interleave=false remarks=true' 2>&1 | FileCheck %s --check-prefix=SEPARATE
// SEPARATE-COUNT-2: remark: @flywheel_kernel_0: 64 x 64 triangular inverse (2 of them on the diagonal, solved side by side) blocked: diagonal blocks of 8 by the doubling product, 3 merge(s){{$}}
// SEPARATE-COUNT-10: "flywheel.matmul"({{.*}}) {precision = "bf16x3", transpose_rhs = false} : (vector<64x128xf32>, vector<128x128xf32>, vector<64x128xf32>)
// SEPARATE-NEXT: "arith.subf"
// SEPARATE-NEXT: "tpu.concatenate"
// SEPARATE: "flywheel.matmul"({{.*}}) {precision = "bf16x3", transpose_rhs = false} : (vector<128x128xf32>, vector<128x256xf32>, vector<128x256xf32>)
// SEPARATE-COUNT-10: "flywheel.matmul"({{.*}}) {precision = "bf16x3", transpose_rhs = false} : (vector<64x128xf32>, vector<128x128xf32>, vector<64x128xf32>)
// SEPARATE: "flywheel.matmul"({{.*}}) {precision = "bf16x3", transpose_rhs = false} : (vector<128x128xf32>, vector<128x256xf32>, vector<128x256xf32>)
// Near miss: with two chunks per step in program order, the first chunk's state update
// (which stores its output) uses its inverses before the second chunk's loops, so the
// chunks' inverses are solved apart (each chunk's two blocks together);
// flywheel-pipeline issues the second chunk's parallel work before that update, and all
// four are solved together.
// RUN: flywheel-opt %S/Inputs/gdn-four-heads.tile.mlir --flywheel-tri-inverse=remarks=true 2>&1 >/dev/null | FileCheck %s --check-prefix=CHUNKS-APART
// CHUNKS-APART-COUNT-2: 3 merge(s), 2 loops solved together
// CHUNKS-APART-NOT: remark
// RUN: flywheel-opt %S/Inputs/gdn-four-heads.tile.mlir --pass-pipeline='builtin.module(flywheel-pipeline,flywheel-tri-inverse{remarks=true})' 2>&1 >/dev/null | FileCheck %s --check-prefix=PIPELINED
// PIPELINED: 3 merge(s), 4 loops solved together
// PIPELINED-NOT: remark

// With side-by-side=false the inverse works on the stacked 256 x 256 tiles. The defaults
// otherwise: blocks of 8 by doubling, (I - N)(I + N^2)(I + N^4): 2 squarings and 2
// products, then 3 merges of 2 products each, all keeping bf16x3.
// RUN: flywheel-opt %S/Inputs/gdn-four-heads-whole.tile.mlir --flywheel-tri-inverse='side-by-side=false remarks=true' 2>&1 | FileCheck %s --check-prefix=STACKED
// STACKED: remark: @flywheel_kernel_0: 64 x 64 triangular inverse (4 of them on the diagonal) blocked: diagonal blocks of 8 by the doubling product, 3 merge(s)
// STACKED-NOT: dense<128> : vector<256x256xi32>
// STACKED-NOT: "scf.for"
// STACKED-NOT: vector<64x256xf32>
// STACKED: "arith.constant"() <{value = dense<8> : vector<256x256xi32>}>
// STACKED: %[[X:.*]] = "arith.subf"(%[[I:.*]], %[[N:.*]]) {{.*}} : (vector<256x256xf32>
// STACKED-NEXT: %{{.*}} = "arith.constant"
// STACKED-NEXT: %[[N2:.*]] = "flywheel.matmul"(%[[N]], %[[N]], %{{.*}}) {precision = "bf16x3", transpose_rhs = false}
// STACKED-NEXT: %[[F2:.*]] = "arith.addf"(%[[I]], %[[N2]])
// STACKED-NEXT: %{{.*}} = "arith.constant"
// STACKED-NEXT: "flywheel.matmul"(%[[X]], %[[F2]], %{{.*}}) {precision = "bf16x3", transpose_rhs = false}
// STACKED-COUNT-8: "flywheel.matmul"({{.*}}) {precision = "bf16x3", transpose_rhs = false} : (vector<256x256xf32>, vector<256x256xf32>, vector<256x256xf32>)
// STACKED-NEXT: %[[T:.*]] = "arith.subf"
// STACKED: "flywheel.matmul"(%[[T]], {{.*}} -> vector<256x256xf32>

// refine-from=1: the blocked inverse's products in one bf16 pass, then one Newton step at
// the loop's precision: R = (I - X) - A X (bf16x3), X <- X + X R (one pass: R is of the
// order of bf16's rounding), on diagonal blocks of 4 whatever the block option: (I -
// N)(I + N^2) by doubling is 2 products, then 4 merges of 2: 10 one-pass products before
// the step. The kernel's products at bf16x3 (flywheel-tile's default gdn-precision):
// RUN: sed 's/{transpose_rhs = false}/{precision = "bf16x3", transpose_rhs = false}/' %t.tiled.mlir | flywheel-opt --flywheel-tri-inverse='refine-from=1 remarks=true' 2>&1 | FileCheck %s --check-prefix=REFINED
// REFINED: remark: @flywheel_kernel_0: 64 x 64 triangular inverse blocked: diagonal blocks of 4 by the doubling product, 4 merge(s), products in one bf16 pass and one Newton step
// REFINED: %[[BELOW:.*]] = "arith.cmpi"({{.*}}) <{predicate = 4 : i64}>
// REFINED: %[[DIAG:.*]] = "arith.cmpi"({{.*}}) <{predicate = 0 : i64}>
// REFINED: %[[IDENTITY:.*]] = "arith.select"(%[[DIAG]],
// REFINED: %[[A:.*]] = "arith.select"(%[[BELOW]],
// REFINED-NOT: "scf.for"
// REFINED-NOT: precision = "bf16x3"
// REFINED: "arith.constant"() <{value = dense<4> : vector<64x64xi32>}>
// REFINED-COUNT-10: "flywheel.matmul"({{.*}}) {precision = "bf16", transpose_rhs = false} : (vector<64x64xf32>, vector<64x64xf32>, vector<64x64xf32>)
// REFINED-NEXT: %[[X:.*]] = "arith.subf"
// REFINED-NEXT: %[[I_MINUS_X:.*]] = "arith.subf"(%[[IDENTITY]], %[[X]])
// REFINED-NEXT: "arith.constant"
// REFINED-NEXT: %[[AX:.*]] = "flywheel.matmul"(%[[A]], %[[X]], %{{.*}}) {precision = "bf16x3", transpose_rhs = false}
// REFINED-NEXT: %[[R:.*]] = "arith.subf"(%[[I_MINUS_X]], %[[AX]])
// REFINED-NEXT: "arith.constant"
// REFINED-NEXT: %[[XR:.*]] = "flywheel.matmul"(%[[X]], %[[R]], %{{.*}}) {precision = "bf16", transpose_rhs = false}
// REFINED-NEXT: %[[T:.*]] = "arith.addf"(%[[X]], %[[XR]])
// REFINED-NOT: precision = "bf16",
// REFINED: "flywheel.matmul"(%[[T]], {{.*}} : (vector<64x64xf32>, vector<64x256xf32>, vector<64x256xf32>)
// f32 products (no precision: Mosaic's fp32) are refined too, the Newton step's residual
// in f32.
// RUN: flywheel-opt %t.tiled.mlir --flywheel-tri-inverse='refine-from=1' | FileCheck %s --check-prefix=REFINED-F32
// REFINED-F32-COUNT-10: "flywheel.matmul"({{.*}}) {precision = "bf16", transpose_rhs = false} : (vector<64x64xf32>, vector<64x64xf32>, vector<64x64xf32>)
// REFINED-F32-NEXT: %[[X:.*]] = "arith.subf"
// REFINED-F32-NEXT: "arith.subf"
// REFINED-F32-NEXT: "arith.constant"
// REFINED-F32-NEXT: "flywheel.matmul"(%{{.*}}, %[[X]], %{{.*}}) {transpose_rhs = false}
// Near miss: a loop whose products already take one bf16 pass is blocked as it is, not
// refined.
// RUN: sed 's/{transpose_rhs = false}/{precision = "bf16", transpose_rhs = false}/' %t.tiled.mlir | flywheel-opt --flywheel-tri-inverse='refine-from=1 remarks=true' 2>&1 | FileCheck %s --check-prefix=ONE-PASS
// ONE-PASS: remark: @flywheel_kernel_0: 64 x 64 triangular inverse blocked: diagonal blocks of 8 by the doubling product, 3 merge(s), not refined (its products already take one pass)
// ONE-PASS-COUNT-10: "flywheel.matmul"({{.*}}) {precision = "bf16", transpose_rhs = false} : (vector<64x64xf32>, vector<64x64xf32>, vector<64x64xf32>)
// ONE-PASS-NEXT: %[[T:.*]] = "arith.subf"
// ONE-PASS-NOT: "flywheel.matmul"({{.*}}) {precision = "bf16", transpose_rhs = false} : (vector<64x64xf32>, vector<64x64xf32>
// ONE-PASS: "flywheel.matmul"(%[[T]],

// Near miss: refined only in groups of at least refine-from inverses solved together;
// here each chunk's inverse is solved alone (its state update stores between them).
// RUN: flywheel-opt %t.tiled.mlir --flywheel-tri-inverse='refine-from=2 remarks=true' 2>&1 | FileCheck %s --check-prefix=FEW
// FEW: remark: @flywheel_kernel_0: 64 x 64 triangular inverse blocked: diagonal blocks of 8 by the doubling product, 3 merge(s), not refined (1 solved together, fewer than 2)
// FEW-NOT: precision = "bf16"
// RUN: not flywheel-opt %t.tiled.mlir --flywheel-tri-inverse='refine-from=-1' 2>&1 | FileCheck %s --check-prefix=NEGATIVE
// NEGATIVE: error: flywheel-tri-inverse: refine-from must be at least 0, not -1

// One head per step: side by side changes nothing (BLOCKED above runs with the default).
// RUN: flywheel-opt %t.tiled.mlir --flywheel-tri-inverse='block=8 diagonal=substitution side-by-side=false' | diff - %t.blocked.mlir

// Near misses, left alone with a remark: A under the lower triangle with its diagonal
// (not nilpotent: forward substitution with it is not (I + A)^-1 any more) ...
// RUN: sed 's/predicate = 4 : i64/predicate = 5 : i64/' %t.tiled.mlir | flywheel-opt --flywheel-tri-inverse=remarks=true 2>&1 | FileCheck %s --check-prefix=DIAGONAL
// DIAGONAL: remark: @flywheel_kernel_0: loop left alone: A is not selected under the strict lower triangle
// DIAGONAL: "arith.constant"() <{value = 63 : index}>
// ... too few steps to settle every row ...
// RUN: sed 's/value = 63 : index/value = 40 : index/' %t.tiled.mlir | flywheel-opt --flywheel-tri-inverse=remarks=true 2>&1 | FileCheck %s --check-prefix=SHORT
// SHORT: remark: @flywheel_kernel_0: loop left alone: 40 steps do not settle all 64 rows
// SHORT-NOT: dense<16> : vector<64x64xi32>
// ... and a step that is X A, not A X.
// RUN: sed -E 's/"flywheel.matmul"\((%[0-9]+), (%arg[0-9]+), /"flywheel.matmul"(\2, \1, /' %t.tiled.mlir | flywheel-opt --flywheel-tri-inverse=remarks=true 2>&1 | FileCheck %s --check-prefix=ORDER
// ORDER: remark: @flywheel_kernel_0: loop left alone: the step's product is not A X
// A chunk no larger than a block is already solved by its loop.
// RUN: flywheel-opt %S/Inputs/gdn-chunk-16.tile.mlir --flywheel-tri-inverse='block=16 remarks=true' 2>&1 | FileCheck %s --check-prefix=SMALL
// SMALL: remark: @flywheel_kernel_0: a 16 x 16 inverse is already one diagonal block of 16
// Attention kernels have no such loop; bad options are errors.
// RUN: flywheel-opt %S/Inputs/attention-causal-bf16.tile.mlir --flywheel-tri-inverse=remarks=true 2>&1 | FileCheck %s --check-prefix=ATTENTION
// ATTENTION-NOT: remark
// ATTENTION: stable_mosaic.version
// RUN: not flywheel-opt %t.tiled.mlir --flywheel-tri-inverse=block=12 2>&1 | FileCheck %s --check-prefix=OPTION
// OPTION: flywheel-opt: pass 'flywheel-tri-inverse': invalid value '12' for option 'block'
