// flywheel-exp-softmax: the softmax of each attention kernel (tile IR) with less work
// per score element: base-2 scores (scale x log2(e), exp2), the scale folded into Q,
// normalization by one reciprocal per row. Each rewrite can run alone.
// The inputs are flywheel-tile's kernels, committed as tile IR (Inputs/*.tile.mlir, each
// with the command that made it), so that these checks follow this pass alone; the
// numerics checks compare with the reference lowering of the attention program.

// By default the scale folds into Q only when nothing rounds: here Q is bf16 and
// 0.125 x log2(e) is not a power of two, so the scores keep their (base-2) scale.
// RUN: flywheel-opt %S/Inputs/attention-causal-bf16.tile.mlir --flywheel-exp-softmax=remarks=true 2>&1 >/dev/null | FileCheck %s --check-prefix=REMARK
// REMARK: attention-causal-bf16.tile.mlir:{{[0-9]+}}:{{[0-9]+}}: remark: @flywheel_kernel_0: scores in base 2 (scale x log2(e), exp2); score scale not folded: Q is bf16 and the scale 0.180336{{[0-9]*}} is not a power of two (fold-scale=split keeps it exact in two bf16 parts, fold-scale=always rounds Q times it to bf16); 0 normalization(s) by reciprocal
// RUN: flywheel-opt %S/Inputs/attention-causal-bf16.tile.mlir --flywheel-exp-softmax='fold-scale=always remarks=true' -o %t.all.mlir 2>&1 | FileCheck %s --check-prefix=REMARK-ALL
// REMARK-ALL: remark: @flywheel_kernel_0: scores in base 2 (scale x log2(e), exp2); score scale folded into Q; 0 normalization(s) by reciprocal
// RUN: FileCheck %s --check-prefix=ALL < %t.all.mlir
// fold-scale=always: Q (bf16) times scale x log2(e) = 0.125 x 1.4427, in f32, rounded
// once to bf16, feeds the MXU; the scores are not scaled again.
// ALL: %[[WIDE:.*]] = "arith.extf"(%[[Q:.*]]) : (vector<256x128xbf16>) -> vector<256x128xf32>
// ALL: %[[FACTOR:.*]] = "arith.constant"() <{value = dense<0.180336{{[0-9]*}}> : vector<256x128xf32>}>
// ALL: %[[SCALED:.*]] = "arith.mulf"(%[[WIDE]], %[[FACTOR]])
// ALL: %[[ROUNDED:.*]] = "arith.truncf"(%[[SCALED]]) : (vector<256x128xf32>) -> vector<256x128xbf16>
// ALL: %[[S:.*]] = "flywheel.matmul"(%[[ROUNDED]], {{.*}}) {transpose_rhs = true}
// ALL-NOT: "arith.mulf"(%[[S]]
// ALL: "math.exp2"({{.*}} : (vector<256x256xf32>) -> vector<256x256xf32>
// The running max and sum are lane-replicated [256, 128]: exp2 of the rescale factor too.
// ALL: "math.exp2"({{.*}} : (vector<256x128xf32>) -> vector<256x128xf32>
// ALL-NOT: "math.exp"(
// The sum is as wide as the accumulator (head dim 128): one divide per element either
// way, so the normalization stays a divide.
// ALL: "arith.divf"({{.*}}) {{.*}} -> vector<256x128xf32>

// fold-scale=split: Q times the scale in f32, as its bf16 rounding and the bf16 rounding
// of the rest side by side (a contraction of 256, one pass of the v6e/tpu7x MXU), against
// the K tile twice; the scores are not scaled again. Q is split once, right after its
// load, for the step's two sub-block products.
// RUN: flywheel-opt %S/Inputs/attention-causal-bf16-split-1024.tile.mlir --flywheel-exp-softmax='fold-scale=split remarks=true' -o %t.split.mlir 2>&1 | FileCheck %s --check-prefix=REMARK-SPLIT
// REMARK-SPLIT: remark: @flywheel_kernel_0: scores in base 2 (scale x log2(e), exp2); score scale folded into Q as two bf16 parts; 0 normalization(s) by reciprocal
// RUN: FileCheck %s --check-prefix=SPLIT < %t.split.mlir
// SPLIT: %[[Q:.*]] = "vector.shape_cast"({{.*}}) -> vector<256x128xbf16>
// SPLIT-NEXT: %[[WIDE:.*]] = "arith.extf"(%[[Q]]) : (vector<256x128xbf16>) -> vector<256x128xf32>
// SPLIT-NEXT: %[[FACTOR:.*]] = "arith.constant"() <{value = dense<0.180336{{[0-9]*}}> : vector<256x128xf32>}>
// SPLIT-NEXT: %[[SCALED:.*]] = "arith.mulf"(%[[WIDE]], %[[FACTOR]])
// SPLIT-NEXT: %[[HI:.*]] = "arith.truncf"(%[[SCALED]]) : (vector<256x128xf32>) -> vector<256x128xbf16>
// SPLIT-NEXT: %[[HI_WIDE:.*]] = "arith.extf"(%[[HI]])
// SPLIT-NEXT: %[[REST:.*]] = "arith.subf"(%[[SCALED]], %[[HI_WIDE]])
// SPLIT-NEXT: %[[LO:.*]] = "arith.truncf"(%[[REST]]) : (vector<256x128xf32>) -> vector<256x128xbf16>
// SPLIT-NEXT: %[[PARTS:.*]] = "tpu.concatenate"(%[[HI]], %[[LO]]) {dimension = 1 : i32} : (vector<256x128xbf16>, vector<256x128xbf16>) -> vector<256x256xbf16>
// SPLIT: %[[TWICE:.*]] = "tpu.concatenate"(%[[K:.*]], %[[K]]) {dimension = 1 : i32} : (vector<128x128xbf16>, vector<128x128xbf16>) -> vector<128x256xbf16>
// SPLIT-NEXT: %[[S:.*]] = "flywheel.matmul"(%[[PARTS]], %[[TWICE]], {{.*}}) {transpose_rhs = true} : (vector<256x256xbf16>, vector<128x256xbf16>, vector<256x128xf32>) -> vector<256x128xf32>
// SPLIT-NOT: "arith.mulf"(%[[S]]
// SPLIT: %[[TWICE_2:.*]] = "tpu.concatenate"(%[[K_2:.*]], %[[K_2]]) {dimension = 1 : i32}
// SPLIT-NEXT: "flywheel.matmul"(%[[PARTS]], %[[TWICE_2]], {{.*}}) {transpose_rhs = true}
// Near misses, folded without a split: a power-of-two scale (base e: 0.125) and f32 Q
// fold exactly; at head dim 256 two parts would take two MXU passes, so the scale stays.
// RUN: flywheel-opt %S/Inputs/attention-causal-bf16.tile.mlir --flywheel-exp-softmax='exp2=false fold-scale=split remarks=true' -o %t.split-exact.mlir 2>&1 | FileCheck %s --check-prefix=SPLIT-EXACT-REMARK
// SPLIT-EXACT-REMARK: remark: @flywheel_kernel_0: score scale folded into Q;
// RUN: FileCheck %s --check-prefix=SPLIT-EXACT < %t.split-exact.mlir
// SPLIT-EXACT: "arith.constant"() <{value = dense<1.250000e-01> : vector<256x128xf32>}>
// SPLIT-EXACT-NOT: "tpu.concatenate"({{.*}}xbf16>
// RUN: flywheel-opt %S/Inputs/attention-f32.tile.mlir --flywheel-exp-softmax='fold-scale=split remarks=true' 2>&1 | FileCheck %s --check-prefix=SPLIT-F32
// SPLIT-F32: remark: @flywheel_kernel_0: scores in base 2 (scale x log2(e), exp2); score scale folded into Q;
// SPLIT-F32: "flywheel.matmul"({{.*}}) {transpose_rhs = true} : (vector<256x128xf32>, vector<{{[0-9]+}}x128xf32>
// RUN: flywheel-opt %S/Inputs/attention-d256-bf16.tile.mlir --flywheel-exp-softmax='fold-scale=split remarks=true' 2>&1 | FileCheck %s --check-prefix=SPLIT-D256
// SPLIT-D256: remark: @flywheel_kernel_0: scores in base 2 (scale x log2(e), exp2); score scale not folded: Q is bf16, the scale 0.180336{{[0-9]*}} is not a power of two, and two parts of head dim 256 would not fit one pass of the 256-deep MXU;
// SPLIT-D256-NOT: vector<256x512xbf16>

// fold-scale=split-unbanded (flywheel-tpu's on tpu7x, whose static profile aborts on a
// banded kernel with the split): split where no causal or window band masks the scores,
// exact where one does, so a bf16 Q keeps its unfolded scale there.
// RUN: flywheel-opt %S/Inputs/attention-bf16-split.tile.mlir --flywheel-exp-softmax='fold-scale=split-unbanded remarks=true' 2>&1 >/dev/null | FileCheck %s --check-prefix=UNBANDED
// UNBANDED: remark: @flywheel_kernel_0: scores in base 2 (scale x log2(e), exp2); score scale folded into Q as two bf16 parts;
// RUN: flywheel-opt %S/Inputs/attention-causal-bf16.tile.mlir --flywheel-exp-softmax='fold-scale=split-unbanded remarks=true' 2>&1 | FileCheck %s --check-prefix=BANDED
// RUN: flywheel-opt %S/Inputs/attention-window-bf16.tile.mlir --flywheel-exp-softmax='fold-scale=split-unbanded remarks=true' 2>&1 | FileCheck %s --check-prefix=BANDED
// BANDED: remark: @flywheel_kernel_0: scores in base 2 (scale x log2(e), exp2); score scale not folded: a banded kernel folds only exactly: Q is bf16 and the scale 0.180336{{[0-9]*}} is not a power of two
// BANDED-NOT: "tpu.concatenate"({{.*}}xbf16>
// A near miss: padded keys are masked by comparing key positions with a constant, not
// with query positions; that kernel is not banded and splits.
// RUN: flywheel-opt %S/Inputs/attention-padded-bf16.tile.mlir --flywheel-exp-softmax='fold-scale=split-unbanded remarks=true' -o %t.padded.mlir 2>&1 | FileCheck %s --check-prefix=PADDED
// PADDED: remark: @flywheel_kernel_0: {{.*}}; score scale folded into Q as two bf16 parts;
// RUN: FileCheck %s --check-prefix=PADDED-MASK < %t.padded.mlir
// PADDED-MASK: "arith.cmpi"({{.*}}) <{predicate = 3 : i64}> : (vector<{{.*}}xi32>, vector<{{.*}}xi32>) -> vector<{{.*}}xi1>

// With head dim 256 the sum is tiled across two lane tiles: one reciprocal of the
// lane-replicated sums, tiled, then a multiply.
// RUN: flywheel-opt %S/Inputs/attention-d256-bf16.tile.mlir --flywheel-exp-softmax='exp2=false fold-scale=never remarks=true' 2>&1 | FileCheck %s --check-prefix=TILED
// TILED: remark: @flywheel_kernel_0: 1 normalization(s) by reciprocal
// TILED: %[[ONE:.*]] = "arith.constant"() <{value = dense<1.000000e+00> : vector<256x128xf32>}>
// TILED: %[[INVERSE:.*]] = "arith.divf"(%[[ONE]], %[[L:.*]]) {{.*}} : (vector<256x128xf32>, vector<256x128xf32>) -> vector<256x128xf32>
// TILED: %[[WIDE_INVERSE:.*]] = "tpu.concatenate"(%[[INVERSE]], %[[INVERSE]]) {dimension = 1 : i32} : (vector<256x128xf32>, vector<256x128xf32>) -> vector<256x256xf32>
// TILED: "arith.mulf"(%{{.*}}, %[[WIDE_INVERSE]])
// TILED-NOT: "arith.divf"({{.*}}) {{.*}} -> vector<256x256xf32>
// Narrow key blocks keep the statistics as [256, 1] columns, widened by a broadcast.
// RUN: flywheel-opt %S/Inputs/attention-kv64-bf16.tile.mlir --flywheel-exp-softmax='exp2=false fold-scale=never' | FileCheck %s --check-prefix=NARROW
// NARROW: %[[INVERSE:.*]] = "arith.divf"({{.*}}) {{.*}} : (vector<256x1xf32>, vector<256x1xf32>) -> vector<256x1xf32>
// NARROW: "vector.broadcast"(%[[INVERSE]]) : (vector<256x1xf32>) -> vector<256x128xf32>

// Each rewrite alone.
// RUN: flywheel-opt %S/Inputs/attention-causal-bf16.tile.mlir --flywheel-exp-softmax='fold-scale=never reciprocal=false' | FileCheck %s --check-prefix=EXP2
// EXP2: %[[S:.*]] = "flywheel.matmul"({{.*}}) {transpose_rhs = true}
// EXP2: %[[FACTOR:.*]] = "arith.constant"() <{value = dense<0.180336{{[0-9]*}}> : vector<256x256xf32>}>
// EXP2: "arith.mulf"(%[[S]], %[[FACTOR]])
// EXP2: "math.exp2"
// EXP2: "arith.divf"({{.*}}) {{.*}} -> vector<256x128xf32>
// A power-of-two scale folds exactly.
// RUN: flywheel-opt %S/Inputs/attention-causal-bf16.tile.mlir --flywheel-exp-softmax='exp2=false reciprocal=false' | FileCheck %s --check-prefix=FOLD
// FOLD: "arith.constant"() <{value = dense<1.250000e-01> : vector<256x128xf32>}>
// FOLD: "flywheel.matmul"
// FOLD: "math.exp"(
// FOLD-NOT: "math.exp2"
// (reciprocal alone: the TILED and NARROW cases above)

// conditional-rescale: the running sum and output are multiplied by
// alpha = exp2(m_old - m_new) only when min(m_old - m_new) < 0, i.e. some row's max moved
// (the first key block always does: m starts at the mask value).
// RUN: flywheel-opt %S/Inputs/attention-causal-bf16.tile.mlir --flywheel-exp-softmax='conditional-rescale=true remarks=true' -o %t.rescale.mlir 2>&1 | FileCheck %s --check-prefix=RESCALE-REMARK
// RESCALE-REMARK: remark: @flywheel_kernel_0: {{.*}}; 2 rescale(s) only when the max changed
// RUN: FileCheck %s --check-prefix=RESCALE < %t.rescale.mlir
// RESCALE: %[[M_NEW:.*]] = "arith.maximumf"(%[[M_OLD:[0-9]+]], %{{.*}}) {{.*}} : (vector<256x128xf32>, vector<256x128xf32>) -> vector<256x128xf32>
// RESCALE: %[[DROP:.*]] = "arith.subf"(%[[M_OLD]], %[[M_NEW]])
// RESCALE: %[[ALPHA:.*]] = "math.exp2"(%[[DROP]])
// RESCALE: %[[LEAST:.*]] = "vector.multi_reduction"(%[[DROP]], %{{.*}}) <{kind = #vector.kind<minimumf>, reduction_dims = array<i64: 0, 1>}> : (vector<256x128xf32>, f32) -> f32
// RESCALE: %[[MOVED:.*]] = "arith.cmpf"(%[[LEAST]], %{{.*}}) <{{.*}}predicate = 4 : i64}> : (f32, f32) -> i1
// RESCALE: "scf.if"(%[[MOVED]]) ({
// RESCALE-NEXT: %[[SCALED:.*]] = "arith.mulf"(%[[ALPHA]], %[[X:.*]]) {{.*}} : (vector<256x128xf32>, vector<256x128xf32>) -> vector<256x128xf32>
// RESCALE-NEXT: "scf.yield"(%[[SCALED]])
// RESCALE-NEXT: }, {
// RESCALE-NEXT: "scf.yield"(%[[X]])
// RESCALE: "scf.if"(%[[MOVED]])
// RUN: flywheel-opt %t.rescale.mlir --flywheel-lower-to-mosaic -o %t.rescale.lowered.mlir
// RUN: flywheel compile --target v5e %t.rescale.lowered.mlir 2>/dev/null | FileCheck %s --check-prefix=COMPILE
// RUN: flywheel compile --target v6e %t.rescale.lowered.mlir 2>/dev/null | FileCheck %s --check-prefix=COMPILE
// RUN: flywheel compile --target tpu7x %t.rescale.lowered.mlir 2>/dev/null | FileCheck %s --check-prefix=COMPILE
// Near miss: an exponential of m_old minus something that is not max(m_old, ..) is not a
// softmax correction factor (here the statistics' max became a min): nothing is wrapped.
// RUN: sed 's/arith.maximumf/arith.minimumf/' %S/Inputs/attention-causal-bf16.tile.mlir | flywheel-opt --flywheel-exp-softmax='conditional-rescale=true remarks=true' 2>&1 | FileCheck %s --check-prefix=RESCALE-MISS
// RESCALE-MISS: remark: @flywheel_kernel_0: {{.*}}; 0 rescale(s) only when the max changed
// RESCALE-MISS-NOT: minimumf>

// lagged-max: each sub-block's P is exp2(S - m0), m0 the max the step starts with, so exp
// does not wait for the sub-block's max; the running sum and output add up unscaled and
// are rescaled once, by exp2(m0 - m), after the last sub-block. A step whose max rose by
// more than the limit in some row (or NaN: m0 = -inf at the first step) is redone
// exactly, the original ops cloned into an scf.if.
// RUN: flywheel-opt %S/Inputs/attention-bf16-split.tile.mlir --flywheel-exp-softmax='lagged-max=true remarks=true' -o %t.lagged.mlir 2>&1 | FileCheck %s --check-prefix=LAGGED-REMARK
// LAGGED-REMARK: remark: @flywheel_kernel_0: {{.*}}; 1 step(s) exponentiated by their incoming max, redone when a row's max rises by more than 64
// RUN: FileCheck %s --check-prefix=LAGGED < %t.lagged.mlir
// LAGGED: %[[M0:.*]] = "vector.load"(%arg{{[0-9]+}}, {{.*}}) : (memref<256x128xf32>, index, index) -> vector<256x128xf32>
// LAGGED-NEXT: %[[L0:.*]] = "vector.load"
// LAGGED-NEXT: %[[ACC0:.*]] = "vector.load"
// LAGGED: %[[M1:.*]] = "arith.maximumf"(%[[M0]], {{.*}})
// LAGGED-NEXT: %[[D1:.*]] = "arith.subf"(%[[S1:.*]], %[[M0]])
// LAGGED-NEXT: %[[P1:.*]] = "math.exp2"(%[[D1]])
// LAGGED-NOT: "arith.subf"(%[[M0]], %[[M1]])
// LAGGED: %[[L1:.*]] = "arith.addf"(%[[L0]], {{.*}})
// LAGGED: %[[ACC1:.*]] = "arith.addf"(%[[ACC0]], {{.*}})
// LAGGED: %[[M2:.*]] = "arith.maximumf"(%[[M1]], {{.*}})
// LAGGED-NEXT: %[[D2:.*]] = "arith.subf"(%[[S2:.*]], %[[M0]])
// LAGGED-NEXT: "math.exp2"(%[[D2]])
// LAGGED-NEXT: %[[DROP:.*]] = "arith.subf"(%[[M0]], %[[M2]])
// LAGGED-NEXT: %[[ALPHA:.*]] = "math.exp2"(%[[DROP]])
// LAGGED: %[[L_SUM:.*]] = "arith.addf"(%[[L1]], {{.*}})
// LAGGED-NEXT: %[[L2:.*]] = "arith.mulf"(%[[ALPHA]], %[[L_SUM]])
// LAGGED: %[[ACC_SUM:.*]] = "arith.addf"(%[[ACC1]], {{.*}})
// LAGGED-NEXT: %[[ACC2:.*]] = "arith.mulf"(%[[ALPHA]], %[[ACC_SUM]])
// LAGGED-NEXT: %[[RISE:.*]] = "arith.subf"(%[[M2]], %[[M0]])
// LAGGED-NEXT: %[[LIMIT:.*]] = "arith.constant"() <{value = dense<6.400000e+01> : vector<256x128xf32>}>
// LAGGED-NEXT: %[[WITHIN:.*]] = "arith.cmpf"(%[[RISE]], %[[LIMIT]]) <{{.*}}predicate = 5 : i64}>
// LAGGED: %[[MARKS:.*]] = "arith.select"(%[[WITHIN]], %[[ZERO:.*]], %[[ONE:.*]])
// LAGGED: %[[ANY:.*]] = "vector.multi_reduction"(%[[MARKS]], {{.*}}) <{kind = #vector.kind<maximumf>, reduction_dims = array<i64: 0, 1>}>
// LAGGED: %[[REDO:.*]] = "arith.cmpf"(%[[ANY]], {{.*}}) <{{.*}}predicate = 2 : i64}> : (f32, f32) -> i1
// The step's stores of its max, sum and output, right after it, move into both branches
// and the scf.if yields nothing (libtpu copies what a branch yields).
// LAGGED-NEXT: "scf.if"(%[[REDO]]) ({
// LAGGED: %[[EXACT_M1:.*]] = "arith.maximumf"
// LAGGED-NEXT: %[[EXACT_D1:.*]] = "arith.subf"({{.*}}, %[[EXACT_M1]])
// LAGGED: "tpu.vector_store"(%{{.*}}, %[[L_SCRATCH:arg[0-9]+]],
// LAGGED-NEXT: "tpu.vector_store"(%{{.*}}, %[[ACC_SCRATCH:arg[0-9]+]],
// LAGGED-NEXT: "tpu.vector_store"(%{{.*}}, %[[M_SCRATCH:arg[0-9]+]],
// LAGGED-NEXT: "scf.yield"() : () -> ()
// LAGGED-NEXT: }, {
// LAGGED-NEXT: "tpu.vector_store"(%[[L2]], %[[L_SCRATCH]],
// LAGGED-NEXT: "tpu.vector_store"(%[[ACC2]], %[[ACC_SCRATCH]],
// LAGGED-NEXT: "tpu.vector_store"(%[[M2]], %[[M_SCRATCH]],
// LAGGED-NEXT: "scf.yield"() : () -> ()
// LAGGED-NEXT: }) : (i1) -> ()
// With redo-stores=false (flywheel-tpu's on tpu7x, whose VMEM the stores in the branch
// overflowed) the branch yields the step's state, stored after it.
// RUN: flywheel-opt %S/Inputs/attention-bf16-split.tile.mlir --flywheel-exp-softmax='lagged-max=true redo-stores=false' | FileCheck %s --check-prefix=LAGGED-YIELD
// LAGGED-YIELD: %[[STEP:.*]]:3 = "scf.if"
// LAGGED-YIELD: }) : (i1) -> (vector<256x128xf32>, vector<256x128xf32>, vector<256x128xf32>)
// LAGGED-YIELD-NEXT: "tpu.vector_store"(%[[STEP]]#1,
// LAGGED-YIELD-NEXT: "tpu.vector_store"(%[[STEP]]#2,
// LAGGED-YIELD-NEXT: "tpu.vector_store"(%[[STEP]]#0,
// The kernel compiles for every target and matches the reference on the PJRT CPU plugin.
// RUN: flywheel-opt %t.lagged.mlir --flywheel-lower-to-mosaic -o %t.lagged.lowered.mlir
// RUN: flywheel compile --target v5e %t.lagged.lowered.mlir 2>/dev/null | FileCheck %s --check-prefix=COMPILE
// RUN: flywheel compile --target v6e %t.lagged.lowered.mlir 2>/dev/null | FileCheck %s --check-prefix=COMPILE
// RUN: flywheel compile --target tpu7x %t.lagged.lowered.mlir 2>/dev/null | FileCheck %s --check-prefix=COMPILE
// RUN: flywheel-opt %S/../Inputs/attention-bnth-bf16.mlir --flywheel-lower-to-stablehlo -o %t.lagged.reference.mlir
// RUN: flywheel check %t.lagged.reference.mlir %t.lagged.lowered.mlir | FileCheck %s --check-prefix=CHECKED
// A causal kernel has a masked and an unmasked step body: both are lagged.
// RUN: flywheel-opt %S/Inputs/attention-causal-bf16.tile.mlir --flywheel-exp-softmax='lagged-max=true lagged-max-limit=32 remarks=true' 2>&1 >/dev/null | FileCheck %s --check-prefix=LAGGED-CAUSAL
// LAGGED-CAUSAL: remark: @flywheel_kernel_0: {{.*}}; 2 step(s) exponentiated by their incoming max, redone when a row's max rises by more than 32
// Near miss: a read of the scratch between the step's stores; the stores cannot move past
// it, so they stay after the branch, which yields the step's max, sum and output.
// RUN: sed -E '0,/^      "tpu.vector_store"\((%[0-9]+), (%arg[0-9]+), (%c0), (%c0)\).*$/s//&\n      %between = "vector.load"(\2, \3, \4) : (memref<256x128xf32>, index, index) -> vector<256x128xf32>/' %S/Inputs/attention-bf16-split.tile.mlir | flywheel-opt --flywheel-exp-softmax=lagged-max=true | FileCheck %s --check-prefix=LAGGED-READ
// LAGGED-READ: %[[STEP:.*]]:3 = "scf.if"
// LAGGED-READ: "scf.yield"({{.*}}) : (vector<256x128xf32>, vector<256x128xf32>, vector<256x128xf32>) -> ()
// LAGGED-READ: }) : (i1) -> (vector<256x128xf32>, vector<256x128xf32>, vector<256x128xf32>)
// LAGGED-READ-NEXT: "tpu.vector_store"(%[[STEP]]#1,
// LAGGED-READ-NEXT: "vector.load"
// LAGGED-READ-NEXT: "tpu.vector_store"(%[[STEP]]#2,
// LAGGED-READ-NEXT: "tpu.vector_store"(%[[STEP]]#0,
// Near miss: a running minimum is no online softmax; nothing is lagged.
// RUN: sed 's/arith.maximumf/arith.minimumf/' %S/Inputs/attention-causal-bf16.tile.mlir | flywheel-opt --flywheel-exp-softmax='lagged-max=true remarks=true' 2>&1 | FileCheck %s --check-prefix=LAGGED-MISS
// LAGGED-MISS: remark: @flywheel_kernel_0: {{.*}}; max not lagged: no online-softmax update
// LAGGED-MISS-NOT: "scf.if"({{.*}}) : (i1) -> (vector
// With conditional-rescale the rescales are in branches, not added to: left alone.
// RUN: flywheel-opt %S/Inputs/attention-causal-bf16.tile.mlir --flywheel-exp-softmax='conditional-rescale=true lagged-max=true remarks=true' 2>&1 | FileCheck %s --check-prefix=LAGGED-RESCALE
// LAGGED-RESCALE: remark: @flywheel_kernel_0: {{.*}}; max not lagged: a rescale of the running sum or output is not added to
// LAGGED-RESCALE-NOT: predicate = 5 : i64

// lagged-max=transposed lags only kernels whose max reduces the score tile across
// sublanes (the transposed orientation), as flywheel-tpu asks: a transposed kernel is
// lagged, its statistics [1, rows] rows and its rise tested per query column ...
// RUN: flywheel-opt %S/Inputs/attention-transposed-bf16-split-1024.tile.mlir --flywheel-exp-softmax='lagged-max=transposed remarks=true' -o %t.lagged-transposed.mlir 2>&1 | FileCheck %s --check-prefix=LAGGED-REMARK
// RUN: FileCheck %s --check-prefix=LAGGED-TRANSPOSED < %t.lagged-transposed.mlir
// LAGGED-TRANSPOSED: %[[M0:.*]] = "vector.load"(%arg{{[0-9]+}}, {{.*}}) : (memref<1x256xf32>, index, index) -> vector<1x256xf32>
// LAGGED-TRANSPOSED: "vector.multi_reduction"({{.*}}) <{kind = #vector.kind<maximumf>, reduction_dims = array<i64: 0>}>
// LAGGED-TRANSPOSED: %[[WIDE_M0:.*]] = "vector.broadcast"(%[[M0]]) : (vector<1x256xf32>) -> vector<128x256xf32>
// LAGGED-TRANSPOSED-NEXT: %[[D1:.*]] = "arith.subf"(%{{.*}}, %[[WIDE_M0]])
// LAGGED-TRANSPOSED-NEXT: "math.exp2"(%[[D1]])
// LAGGED-TRANSPOSED: "arith.cmpf"({{.*}}) <{{.*}}predicate = 5 : i64}> : (vector<1x256xf32>, vector<1x256xf32>) -> vector<1x256xi1>
// LAGGED-TRANSPOSED: "scf.if"
// RUN: flywheel-opt %t.lagged-transposed.mlir --flywheel-lower-to-mosaic -o %t.lagged-transposed.lowered.mlir
// RUN: flywheel compile --target v6e %t.lagged-transposed.lowered.mlir 2>/dev/null | FileCheck %s --check-prefix=COMPILE
// RUN: sed 's/x256x/x1024x/g' %S/../Inputs/attention-bnth-bf16.mlir > %t.long.mlir
// RUN: flywheel-opt %t.long.mlir --flywheel-lower-to-stablehlo -o %t.long.reference.mlir
// RUN: flywheel check %t.long.reference.mlir %t.lagged-transposed.lowered.mlir | FileCheck %s --check-prefix=CHECKED
// ... and near miss: a standard kernel is left as it is, with a remark.
// RUN: flywheel-opt %S/Inputs/attention-bf16-split.tile.mlir --flywheel-exp-softmax='lagged-max=transposed remarks=true' 2>&1 | FileCheck %s --check-prefix=LAGGED-STANDARD
// LAGGED-STANDARD: remark: @flywheel_kernel_0: {{.*}}; max not lagged: the scores are not transposed (lagged-max=transposed)
// LAGGED-STANDARD-NOT: predicate = 5 : i64

// lagged-stabilizer=sum: a lagged step reduces no max. Its rows keep m0 + log2(l) as
// their running max (l, the running sum by m0, holds the true max's term) and rescale the
// sum and output by 1 / l; the redo test reads that max, on both sides (l > 2^64 may
// have overflowed, l < 2^-64 underflowed). A first step (m0 = -inf) shifts by 0, so it
// is lagged too; the exact branch still reduces the max from -inf. Four key blocks.
// RUN: flywheel-opt %S/Inputs/attention-transposed-bf16-split-1024.tile.mlir --flywheel-exp-softmax='lagged-max=transposed lagged-stabilizer=sum remarks=true' -o %t.lagged-sum.mlir 2>&1 | FileCheck %s --check-prefix=LAGGED-SUM-REMARK
// LAGGED-SUM-REMARK: remark: @flywheel_kernel_0: {{.*}}; 1 step(s) exponentiated by their incoming max, redone when a row's max rises by more than 64, their max m₀ + log(l) (no max reduced; a first step shifts by 0; redone also when l < 2^-limit)
// RUN: FileCheck %s --check-prefix=LAGGED-SUM < %t.lagged-sum.mlir
// LAGGED-SUM: %[[M0:.*]] = "vector.load"(%arg{{[0-9]+}}, {{.*}}) : (memref<1x256xf32>, index, index) -> vector<1x256xf32>
// LAGGED-SUM-NEXT: %[[MINUS_INF:.*]] = "arith.constant"() <{value = dense<0xFF800000> : vector<1x256xf32>}>
// LAGGED-SUM-NEXT: %[[FIRST:.*]] = "arith.cmpf"(%[[M0]], %[[MINUS_INF]]) <{{.*}}predicate = 1 : i64}>
// LAGGED-SUM-NEXT: %[[ZERO:.*]] = "arith.constant"() <{value = dense<0.000000e+00> : vector<1x256xf32>}>
// LAGGED-SUM-NEXT: %[[SHIFT:.*]] = "arith.select"(%[[FIRST]], %[[ZERO]], %[[M0]])
// LAGGED-SUM-NOT: kind = #vector.kind<maximumf>
// LAGGED-SUM: "vector.broadcast"(%[[SHIFT]]) : (vector<1x256xf32>) -> vector<128x256xf32>
// LAGGED-SUM-NOT: kind = #vector.kind<maximumf>
// LAGGED-SUM: %[[ONE:.*]] = "arith.constant"() <{value = dense<1.000000e+00> : vector<1x256xf32>}>
// LAGGED-SUM-NEXT: %[[INVERSE:.*]] = "arith.divf"(%[[ONE]], %[[L:[0-9]+]])
// LAGGED-SUM-NEXT: %[[LOG:.*]] = "math.log2"(%[[L]])
// LAGGED-SUM-NEXT: %[[M:.*]] = "arith.addf"(%[[SHIFT]], %[[LOG]])
// LAGGED-SUM-NEXT: %[[L2:.*]] = "arith.mulf"(%[[INVERSE]], %[[L]])
// LAGGED-SUM-NOT: kind = #vector.kind<maximumf>
// LAGGED-SUM: %[[WIDE:.*]] = "vector.broadcast"(%[[INVERSE]]) : (vector<1x256xf32>) -> vector<128x256xf32>
// LAGGED-SUM-NEXT: %[[ACC2:.*]] = "arith.mulf"(%[[WIDE]], {{.*}})
// LAGGED-SUM-NEXT: %[[RISE:.*]] = "arith.subf"(%[[M]], %[[SHIFT]])
// LAGGED-SUM-NEXT: %[[LIMIT:.*]] = "arith.constant"() <{value = dense<6.400000e+01> : vector<1x256xf32>}>
// LAGGED-SUM-NEXT: %[[BELOW:.*]] = "arith.cmpf"(%[[RISE]], %[[LIMIT]]) <{{.*}}predicate = 5 : i64}>
// LAGGED-SUM-NEXT: %[[FLOOR:.*]] = "arith.constant"() <{value = dense<-6.400000e+01> : vector<1x256xf32>}>
// LAGGED-SUM-NEXT: %[[ABOVE:.*]] = "arith.cmpf"(%[[RISE]], %[[FLOOR]]) <{{.*}}predicate = 3 : i64}>
// LAGGED-SUM-NEXT: %[[WITHIN:.*]] = "arith.andi"(%[[BELOW]], %[[ABOVE]])
// LAGGED-SUM-NEXT: "arith.constant"
// LAGGED-SUM-NEXT: "arith.constant"
// LAGGED-SUM-NEXT: "arith.select"(%[[WITHIN]],
// LAGGED-SUM: "scf.if"
// LAGGED-SUM: "vector.multi_reduction"({{.*}}) <{kind = #vector.kind<maximumf>, reduction_dims = array<i64: 0>}>
// LAGGED-SUM: "arith.maximumf"(
// LAGGED-SUM: }, {
// LAGGED-SUM-NEXT: "tpu.vector_store"(%[[L2]],
// LAGGED-SUM-NEXT: "tpu.vector_store"(%[[ACC2]],
// LAGGED-SUM-NEXT: "tpu.vector_store"(%[[M]],
// RUN: flywheel-opt %t.lagged-sum.mlir --flywheel-lower-to-mosaic -o %t.lagged-sum.lowered.mlir
// RUN: flywheel compile --target v6e %t.lagged-sum.lowered.mlir 2>/dev/null | FileCheck %s --check-prefix=COMPILE
// RUN: flywheel check %t.long.reference.mlir %t.lagged-sum.lowered.mlir | FileCheck %s --check-prefix=CHECKED
// On these (random) inputs no step is redone: with the exact branch broken (its max an
// addition, so a first step's m is -inf and its P infinite) the kernel still passes,
// where with lagged-stabilizer=max, whose first steps are all redone, it fails.
// RUN: sed 's/"arith.maximumf"/"arith.addf"/' %t.lagged-sum.mlir | flywheel-opt --flywheel-lower-to-mosaic -o %t.lagged-sum.broken.mlir
// RUN: flywheel check %t.long.reference.mlir %t.lagged-sum.broken.mlir | FileCheck %s --check-prefix=CHECKED
// RUN: flywheel-opt %S/Inputs/attention-transposed-bf16-split-1024.tile.mlir --flywheel-exp-softmax=lagged-max=transposed | sed 's/"arith.maximumf"/"arith.addf"/' | flywheel-opt --flywheel-lower-to-mosaic -o %t.lagged-max.broken.mlir
// RUN: not flywheel check %t.long.reference.mlir %t.lagged-max.broken.mlir 2>&1 | FileCheck %s --check-prefix=BROKEN
// BROKEN: check failed: output 0: {{[0-9]+}} elements are NaN or infinite in one output but not the other
// Every score far below 0 (q = -8, k = 1: -185 in base 2): a first step shifted by 0
// underflows, l = 0 < 2^-64, and is redone exactly (without that test: NaN).
// RUN: sed -e 's/  %o = "flywheel.attention"(%q, %k, %v)/  %qc = "stablehlo.constant"() <{value = dense<-8.0> : tensor<1x2x1024x128xbf16>}> : () -> tensor<1x2x1024x128xbf16>\n  %kc = "stablehlo.constant"() <{value = dense<1.0> : tensor<1x2x1024x128xbf16>}> : () -> tensor<1x2x1024x128xbf16>\n  %o = "flywheel.attention"(%qc, %kc, %v)/' %t.long.mlir > %t.underflow.mlir
// RUN: flywheel-opt %t.underflow.mlir --flywheel-lower-to-stablehlo -o %t.underflow.reference.mlir
// The kernel's q and k operands likewise:
// RUN: sed 's/^    \(%[0-9]* = "flywheel.attention_kernel"\)(%arg0, %arg1, /    %qc = "stablehlo.constant"() <{value = dense<-8.0> : tensor<1x2x1024x128xbf16>}> : () -> tensor<1x2x1024x128xbf16>\n    %kc = "stablehlo.constant"() <{value = dense<1.0> : tensor<1x2x1024x128xbf16>}> : () -> tensor<1x2x1024x128xbf16>\n    \1(%qc, %kc, /' %S/Inputs/attention-transposed-bf16-split-1024.tile.mlir > %t.underflow.tile.mlir
// RUN: flywheel-opt %t.underflow.tile.mlir --pass-pipeline='builtin.module(flywheel-exp-softmax{lagged-max=transposed lagged-stabilizer=sum},flywheel-lower-to-mosaic)' -o %t.underflow.lowered.mlir
// RUN: flywheel check %t.underflow.reference.mlir %t.underflow.lowered.mlir | FileCheck %s --check-prefix=CHECKED
// redo-stores=before (flywheel-tpu's on v6e): the lagged state is stored as soon as it
// is made, before the branch, whose exact arm stores its own over it and reads the state
// the step started with from the step's loads, not from the scratch just written; the
// other arm is empty.
// RUN: flywheel-opt %S/Inputs/attention-transposed-bf16-split-1024.tile.mlir --flywheel-exp-softmax='lagged-max=transposed lagged-stabilizer=sum redo-stores=before' -o %t.before.mlir
// RUN: FileCheck %s --check-prefix=BEFORE < %t.before.mlir
// BEFORE: %[[M0:.*]] = "vector.load"(%[[M_SCRATCH:arg[0-9]+]], {{.*}}) : (memref<1x256xf32>, index, index) -> vector<1x256xf32>
// BEFORE: %[[L0:.*]] = "vector.load"(%[[L_SCRATCH:arg[0-9]+]], {{.*}}) : (memref<1x256xf32>, index, index) -> vector<1x256xf32>
// BEFORE-NEXT: %[[ACC0:.*]] = "vector.load"(%[[ACC_SCRATCH:arg[0-9]+]], {{.*}}) : (memref<128x256xf32>, index, index) -> vector<128x256xf32>
// BEFORE: %[[REDO:.*]] = "arith.cmpf"({{.*}}) <{{.*}}predicate = 2 : i64}> : (f32, f32) -> i1
// BEFORE-NEXT: "tpu.vector_store"(%{{.*}}, %[[L_SCRATCH]],
// BEFORE-NEXT: "tpu.vector_store"(%{{.*}}, %[[ACC_SCRATCH]],
// BEFORE-NEXT: "tpu.vector_store"(%{{.*}}, %[[M_SCRATCH]],
// BEFORE-NEXT: "scf.if"(%[[REDO]]) ({
// BEFORE-NOT: "vector.load"(%[[M_SCRATCH]]
// BEFORE-NOT: "vector.load"(%[[L_SCRATCH]]
// BEFORE-NOT: "vector.load"(%[[ACC_SCRATCH]]
// BEFORE: "arith.maximumf"(%[[M0]],
// BEFORE: "arith.mulf"({{.*}}, %[[L0]])
// BEFORE: "tpu.vector_store"(%{{.*}}, %[[L_SCRATCH]],
// BEFORE-NEXT: "tpu.vector_store"(%{{.*}}, %[[ACC_SCRATCH]],
// BEFORE-NEXT: "tpu.vector_store"(%{{.*}}, %[[M_SCRATCH]],
// BEFORE-NEXT: "scf.yield"() : () -> ()
// BEFORE-NEXT: }, {
// BEFORE-NEXT: "scf.yield"() : () -> ()
// BEFORE-NEXT: }) : (i1) -> ()
// It compiles, and matches the reference as it is and with every step redone (limit 0:
// the exact arm's state is the one kept).
// RUN: flywheel-opt %t.before.mlir --flywheel-lower-to-mosaic -o %t.before.lowered.mlir
// RUN: flywheel compile --target v6e %t.before.lowered.mlir 2>/dev/null | FileCheck %s --check-prefix=COMPILE
// RUN: flywheel check %t.long.reference.mlir %t.before.lowered.mlir | FileCheck %s --check-prefix=CHECKED
// RUN: flywheel-opt %S/Inputs/attention-transposed-bf16-split-1024.tile.mlir --pass-pipeline='builtin.module(flywheel-exp-softmax{lagged-max=transposed lagged-stabilizer=sum redo-stores=before lagged-max-limit=0},flywheel-lower-to-mosaic)' -o %t.before.redone.mlir
// RUN: flywheel check %t.long.reference.mlir %t.before.redone.mlir | FileCheck %s --check-prefix=CHECKED
// Diagnostics: a placement the option does not know.
// RUN: not flywheel-opt %S/../Inputs/attention-bnth-bf16.mlir --flywheel-exp-softmax=redo-stores=after 2>&1 | FileCheck %s --check-prefix=BEFORE-BAD
// BEFORE-BAD: invalid value 'after' for option 'redo-stores' (false|true|before)
// Near miss: with the row sum on the MXU (a column of the PV product) there is no l apart
// from the output; the step is lagged but keeps reducing its max.
// RUN: flywheel-opt %S/Inputs/attention-row-sum-mxu-bf16.tile.mlir --flywheel-exp-softmax='lagged-max=true lagged-stabilizer=sum remarks=true' 2>&1 | FileCheck %s --check-prefix=LAGGED-SUM-MXU
// LAGGED-SUM-MXU: remark: @flywheel_kernel_0: {{.*}}; 1 step(s) exponentiated by their incoming max, redone when a row's max rises by more than 64, their max reduced (no running sum l apart from the output: the MXU sums the rows)

// lagged-max=transposed-or-causal (flywheel-tpu's on v6e) also lags a standard kernel
// whose band is causal: every key at most its query's position, no lower edge. Causal,
// four key blocks of 256 in two sub-blocks each: the masked and the unmasked step body
// are both lagged, stabilized by the sum; it compiles and matches the reference.
// RUN: sed 's/x256x/x1024x/g' %S/../Inputs/attention-bnth-causal-bf16.mlir > %t.causal.mlir
// RUN: flywheel-opt %S/Inputs/attention-causal-bf16-split-1024.tile.mlir --flywheel-exp-softmax='lagged-max=transposed-or-causal lagged-stabilizer=sum redo-stores=before remarks=true' -o %t.lagged-causal.mlir 2>&1 | FileCheck %s --check-prefix=CAUSAL-LAG-REMARK
// CAUSAL-LAG-REMARK: remark: @flywheel_kernel_0: {{.*}}; 2 step(s) exponentiated by their incoming max, redone when a row's max rises by more than 64, their max m₀ + log(l)
// RUN: FileCheck %s --check-prefix=CAUSAL-LAG < %t.lagged-causal.mlir
// CAUSAL-LAG: "arith.cmpi"({{.*}}) <{predicate = 3 : i64}> : (vector<256x128xi32>, vector<256x128xi32>) -> vector<256x128xi1>
// CAUSAL-LAG: "math.log2"
// CAUSAL-LAG: "scf.if"
// CAUSAL-LAG: "math.log2"
// CAUSAL-LAG: "scf.if"
// RUN: flywheel-opt %t.lagged-causal.mlir --flywheel-lower-to-mosaic -o %t.lagged-causal.lowered.mlir
// RUN: flywheel compile --target v6e %t.lagged-causal.lowered.mlir 2>/dev/null | FileCheck %s --check-prefix=COMPILE
// RUN: flywheel-opt %t.causal.mlir --flywheel-lower-to-stablehlo -o %t.causal.reference.mlir
// RUN: flywheel check %t.causal.reference.mlir %t.lagged-causal.lowered.mlir | FileCheck %s --check-prefix=CHECKED
// Near misses: a window adds a lower edge (key >= query - 64), and a kernel without a
// band has no edge: both are left alone, with a remark.
// RUN: flywheel-opt %S/Inputs/attention-window-bf16.tile.mlir --flywheel-exp-softmax='lagged-max=transposed-or-causal lagged-stabilizer=sum remarks=true' 2>&1 | FileCheck %s --check-prefix=LAGGED-NOT-CAUSAL
// RUN: flywheel-opt %S/Inputs/attention-bf16-split.tile.mlir --flywheel-exp-softmax='lagged-max=transposed-or-causal lagged-stabilizer=sum remarks=true' 2>&1 | FileCheck %s --check-prefix=LAGGED-NOT-CAUSAL
// LAGGED-NOT-CAUSAL: remark: @flywheel_kernel_0: {{.*}}; max not lagged: the scores are not transposed and the kernel's band is not causal (lagged-max=transposed-or-causal)
// LAGGED-NOT-CAUSAL-NOT: "math.log2"
// Diagnostics: a value the option does not know.
// RUN: not flywheel-opt %S/../Inputs/attention-bnth-bf16.mlir --flywheel-exp-softmax=lagged-max=standard 2>&1 | FileCheck %s --check-prefix=LAGGED-BAD
// LAGGED-BAD: invalid value 'standard' for option 'lagged-max' (false|true|transposed|transposed-or-causal)
// LAGGED-SUM-MXU-NOT: "math.log2"
// LAGGED-SUM-MXU: kind = #vector.kind<maximumf>, reduction_dims = array<i64: 1>
// LAGGED-SUM-MXU: "scf.if"
// Diagnostics: a value the option does not know.
// RUN: not flywheel-opt %S/../Inputs/attention-bnth-bf16.mlir --flywheel-exp-softmax=lagged-stabilizer=min 2>&1 | FileCheck %s --check-prefix=LAGGED-SUM-BAD
// LAGGED-SUM-BAD: invalid value 'min' for option 'lagged-stabilizer' (max|sum)

// bf16-exp: where P is rounded to bf16 for the PV matmul, the difference s - m is rounded
// instead and exponentiated in bf16. With the row sum on the VPU its f32 sum reads P
// widened; with the row sum on the MXU nothing else reads P. The correction factor
// exp2(m_old - m_new) stays f32.
// RUN: flywheel-opt %S/Inputs/attention-causal-bf16.tile.mlir --flywheel-exp-softmax='bf16-exp=true remarks=true' -o %t.bf16-exp.mlir 2>&1 | FileCheck %s --check-prefix=BF16-EXP-REMARK
// BF16-EXP-REMARK: remark: @flywheel_kernel_0: {{.*}}; 2 exponential(s) of P in bf16
// RUN: FileCheck %s --check-prefix=BF16-EXP < %t.bf16-exp.mlir
// BF16-EXP: %[[D:.*]] = "arith.subf"({{.*}} : (vector<256x256xf32>, vector<256x256xf32>) -> vector<256x256xf32>
// BF16-EXP: %[[D16:.*]] = "arith.truncf"(%[[D]]) : (vector<256x256xf32>) -> vector<256x256xbf16>
// BF16-EXP: %[[P:.*]] = "math.exp2"(%[[D16]]) {{.*}} : (vector<256x256xbf16>) -> vector<256x256xbf16>
// BF16-EXP: %[[WIDE:.*]] = "arith.extf"(%[[P]]) : (vector<256x256xbf16>) -> vector<256x256xf32>
// BF16-EXP: "math.exp2"({{.*}}) {{.*}} : (vector<256x128xf32>) -> vector<256x128xf32>
// BF16-EXP: "vector.multi_reduction"(%[[WIDE]], {{.*}}) <{kind = #vector.kind<add>
// BF16-EXP: "flywheel.matmul"(%[[P]], {{.*}}) {transpose_rhs = false}
// RUN: flywheel-opt %S/Inputs/attention-row-sum-mxu-bf16.tile.mlir --flywheel-exp-softmax=bf16-exp=true | FileCheck %s --check-prefix=BF16-EXP-MXU
// BF16-EXP-MXU: %[[P:.*]] = "math.exp2"({{.*}}) {{.*}} : (vector<256x256xbf16>) -> vector<256x256xbf16>
// BF16-EXP-MXU-NOT: "arith.extf"(%[[P]])
// BF16-EXP-MXU: "flywheel.matmul"(%[[P]], {{.*}}) {transpose_rhs = false}
// Near miss: f32 attention keeps P in f32 for its f32 PV matmul: nothing is rounded.
// RUN: flywheel-opt %S/Inputs/attention-bias-f32.tile.mlir --flywheel-exp-softmax='bf16-exp=true remarks=true' 2>&1 | FileCheck %s --check-prefix=BF16-EXP-F32
// BF16-EXP-F32: remark: @flywheel_kernel_0: {{.*}}; 0 exponential(s) of P in bf16
// BF16-EXP-F32-NOT: xbf16>
// It compiles for every target (v5e too, whose EUP has no bf16).
// RUN: flywheel-opt %t.bf16-exp.mlir --flywheel-lower-to-mosaic -o %t.bf16-exp.lowered.mlir
// RUN: flywheel compile --target v5e %t.bf16-exp.lowered.mlir 2>/dev/null | FileCheck %s --check-prefix=COMPILE
// RUN: flywheel compile --target v6e %t.bf16-exp.lowered.mlir 2>/dev/null | FileCheck %s --check-prefix=COMPILE
// RUN: flywheel compile --target tpu7x %t.bf16-exp.lowered.mlir 2>/dev/null | FileCheck %s --check-prefix=COMPILE

// Near misses: a bias or a soft-cap between the scale and the softmax keeps the scores
// in base e (each would need its own log2(e)); the scale still folds into Q, which is
// linear.
// RUN: flywheel-opt %S/Inputs/attention-bias-f32.tile.mlir --flywheel-exp-softmax=remarks=true -o %t.bias.mlir 2>&1 | FileCheck %s --check-prefix=BIAS
// BIAS: remark: @flywheel_kernel_0: scores kept in base e: the scores feed 'arith.addf' before the softmax (a bias or soft-cap); score scale folded into Q; {{[01]}} normalization(s) by reciprocal
// RUN: FileCheck %s --check-prefix=BASE-E < %t.bias.mlir
// BASE-E: "math.exp"(
// BASE-E-NOT: "math.exp2"
// RUN: flywheel-opt %S/Inputs/attention-softcap-f32.tile.mlir --flywheel-exp-softmax=remarks=true -o %t.softcap.mlir 2>&1 | FileCheck %s --check-prefix=SOFTCAP
// SOFTCAP: remark: @flywheel_kernel_0: scores kept in base e: the scores feed 'arith.divf' before the softmax (a bias or soft-cap)
// RUN: FileCheck %s --check-prefix=BASE-E < %t.softcap.mlir
// A bf16 Q with a scale that is not a power of two keeps the scale on the scores.
// RUN: sed 's/dense<1.250000e-01> : vector<256x256xf32>/dense<0.0883883461> : vector<256x256xf32>/' %S/Inputs/attention-causal-bf16.tile.mlir | flywheel-opt --flywheel-exp-softmax='exp2=false remarks=true' 2>&1 >/dev/null | FileCheck %s --check-prefix=INEXACT
// INEXACT: remark: @flywheel_kernel_0: score scale not folded: Q is bf16 and the scale 0.0883883{{[0-9]*}} is not a power of two
// Without tile IR there is nothing to rewrite: the program comes back unchanged.
// RUN: flywheel-opt %S/../Inputs/attention-bnth-causal-bf16.mlir --flywheel-exp-softmax=remarks=true 2>&1 | FileCheck %s --check-prefix=NOTHING
// NOTHING-NOT: remark
// NOTHING: "flywheel.attention"

// The rewritten kernels compile for every target and compute what the reference does
// (kernels::exp_softmax::<config> in the suite checks every kernel configuration).
// RUN: flywheel-opt %t.all.mlir --flywheel-lower-to-mosaic -o %t.lowered.mlir
// RUN: flywheel compile --target v5e %t.lowered.mlir 2>/dev/null | FileCheck %s --check-prefix=COMPILE
// RUN: flywheel compile --target v6e %t.lowered.mlir 2>/dev/null | FileCheck %s --check-prefix=COMPILE
// RUN: flywheel compile --target tpu7x %t.lowered.mlir 2>/dev/null | FileCheck %s --check-prefix=COMPILE
// COMPILE: compiled {{.*}} for
// RUN: flywheel-opt %S/../Inputs/attention-bnth-causal-bf16.mlir --flywheel-lower-to-stablehlo -o %t.reference.mlir
// RUN: flywheel check %t.reference.mlir %t.lowered.mlir | FileCheck %s --check-prefix=CHECKED
// CHECKED: check: passed

// Bad options are errors.
// RUN: not flywheel-opt %S/../Inputs/attention-bnth-causal-bf16.mlir --flywheel-exp-softmax=exp2=maybe 2>&1 | FileCheck %s --check-prefix=OPTION
// OPTION: flywheel-opt: pass 'flywheel-exp-softmax': invalid value 'maybe' for option 'exp2'
