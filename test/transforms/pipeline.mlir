// flywheel-pipeline: software-pipelines the key-block bodies of attention kernels (tile
// IR). flywheel-tile{key-splits=N} writes a key block as N sub-blocks in program order,
// scores then softmax update each; the pass annotates each op with its unit and latency,
// schedules each sub-block's score ops before an earlier update, and expands the
// schedule by moving them. Each step can be stopped after (steps=annotate|schedule).
// Gated DeltaNet kernels (at the end) get the same steps over their chunks.

// The kernels are flywheel-tile's, committed as tile IR (Inputs/*.tile.mlir, each with the
// command that made it), so that the checks of the pass follow it alone; the numerics
// checks compare with the reference lowering of the attention program.

// flywheel-tile splits 256-key blocks into two sub-blocks of 128 keys, in program order:
// K rows 0..127, QKᵀ, softmax and PV, then K rows 128..255, QKᵀ, softmax and PV (the
// kernel committed; how flywheel-tile splits key blocks is tested in tile/tile.mlir).
// RUN: flywheel-opt %S/Inputs/attention-bf16-split.tile.mlir -o %t.tiled.mlir
// RUN: FileCheck %s --check-prefix=SEQUENTIAL < %t.tiled.mlir
// SEQUENTIAL: "flywheel.matmul"({{.*}}) {transpose_rhs = true} : (vector<256x128xbf16>, vector<128x128xbf16>, vector<256x128xf32>) -> vector<256x128xf32>
// SEQUENTIAL: "math.exp"
// SEQUENTIAL: "flywheel.matmul"({{.*}}) {transpose_rhs = false}
// SEQUENTIAL: "flywheel.matmul"({{.*}}) {transpose_rhs = true}
// SEQUENTIAL: "math.exp"
// SEQUENTIAL: "flywheel.matmul"({{.*}}) {transpose_rhs = false}

// annotate: every op of the body gets its unit, its issue latency and its position. A
// 256x128 by 128x128 matmul is 256 x 128 x 128 multiply-adds at 262,144 a cycle (two MXUs), 16;
// an exp of 256x128 f32 is 32 vregs on the EUP; a 128x128 bf16 load is 8 vregs.
// RUN: flywheel-opt %t.tiled.mlir --flywheel-pipeline=steps=annotate | FileCheck %s --check-prefix=ANNOTATE
// ANNOTATE: "vector.load"({{.*}}) {flywheel.latency = 8 : i64, flywheel.position = {{[0-9]+}} : i64, flywheel.unit = "load"} : (memref<1x1x256x128xbf16>, index, index, index, index) -> vector<1x1x128x128xbf16>
// ANNOTATE: "flywheel.matmul"({{.*}}) {flywheel.latency = 16 : i64, flywheel.position = {{[0-9]+}} : i64, flywheel.unit = "mxu", transpose_rhs = true}
// ANNOTATE: "vector.multi_reduction"({{.*}}) <{kind = #vector.kind<maximumf>, reduction_dims = array<i64: 1>}> {flywheel.latency = 32 : i64, flywheel.position = {{[0-9]+}} : i64, flywheel.unit = "xlu"}
// ANNOTATE: "math.exp"({{.*}}) <{{.*}}> {flywheel.latency = 32 : i64, flywheel.position = {{[0-9]+}} : i64, flywheel.unit = "eup"} : (vector<256x128xf32>) -> vector<256x128xf32>
// ANNOTATE-NOT: flywheel.issue_before

// schedule: sub-block 1's score ops (K load, QKᵀ, scale) are to issue before sub-block
// 0's update, which starts at its row max (with the max's initial value); sub-block 0's
// own ops stay.
// RUN: flywheel-opt %t.tiled.mlir --flywheel-pipeline='steps=schedule remarks=true' -o %t.scheduled.mlir 2>&1 | FileCheck %s --check-prefix=SCHEDULE-REMARK
// SCHEDULE-REMARK: remark: @flywheel_kernel_0: 2 sub-blocks, scores issued 1 update(s) ahead
// RUN: FileCheck %s --check-prefix=SCHEDULE < %t.scheduled.mlir
// SCHEDULE: "flywheel.matmul"({{.*}}) {flywheel.latency = 16 : i64, flywheel.position = {{[0-9]+}} : i64, flywheel.unit = "mxu", transpose_rhs = true}
// SCHEDULE: "arith.constant"() <{value = dense<0xFF800000> : vector<256xf32>}> {flywheel.latency = 1 : i64, flywheel.position = [[UPDATE:[0-9]+]] : i64, flywheel.unit = "vpu"}
// SCHEDULE-NEXT: "vector.multi_reduction"
// SCHEDULE: "vector.load"({{.*}}) {flywheel.issue_before = [[UPDATE]] : i64, {{.*}}, flywheel.unit = "load"}
// SCHEDULE: "flywheel.matmul"({{.*}}) {flywheel.issue_before = [[UPDATE]] : i64, {{.*}}, flywheel.unit = "mxu", transpose_rhs = true}
// SCHEDULE: "arith.mulf"({{.*}}) <{{.*}}> {flywheel.issue_before = [[UPDATE]] : i64, {{.*}}} : (vector<256x128xf32>, vector<256x128xf32>)
// SCHEDULE-NOT: "math.exp"({{.*}}) {{.*}}flywheel.issue_before

// expand: both QKᵀ matmuls (the second on K rows 128..255) come before the first exp;
// then sub-block 0's softmax and PV matmul, then sub-block 1's on V rows 128..255. No
// annotation is left.
// RUN: flywheel-opt %t.tiled.mlir --flywheel-pipeline -o %t.pipelined.mlir
// RUN: FileCheck %s --check-prefix=ORDER < %t.pipelined.mlir
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
// RUN: FileCheck %s --check-prefix=CLEAN < %t.pipelined.mlir
// CLEAN-NOT: flywheel.unit
// CLEAN-NOT: flywheel.issue_before
// The pipelined kernel compiles for every target and computes what the reference does
// (kernels::pipeline::<config> in the suite checks every kernel configuration).
// RUN: flywheel-opt %t.pipelined.mlir --flywheel-lower-to-mosaic -o %t.lowered.mlir
// RUN: flywheel compile --target v5e %t.lowered.mlir 2>/dev/null | FileCheck %s --check-prefix=COMPILE
// RUN: flywheel compile --target v6e %t.lowered.mlir 2>/dev/null | FileCheck %s --check-prefix=COMPILE
// RUN: flywheel compile --target tpu7x %t.lowered.mlir 2>/dev/null | FileCheck %s --check-prefix=COMPILE
// COMPILE: compiled {{.*}} for
// RUN: flywheel-opt %S/../Inputs/attention-bnth-bf16.mlir --flywheel-lower-to-stablehlo -o %t.reference.mlir
// RUN: flywheel check %t.reference.mlir %t.lowered.mlir | FileCheck %s --check-prefix=CHECKED
// CHECKED: check: passed

// Causal: the masked (diagonal) and unmasked step bodies are each pipelined.
// RUN: flywheel-opt %S/Inputs/attention-causal-bf16-split-1024.tile.mlir --flywheel-pipeline=remarks=true 2>&1 >/dev/null | FileCheck %s --check-prefix=CAUSAL
// CAUSAL: remark: @flywheel_kernel_0: 2 sub-blocks, scores issued 1 update(s) ahead; 2 sub-blocks, scores issued 1 update(s) ahead

// Near miss: a kernel of one sub-block (here key blocks of 64) has nothing to overlap.
// RUN: flywheel-opt %S/Inputs/attention-kv64-bf16.tile.mlir --flywheel-pipeline=remarks=true 2>&1 | FileCheck %s --check-prefix=ONE-SUB-BLOCK
// ONE-SUB-BLOCK: remark: @flywheel_kernel_0: one sub-block: nothing to overlap
// ONE-SUB-BLOCK-NOT: flywheel.unit
// Without tile IR there is nothing to pipeline: the program comes back unchanged.
// RUN: flywheel-opt %S/../Inputs/attention-bnth-bf16.mlir --flywheel-pipeline=remarks=true 2>&1 | FileCheck %s --check-prefix=NOTHING
// NOTHING-NOT: remark
// NOTHING: "flywheel.attention"

// Diagnostics: an unknown step is an error.
// RUN: not flywheel-opt %S/../Inputs/attention-bnth-bf16.mlir --flywheel-pipeline=steps=all 2>&1 | FileCheck %s --check-prefix=STEPS
// STEPS: invalid value 'all' for option 'steps'

// Gated DeltaNet: flywheel-tile writes a grid step's chunks in order (here one step of
// two 64-token chunks, two value heads stacked, after flywheel-layout): each chunk's
// parallel work (K Kᵀ and Q Kᵀ as bf16 128x128 products, gates, the inverse, U and W),
// then its state update (W S with the state loaded at the step's start, V', O and its
// store, Kᵀ V').
// RUN: flywheel-opt %S/Inputs/gdn-bf16.tile.mlir -o %t.gdn.mlir
// RUN: FileCheck %s --check-prefix=GDN-SEQUENTIAL < %t.gdn.mlir
// GDN-SEQUENTIAL: %[[S0:.*]] = "vector.shape_cast"(%{{.*}}) : (vector<1x128x128xf32>) -> vector<128x128xf32>
// GDN-SEQUENTIAL-COUNT-2: {transpose_rhs = true} : (vector<128x128xbf16>, vector<128x128xbf16>, vector<128x128xf32>)
// GDN-SEQUENTIAL: "flywheel.matmul"(%{{.*}}, %[[S0]], %{{.*}})
// GDN-SEQUENTIAL: {transpose_rhs = true} : (vector<128x128xbf16>, vector<128x128xbf16>, vector<128x128xf32>)

// annotate: each op's chunk, stage and position. The initial-state write is serial, the
// state loads and all that uses them (the output store too) are the state's, the rest
// is parallel.
// RUN: flywheel-opt %t.gdn.mlir --flywheel-pipeline=steps=annotate | FileCheck %s --check-prefix=GDN-ANNOTATE
// GDN-ANNOTATE: }) {flywheel.chunk = 0 : i64, flywheel.position = {{[0-9]+}} : i64, flywheel.stage = "serial"} : (i1) -> ()
// GDN-ANNOTATE: "vector.load"(%{{.*}}) {flywheel.chunk = 0 : i64, flywheel.position = {{[0-9]+}} : i64, flywheel.stage = "state"} : (memref<2x128x128xf32>
// GDN-ANNOTATE: "flywheel.matmul"({{.*}}) {flywheel.chunk = 0 : i64, flywheel.position = {{[0-9]+}} : i64, flywheel.stage = "parallel", transpose_rhs = true}
// GDN-ANNOTATE: "tpu.vector_store"({{.*}}flywheel.chunk = 0 : i64, {{.*}}flywheel.stage = "state"{{.*}}memref<1x128x256xbf16>
// GDN-ANNOTATE: "flywheel.matmul"({{.*}}) {flywheel.chunk = 1 : i64, flywheel.position = {{[0-9]+}} : i64, flywheel.stage = "parallel", transpose_rhs = true}

// schedule: chunk 1's parallel ops are to issue before chunk 0's first product of the
// state with its parallel work (W S); chunk 0's ops stay.
// RUN: flywheel-opt %t.gdn.mlir --flywheel-pipeline='steps=schedule remarks=true' -o %t.gdn.scheduled.mlir 2>&1 | FileCheck %s --check-prefix=GDN-REMARK
// GDN-REMARK: remark: @flywheel_kernel_0: 2 chunks, {{[0-9]+}} chunk-parallel ops issued 1 chunk(s) ahead of the state updates
// RUN: FileCheck %s --check-prefix=GDN-SCHEDULE < %t.gdn.scheduled.mlir
// GDN-SCHEDULE: "flywheel.matmul"({{.*}}) {flywheel.chunk = 0 : i64, flywheel.position = [[ANCHOR:[0-9]+]] : i64, flywheel.stage = "state"
// GDN-SCHEDULE: "flywheel.matmul"({{.*}}) {flywheel.chunk = 1 : i64, flywheel.issue_before = [[ANCHOR]] : i64, {{.*}}flywheel.stage = "parallel", transpose_rhs = true}
// RUN: FileCheck %s --check-prefix=GDN-CHUNK0-STAYS < %t.gdn.scheduled.mlir
// GDN-CHUNK0-STAYS-NOT: flywheel.chunk = 0 : i64, flywheel.issue_before

// expand: chunk 1's K Kᵀ and Q Kᵀ now come before chunk 0's W S; no annotation is left.
// RUN: flywheel-opt %t.gdn.mlir --flywheel-pipeline -o %t.gdn.pipelined.mlir
// RUN: FileCheck %s --check-prefix=GDN-ORDER < %t.gdn.pipelined.mlir
// GDN-ORDER: %[[S0:.*]] = "vector.shape_cast"(%{{.*}}) : (vector<1x128x128xf32>) -> vector<128x128xf32>
// GDN-ORDER-COUNT-4: {transpose_rhs = true} : (vector<128x128xbf16>, vector<128x128xbf16>, vector<128x128xf32>)
// GDN-ORDER: "flywheel.matmul"(%{{.*}}, %[[S0]], %{{.*}})
// RUN: FileCheck %s --check-prefix=GDN-CLEAN < %t.gdn.pipelined.mlir
// GDN-CLEAN-NOT: flywheel.chunk
// GDN-CLEAN-NOT: flywheel.stage
// GDN-CLEAN-NOT: flywheel.issue_before
// The pipelined kernel compiles and matches the reference (gated_delta::pipelined::<case>
// and gated_delta::defaults::<case> in the suite check its numerics).
// RUN: flywheel-opt %t.gdn.pipelined.mlir --flywheel-tri-inverse --flywheel-lower-to-mosaic -o %t.gdn.lowered.mlir
// RUN: flywheel compile --target v6e %t.gdn.lowered.mlir 2>/dev/null | FileCheck %s --check-prefix=COMPILE

// Near misses: one chunk per step has nothing to overlap; lookahead 0 keeps program order.
// RUN: flywheel-opt %S/Inputs/gdn-three-heads.tile.mlir --flywheel-pipeline=remarks=true 2>&1 >/dev/null | FileCheck %s --check-prefix=GDN-ONE-CHUNK
// GDN-ONE-CHUNK: remark: @flywheel_kernel_0: 1 chunk(s): nothing scheduled
// RUN: flywheel-opt %t.gdn.mlir --flywheel-pipeline='gdn-lookahead=0 remarks=true' -o %t.gdn.unmoved.mlir 2>&1 | FileCheck %s --check-prefix=GDN-NO-LOOKAHEAD
// GDN-NO-LOOKAHEAD: remark: @flywheel_kernel_0: 2 chunk(s): nothing scheduled
// RUN: FileCheck %s --check-prefix=GDN-SEQUENTIAL < %t.gdn.unmoved.mlir

// Diagnostics: a negative lookahead is an error, with no output file.
// RUN: not flywheel-opt %t.gdn.mlir --flywheel-pipeline=gdn-lookahead=-1 -o %t.gdn.none.mlir 2>&1 | FileCheck %s --check-prefix=GDN-NEGATIVE
// GDN-NEGATIVE: error: flywheel-pipeline: gdn-lookahead must be at least 0, not -1
// RUN: not test -e %t.gdn.none.mlir
