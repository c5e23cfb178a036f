// flywheel-pipeline: software-pipelines each attention kernel's key loop. It records
// flywheel.key_splits on the flywheel.attention; flywheel-tile runs every key block as
// that many sub-blocks, each its own online-softmax update, and issues sub-block c+1's
// QKᵀ matmul before sub-block c's softmax and PV matmul.

// RUN: flywheel-opt %S/Inputs/attention-bnth-bf16.mlir --flywheel-pipeline=remarks=true -o %t.recorded.mlir 2>&1 | FileCheck %s --check-prefix=REMARK
// REMARK: attention-bnth-bf16.mlir:3:8: remark: key loop pipelined in 2 sub-block(s) per key block
// RUN: FileCheck %s --check-prefix=ATTRIBUTE < %t.recorded.mlir
// ATTRIBUTE: "flywheel.attention"({{.*}}flywheel.key_splits = 2 : i64

// Tiled with 256-key blocks: two sub-blocks of 128 keys. Both QKᵀ matmuls (the second on
// K rows 128..255) come before the first exp; then sub-block 0's softmax and PV matmul,
// then sub-block 1's on V rows 128..255.
// RUN: flywheel-opt %t.recorded.mlir --flywheel-tile='block-kv=256 remarks=true' -o %t.tiled.mlir 2>&1 | FileCheck %s --check-prefix=TILE-REMARK
// TILE-REMARK: remark: tiled into a Mosaic kernel (grid 1x2x1x1, query group 1, blocks 256x256, standard orientation, row sum on the VPU, 2 key sub-block(s))
// RUN: FileCheck %s --check-prefix=ORDER < %t.tiled.mlir
// ORDER: %[[Q:.*]] = "vector.shape_cast"({{.*}}) : (vector<1x1x256x128xbf16>) -> vector<256x128xbf16>
// ORDER: "vector.load"(%{{.*}}) : (memref<1x1x256x128xbf16>, index, index, index, index) -> vector<1x1x128x128xbf16>
// ORDER: %[[S0:.*]] = "flywheel.matmul"(%[[Q]], {{.*}}) {transpose_rhs = true} : (vector<256x128xbf16>, vector<128x128xbf16>, vector<256x128xf32>) -> vector<256x128xf32>
// ORDER: %[[SECOND:.*]] = "arith.constant"() <{value = 128 : index}>
// ORDER: "vector.load"(%{{.*}}, %[[SECOND]], %{{.*}}) : (memref<1x1x256x128xbf16>, index, index, index, index) -> vector<1x1x128x128xbf16>
// ORDER: %[[S1:.*]] = "flywheel.matmul"(%[[Q]], {{.*}}) {transpose_rhs = true}
// ORDER: "math.exp"
// ORDER: "flywheel.matmul"({{.*}}) {transpose_rhs = false} : (vector<256x128xbf16>, vector<128x128xbf16>, vector<256x128xf32>) -> vector<256x128xf32>
// ORDER: "math.exp"
// ORDER: %[[SECOND_V:.*]] = "arith.constant"() <{value = 128 : index}>
// ORDER: "vector.load"(%{{.*}}, %[[SECOND_V]], %{{.*}}) : (memref<1x1x256x128xbf16>, index, index, index, index) -> vector<1x1x128x128xbf16>
// ORDER: "flywheel.matmul"({{.*}}) {transpose_rhs = false}
// The pipelined kernel compiles for every target.
// RUN: flywheel-opt %t.tiled.mlir --flywheel-lower-to-mosaic -o %t.lowered.mlir
// RUN: flywheel compile --target v5e %t.lowered.mlir 2>/dev/null | FileCheck %s --check-prefix=COMPILE
// RUN: flywheel compile --target v6e %t.lowered.mlir 2>/dev/null | FileCheck %s --check-prefix=COMPILE
// RUN: flywheel compile --target tpu7x %t.lowered.mlir 2>/dev/null | FileCheck %s --check-prefix=COMPILE
// COMPILE: compiled {{.*}} for

// Near misses: a key block of one lane tile (128 keys) cannot split into whole lane
// tiles, so it runs unsplit; 4 sub-blocks of a 256-key block drop to 2.
// RUN: flywheel-opt %t.recorded.mlir --flywheel-tile='block-kv=128 remarks=true' 2>&1 >/dev/null | FileCheck %s --check-prefix=NARROW
// NARROW: remark: tiled into a Mosaic kernel (grid 1x2x1x2, query group 1, blocks 256x128, standard orientation, row sum on the VPU, 1 key sub-block(s))
// RUN: flywheel-opt %S/Inputs/attention-bnth-bf16.mlir --pass-pipeline='builtin.module(flywheel-pipeline{key-splits=4},flywheel-tile{block-kv=256 remarks=true})' 2>&1 >/dev/null | FileCheck %s --check-prefix=FEWER
// FEWER: remark: tiled into a Mosaic kernel ({{.*}}, 2 key sub-block(s))
// key-splits=1 records no pipelining: one matmul pair per key block.
// RUN: flywheel-opt %S/Inputs/attention-bnth-bf16.mlir --pass-pipeline='builtin.module(flywheel-pipeline{key-splits=1},flywheel-tile{block-kv=256})' | FileCheck %s --check-prefix=ONE
// ONE-COUNT-2: "flywheel.matmul"
// ONE-NOT: "flywheel.matmul"

// Diagnostics: a non-positive count is an error; an attribute flywheel-tile does not
// understand keeps the op for the reference lowering, with a remark.
// RUN: not flywheel-opt %S/Inputs/attention-bnth-bf16.mlir --flywheel-pipeline=key-splits=0 -o %t.none.mlir 2>&1 | FileCheck %s --check-prefix=ZERO
// ZERO: error: flywheel-pipeline: key-splits must be at least 1, not 0
// RUN: not test -e %t.none.mlir
// RUN: sed 's/kv_heads = 2}/kv_heads = 2, flywheel.key_splits = "two"}/' %S/Inputs/attention-bnth-bf16.mlir | flywheel-opt --flywheel-tile=remarks=true 2>&1 | FileCheck %s --check-prefix=BAD
// BAD: remark: kept for the reference lowering: flywheel.key_splits is "two", not a positive integer
// BAD: "flywheel.attention"
