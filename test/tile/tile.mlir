// flywheel-tile: each flywheel.attention the baseline kernel serves becomes FlyWheel tile
// IR: its operands padded and rearranged into the kernel's layout, a
// flywheel.attention_kernel op, and the kernel module it names (grid, windows, dimension
// semantics; the per-grid-step program with scale, max, exp, sum, rescale,
// normalization and masks as separate ops). flywheel-lower-to-mosaic serializes it.

// RUN: flywheel-opt %S/../Inputs/attention-bnth-causal-bf16.mlir --flywheel-tile=remarks=true -o %t.tiled.mlir 2>&1 | FileCheck %s --check-prefix=REMARK
// REMARK: remark: tiled into a Mosaic kernel (grid 1x2x1x1, query group 1, blocks 256x256, {{.*}})
// RUN: FileCheck %s --check-prefix=TILE < %t.tiled.mlir
// TILE: "flywheel.attention_kernel"({{.*}}) {bytes_accessed = 524288 : i64, flops = 67108864 : i64, kernel = @flywheel_kernel_0, operandSegmentSizes = array<i32: 1, 1, 1, 0, 0>, transcendentals = 131584 : i64} : (tensor<1x2x256x128xbf16>, tensor<1x2x256x128xbf16>, tensor<1x2x256x128xbf16>) -> tensor<1x2x256x128xbf16>
// TILE: "builtin.module"() <{sym_name = "flywheel_kernel_0"}> ({
// The running max, sum and accumulator start at -inf, 0, 0 on the first key block.
// TILE: "arith.constant"() <{value = dense<0xFF800000> : vector<256x128xf32>}>
// Key blocks the band skips run nothing; a block the diagonal crosses runs the step
// with the causal mask, any other the same step without it.
// TILE: %[[NEEDED:.*]] = "arith.cmpi"
// TILE: %[[CROSSES:.*]] = "arith.cmpi"
// TILE: "scf.if"(%[[NEEDED]])
// TILE: "scf.if"(%[[CROSSES]])
// S = Q Kᵀ on the MXU, then the scale, as separate ops.
// TILE: "flywheel.matmul"({{.*}}) {transpose_rhs = true} : (vector<256x128xbf16>, vector<256x128xbf16>, vector<256x256xf32>) -> vector<256x256xf32>
// TILE: "arith.constant"() <{value = dense<1.250000e-01> : vector<256x256xf32>}>
// TILE-NEXT: "arith.mulf"
// TILE: "tpu.iota"() {dimensions = array<i32: 0>}
// TILE: "arith.cmpi"({{.*}}) <{predicate = 3 : i64}> : (vector<256x256xi32>, vector<256x256xi32>) -> vector<256x256xi1>
// TILE: "arith.select"
// TILE: "vector.multi_reduction"({{.*}}) <{kind = #vector.kind<maximumf>, reduction_dims = array<i64: 1>}>
// TILE: "arith.maximumf"
// TILE: "math.exp"
// TILE: "math.exp"
// TILE: "vector.multi_reduction"({{.*}}) <{kind = #vector.kind<add>, reduction_dims = array<i64: 1>}>
// TILE: "arith.truncf"({{.*}}) : (vector<256x256xf32>) -> vector<256x256xbf16>
// TILE: "flywheel.matmul"({{.*}}) {transpose_rhs = false} : (vector<256x256xbf16>, vector<256x128xbf16>, vector<256x128xf32>) -> vector<256x128xf32>
// The unmasked body.
// TILE: %[[CLEAR:.*]] = "arith.xori"(%[[CROSSES]]
// TILE: "scf.if"(%[[CLEAR]])
// TILE: "flywheel.matmul"({{.*}}) {transpose_rhs = true}
// TILE-NOT: "tpu.iota"
// TILE: "math.exp"
// TILE: "flywheel.matmul"({{.*}}) {transpose_rhs = false}
// Normalization once, after the last key block.
// TILE: "arith.divf"
// TILE: dimension_semantics = [#tpu.dimension_semantics<parallel>, #tpu.dimension_semantics<parallel>, #tpu.dimension_semantics<parallel>, #tpu.dimension_semantics<arbitrary>], iteration_bounds = array<i64: 1, 2, 1, 1>
// TILE-SAME: window_params = [{transform_indices = @q_blocks, window_bounds = array<i64: 1, 1, 256, 128>}, {transform_indices = @kv_blocks, window_bounds = array<i64: 1, 1, 256, 128>}, {transform_indices = @kv_blocks, window_bounds = array<i64: 1, 1, 256, 128>}, {transform_indices = @q_blocks, window_bounds = array<i64: 1, 1, 256, 128>}]
// TILE: sym_name = "q_blocks"
// TILE: sym_name = "kv_blocks"
// TILE: stable_mosaic.version = 15 : i64
// A causal block on the diagonal holding fewer queries than keys: its sub-blocks wholly
// past the last query (256 queries, 512 keys in two sub-blocks of 256) are skipped. Sub-
// block c is reached when first key + 256 c <= last query; the kernel runs one masked
// body per count of reached sub-blocks the grid meets: one (the query block in the key
// block's first half: sub-block 0 reached, 1 not), or both; the unmasked body takes both.
// A masked body masks only the sub-blocks an edge crosses in some block it runs for.
// The tests compare sums of the grid indices' products, as the block tests do.
// RUN: sed 's/x256x/x1024x/g' %S/../Inputs/attention-bnth-causal-bf16.mlir > %t.causal-long.mlir
// RUN: flywheel-opt %t.causal-long.mlir --flywheel-tile='causal-block-q=256 causal-block-kv=512 key-splits=2' -o %t.skip.mlir
// RUN: FileCheck %s --check-prefix=SKIP < %t.skip.mlir
// SKIP: %[[FIRST_KEY:.*]] = "arith.muli"(%arg{{[0-9]+}}, %{{[0-9]+}})
// SKIP: "arith.cmpi"(%[[FIRST_KEY]], %[[LAST_QUERY:.*]]) <{predicate = 3 : i64}> : (i32, i32) -> i1
// SKIP-NEXT: %[[CROSSES:.*]] = "arith.cmpi"({{.*}}) <{predicate = 4 : i64}> : (i32, i32) -> i1
// SKIP-NEXT: "scf.if"
// SKIP: %[[FIRST_0:.*]] = "arith.addi"(%[[FIRST_KEY]],
// SKIP-NEXT: %[[REACHED_0:.*]] = "arith.cmpi"(%[[FIRST_0]], %[[LAST_QUERY]]) <{predicate = 3 : i64}>
// SKIP-NEXT: %[[RUNS:.*]] = "arith.andi"(%[[CROSSES]], %[[REACHED_0]])
// SKIP-NEXT: %[[SUB:.*]] = "arith.constant"() <{value = 256 : i32}>
// SKIP-NEXT: %[[FIRST_1:.*]] = "arith.addi"(%[[FIRST_KEY]], %[[SUB]])
// SKIP-NEXT: %[[REACHED_1:.*]] = "arith.cmpi"(%[[FIRST_1]], %[[LAST_QUERY]]) <{predicate = 3 : i64}>
// SKIP-NEXT: %[[YES:.*]] = "arith.constant"() <{value = true}>
// SKIP-NEXT: %[[NOT_1:.*]] = "arith.xori"(%[[REACHED_1]], %[[YES]])
// SKIP-NEXT: %[[RUN_ONE:.*]] = "arith.andi"(%[[RUNS]], %[[NOT_1]])
// SKIP-NEXT: "scf.if"(%[[RUN_ONE]])
// SKIP: "flywheel.matmul"({{.*}}) {transpose_rhs = true}
// SKIP: "tpu.iota"
// SKIP: "flywheel.matmul"({{.*}}) {transpose_rhs = false}
// SKIP-NOT: "flywheel.matmul"
// SKIP: %[[REACHED_BOTH:.*]] = "arith.cmpi"({{.*}}, %[[LAST_QUERY]]) <{predicate = 3 : i64}>
// SKIP-NEXT: %[[RUN_TWO:.*]] = "arith.andi"(%[[CROSSES]], %[[REACHED_BOTH]])
// SKIP-NEXT: "scf.if"(%[[RUN_TWO]])
// Those blocks hold the query block in the key block's second half: the diagonal
// crosses only their second sub-block, the first needs no mask.
// SKIP: "flywheel.matmul"({{.*}}) {transpose_rhs = true}
// SKIP-NOT: "tpu.iota"
// SKIP: "flywheel.matmul"({{.*}}) {transpose_rhs = false}
// SKIP: "flywheel.matmul"({{.*}}) {transpose_rhs = true}
// SKIP: "tpu.iota"
// SKIP: "flywheel.matmul"({{.*}}) {transpose_rhs = false}
// SKIP-NOT: "flywheel.matmul"
// SKIP: "arith.xori"(%[[CROSSES]]
// SKIP-COUNT-4: "flywheel.matmul"
// SKIP-NOT: "flywheel.matmul"
// It matches the reference lowering (the skipped keys are masked for every query).
// RUN: flywheel-opt %t.skip.mlir --flywheel-lower-to-mosaic -o %t.skip.lowered.mlir
// RUN: flywheel-opt %t.causal-long.mlir --flywheel-lower-to-stablehlo -o %t.causal-long.reference.mlir
// RUN: flywheel check %t.causal-long.reference.mlir %t.skip.lowered.mlir | FileCheck %s --check-prefix=SKIP-CHECKED
// SKIP-CHECKED: check: passed
// Padded keys too: 300 keys in key blocks of 256, the last holding 44 real keys, whose
// second sub-block is padding only (no band here).
// RUN: sed -e 's/x256x/x300x/g' -e 's/causal = true/causal = false/' %S/../Inputs/attention-bnth-causal-bf16.mlir > %t.padded-keys.mlir
// RUN: flywheel-opt %t.padded-keys.mlir --flywheel-tile='block-q=304 block-kv=256 key-splits=2' -o %t.padded-keys.tiled.mlir
// RUN: FileCheck %s --check-prefix=SKIP-PADDED < %t.padded-keys.tiled.mlir
// SKIP-PADDED: %[[LAST_REAL:.*]] = "arith.constant"() <{value = 299 : i32}>
// SKIP-PADDED: "arith.constant"() <{value = 128 : i32}>
// SKIP-PADDED-NEXT: %[[SECOND:.*]] = "arith.addi"
// SKIP-PADDED-NEXT: "arith.cmpi"(%[[SECOND]], %[[LAST_REAL]]) <{predicate = 3 : i64}>
// RUN: flywheel-opt %t.padded-keys.tiled.mlir --flywheel-lower-to-mosaic -o %t.padded-keys.lowered.mlir
// RUN: flywheel-opt %t.padded-keys.mlir --flywheel-lower-to-stablehlo -o %t.padded-keys.reference.mlir
// RUN: flywheel check %t.padded-keys.reference.mlir %t.padded-keys.lowered.mlir | FileCheck %s --check-prefix=SKIP-CHECKED
// Near misses: as many queries as keys per block (the diagonal reaches the block's last
// key), or one sub-block, leave one masked body with every sub-block.
// RUN: flywheel-opt %t.causal-long.mlir --flywheel-tile='causal-block-q=512 causal-block-kv=512 key-splits=2' | FileCheck %s --check-prefix=NO-SKIP
// RUN: flywheel-opt %t.causal-long.mlir --flywheel-tile='causal-block-q=256 causal-block-kv=512 key-splits=1' | FileCheck %s --check-prefix=NO-SKIP
// NO-SKIP-COUNT-2: "scf.if"
// NO-SKIP-NOT: "arith.andi"({{.*}}) : (i1, i1) -> i1
// NO-SKIP: "arith.xori"

// Two attention ops get two kernel modules.
// RUN: cat %S/../Inputs/attention-bnth-causal-bf16.mlir | sed 's/@main/@second/' > %t.second.mlir
// RUN: cat %S/../Inputs/attention-bnth-causal-bf16.mlir %t.second.mlir | flywheel-opt --flywheel-tile | FileCheck %s --check-prefix=TWO
// TWO: kernel = @flywheel_kernel_0
// TWO: kernel = @flywheel_kernel_1
// TWO: sym_name = "flywheel_kernel_0"
// TWO: sym_name = "flywheel_kernel_1"

// What the baseline kernel does not serve stays for the reference lowering.
// RUN: flywheel-opt %S/../Inputs/segments.mlir --flywheel-tile=remarks=true 2>&1 | FileCheck %s --check-prefix=KEPT
// KEPT: remark: kept for the reference lowering: segment ids are not in the baseline kernel yet
// KEPT: "flywheel.attention"
// KEPT-NOT: tpu_custom_call
// Mosaic takes a window's lanes as whole 128-lane tiles or the whole array's. The
// transposed orientation runs key blocks along Kᵀ's and Vᵀ's lanes: blocks of 64 of 256
// keys keep the op (a near miss: 128 are tiled).
// RUN: flywheel-opt %S/../Inputs/attention-bnth-causal-bf16.mlir --pass-pipeline='builtin.module(flywheel-layout{orientation=transposed},flywheel-tile{causal-block-q=128 causal-block-kv=64 remarks=true})' 2>&1 | FileCheck %s --check-prefix=LANES
// LANES: remark: kept for the reference lowering: key blocks of 64 along the lanes (the transposed orientation, a mask or a bias) take whole 128-lane tiles or all 256 keys
// LANES: "flywheel.attention"
// RUN: flywheel-opt %S/../Inputs/attention-bnth-causal-bf16.mlir --pass-pipeline='builtin.module(flywheel-layout{orientation=transposed},flywheel-tile{causal-block-q=128 causal-block-kv=128 remarks=true})' 2>&1 | FileCheck %s --check-prefix=LANES-128
// LANES-128: remark: tiled into a Mosaic kernel (grid 1x2x2x2, query group 1, blocks 128x128, transposed orientation
// On tpu7x (half v6e's VMEM) a transposed kernel whose keys take several steps takes
// 1024 keys per step and twice the queries; a standard kernel, v6e, or keys in one step
// keep the blocks asked for. A transposed kernel on v6e whose score tile is past 2M
// elements asks libtpu for more scoped VMEM than its default (vmem_limit, MiB, which
// flywheel-lower-to-mosaic writes into the call); the others do not.
// RUN: sed 's/x256x128xbf16/x4096x128xbf16/g' %S/../Inputs/attention-bnth-bf16.mlir > %t.4096.mlir
// RUN: flywheel-opt %t.4096.mlir --pass-pipeline='builtin.module(flywheel-layout{orientation=transposed},flywheel-tile{target=tpu7x remarks=true})' 2>&1 | FileCheck %s --check-prefix=TPU7X-TRANSPOSED
// TPU7X-TRANSPOSED: remark: tiled into a Mosaic kernel (grid 1x2x2x4, query group 1, blocks 2048x1024, transposed orientation
// TPU7X-TRANSPOSED-NOT: vmem_limit
// RUN: flywheel-opt %t.4096.mlir --pass-pipeline='builtin.module(flywheel-layout{orientation=transposed},flywheel-tile{target=v6e remarks=true})' 2>&1 | FileCheck %s --check-prefix=V6E-TRANSPOSED
// V6E-TRANSPOSED: remark: tiled into a Mosaic kernel (grid 1x2x4x2, query group 1, blocks 1024x2048, transposed orientation
// V6E-TRANSPOSED-NOT: vmem_limit
// RUN: flywheel-opt %t.4096.mlir --pass-pipeline='builtin.module(flywheel-layout{orientation=transposed},flywheel-tile{block-q=2048 target=v6e remarks=true})' 2>&1 | FileCheck %s --check-prefix=V6E-TRANSPOSED-4M
// V6E-TRANSPOSED-4M: remark: tiled into a Mosaic kernel (grid 1x2x2x2, query group 1, blocks 2048x2048, transposed orientation
// V6E-TRANSPOSED-4M: "flywheel.attention_kernel"{{.*}}, vmem_limit = 36 : i64}
// RUN: flywheel-opt %t.4096.mlir --flywheel-tile='target=tpu7x remarks=true' 2>&1 | FileCheck %s --check-prefix=TPU7X-STANDARD
// TPU7X-STANDARD: remark: tiled into a Mosaic kernel (grid 1x2x4x2, query group 1, blocks 1024x2048, standard orientation
// TPU7X-STANDARD-NOT: vmem_limit
// RUN: sed 's/x256x128xbf16/x2048x128xbf16/g' %S/../Inputs/attention-bnth-bf16.mlir | flywheel-opt --pass-pipeline='builtin.module(flywheel-layout{orientation=transposed},flywheel-tile{target=tpu7x remarks=true})' 2>&1 | FileCheck %s --check-prefix=TPU7X-ONE-STEP
// TPU7X-ONE-STEP: remark: tiled into a Mosaic kernel (grid 1x2x2x1, query group 1, blocks 1024x2048, transposed orientation
// TPU7X-ONE-STEP-NOT: vmem_limit
// v6e's VMEM takes a score tile of 4M elements without a mask or bias operand, 2M with
// a causal band; v5e and tpu7x keep 2M and 1M (fewer keys per step).
// RUN: flywheel-opt %t.4096.mlir --flywheel-tile='block-q=2048 block-kv=2048 target=v6e remarks=true' 2>&1 | FileCheck %s --check-prefix=V6E-BUDGET
// V6E-BUDGET: remark: tiled into a Mosaic kernel (grid 1x2x2x2, query group 1, blocks 2048x2048, standard orientation
// V6E-BUDGET-NOT: vmem_limit
// The transposed kernel at head dim 256 keeps 2M elements on v6e too, by taking fewer
// queries.
// RUN: sed 's/x128xbf16/x256xbf16/g' %t.4096.mlir | flywheel-opt --pass-pipeline='builtin.module(flywheel-layout{orientation=transposed},flywheel-tile{block-q=2048 block-kv=2048 target=v6e remarks=true})' 2>&1 | FileCheck %s --check-prefix=V6E-TRANSPOSED-D256
// V6E-TRANSPOSED-D256: remark: tiled into a Mosaic kernel (grid 1x2x4x2, query group 1, blocks 1024x2048, transposed orientation
// V6E-TRANSPOSED-D256-NOT: vmem_limit
// RUN: flywheel-opt %t.4096.mlir --flywheel-tile='block-q=2048 block-kv=2048 target=v5e remarks=true' -o /dev/null 2>&1 | FileCheck %s --check-prefix=V5E-BUDGET
// V5E-BUDGET: remark: tiled into a Mosaic kernel (grid 1x2x2x4, query group 1, blocks 2048x1024, standard orientation
// RUN: sed 's/x256x128xbf16/x4096x128xbf16/g' %S/../Inputs/attention-bnth-causal-bf16.mlir | flywheel-opt --flywheel-tile='causal-block-q=2048 causal-block-kv=2048 target=v6e remarks=true' -o /dev/null 2>&1 | FileCheck %s --check-prefix=V6E-CAUSAL-BUDGET
// V6E-CAUSAL-BUDGET: remark: tiled into a Mosaic kernel (grid 1x2x2x4, query group 1, blocks 2048x1024, standard orientation
// RUN: sed 's/x256x128xbf16/x4096x128xbf16/g' %S/../Inputs/attention-bnth-causal-bf16.mlir | flywheel-opt --flywheel-tile='causal-block-q=2048 causal-block-kv=2048 target=tpu7x remarks=true' -o /dev/null 2>&1 | FileCheck %s --check-prefix=TPU7X-CAUSAL-BUDGET
// TPU7X-CAUSAL-BUDGET: remark: tiled into a Mosaic kernel (grid 1x2x2x8, query group 1, blocks 2048x512, standard orientation

// A band that leaves a query with no key is kept (the kernel does not do uniform rows).
// RUN: flywheel-opt %s --split-input-file --flywheel-tile=remarks=true --verify-diagnostics
// RUN: flywheel-opt %S/../fixtures/attention_mha_f32.mlir --pass-pipeline='builtin.module(flywheel-raise-attention,flywheel-tile{block-q=50 remarks=true})' 2>&1 | FileCheck %s --check-prefix=TILES
// TILES: remark: kept for the reference lowering: blocks 50/128 for sequence lengths 128/128: a block is a whole sequence or a multiple of 8
// Lengths the blocks do not divide are padded with zeros to whole blocks.
// RUN: flywheel-opt %S/../fixtures/attention_mha_f32.mlir --pass-pipeline='builtin.module(flywheel-raise-attention,flywheel-tile{block-q=48 block-kv=96})' | FileCheck %s --check-prefix=PADDED
// PADDED: "stablehlo.pad"({{.*}}) <{edge_padding_high = array<i64: 0, 16, 0, 0>{{.*}} -> tensor<2x144x4x64xf32>
// PADDED: "flywheel.attention_kernel"{{.*}} : (tensor<2x4x144x64xf32>, tensor<2x4x192x64xf32>, tensor<2x4x192x64xf32>) -> tensor<2x4x144x64xf32>
// PADDED: "stablehlo.slice"
// Bad options are errors.
// RUN: not flywheel-opt %S/../Inputs/attention-bnth-causal-bf16.mlir --flywheel-tile=block-q=many 2>&1 | FileCheck %s --check-prefix=OPTION
// OPTION: flywheel-opt: pass 'flywheel-tile': invalid value 'many' for option 'block-q' (integer)

// Queries past the 64 keys have no allowed key under window [0, 0].
func.func @empty_row(%q: tensor<1x2x128x64xf32>, %k: tensor<1x2x64x64xf32>, %v: tensor<1x2x64x64xf32>) -> tensor<1x2x128x64xf32> {
  // expected-remark@below {{kept for the reference lowering: some query has no allowed key}}
  %o = "flywheel.attention"(%q, %k, %v) {operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0>, scale = 0.125 : f32, causal = false, window = array<i64: 0, 0>, layout = "BNTH", q_heads = 2, kv_heads = 2} : (tensor<1x2x128x64xf32>, tensor<1x2x64x64xf32>, tensor<1x2x64x64xf32>) -> tensor<1x2x128x64xf32>
  return %o : tensor<1x2x128x64xf32>
}

// Gated DeltaNet: a chunked kernel, grid (batch, value head, chunk), the chunk axis
// sequential with the f32 state in scratch; q and k read through the value head's key
// head (h / 2), the gates as [1, 64] rows per chunk: γ = cumsum(g) within the chunk,
// taken outside the kernel as one product with a triangle of ones at full precision,
// beside γ_C (its last entry repeated), and β.
// RUN: flywheel-opt %S/../Inputs/gdn-kernel-bf16.mlir --flywheel-tile='gdn-heads=1 gdn-chunks-per-step=1 remarks=true' -o %t.gdn.mlir 2>&1 | FileCheck %s --check-prefix=GDN-REMARK
// GDN-REMARK: remark: tiled into a Mosaic kernel (grid 1x2x2, chunks of 64, 1 value head(s) and 1 chunk(s) per step)
// RUN: FileCheck %s --check-prefix=GDN < %t.gdn.mlir
// GDN: %[[G:.*]] = "stablehlo.reshape"(%{{.*}}) : (tensor<2x2x64xf32>) -> tensor<1x2x2x1x64xf32>
// GDN: %[[ROW:.*]] = "stablehlo.iota"() <{iota_dimension = 0 : i64}> : () -> tensor<64x64xi32>
// GDN: %[[COLUMN:.*]] = "stablehlo.iota"() <{iota_dimension = 1 : i64}> : () -> tensor<64x64xi32>
// GDN: %[[UPPER:.*]] = "stablehlo.compare"(%[[ROW]], %[[COLUMN]]) {{.*}}comparison_direction = #stablehlo<comparison_direction LE>
// GDN: %[[ONES:.*]] = "stablehlo.convert"(%[[UPPER]]) : (tensor<64x64xi1>) -> tensor<64x64xf32>
// GDN: %[[GAMMA:.*]] = "stablehlo.dot_general"(%[[G]], %[[ONES]]) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [4], rhs_contracting_dimensions = [0]>, precision_config = [#stablehlo<precision HIGHEST>, #stablehlo<precision HIGHEST>]}>
// GDN: %[[LAST:.*]] = "stablehlo.slice"(%[[GAMMA]]) <{limit_indices = array<i64: 1, 2, 2, 1, 64>, start_indices = array<i64: 0, 0, 0, 0, 63>
// GDN: %[[TOTAL:.*]] = "stablehlo.broadcast_in_dim"(%[[LAST]]) {{.*}} -> tensor<1x2x2x1x64xf32>
// GDN: %[[GATES:.*]] = "stablehlo.concatenate"(%[[GAMMA]], %[[TOTAL]]) <{dimension = 3 : i64}> : (tensor<1x2x2x1x64xf32>, tensor<1x2x2x1x64xf32>) -> tensor<1x2x2x2x64xf32>
// The output comes token-major, [B, T, Nv x Dv], so BTNH is a reshape of it.
// GDN: %[[KERNEL:.*]]:2 = "flywheel.gated_delta_kernel"(%{{.*}}, %{{.*}}, %{{.*}}, %[[GATES]], %{{.*}}) {{{.*}}kernel = @flywheel_kernel_0{{.*}}} : (tensor<1x1x128x128xbf16>, tensor<1x1x128x128xbf16>, tensor<1x2x128x128xbf16>, tensor<1x2x2x2x64xf32>, tensor<1x2x2x1x64xf32>) -> (tensor<1x128x256xbf16>, tensor<1x2x128x128xf32>)
// GDN-NEXT: %[[O:.*]] = "stablehlo.reshape"(%[[KERNEL]]#0) : (tensor<1x128x256xbf16>) -> tensor<1x128x2x128xbf16>
// GDN-NEXT: "func.return"(%[[O]], %[[KERNEL]]#1)
// GDN: sym_name = "gated_delta_kernel"
// GDN: "scf.for"
// GDN: dimension_semantics = [#tpu.dimension_semantics<parallel>, #tpu.dimension_semantics<parallel>, #tpu.dimension_semantics<arbitrary>]
// GDN-SAME: iteration_bounds = array<i64: 1, 2, 2>
// GDN-SAME: scratch_operands = 1 : i64
// GDN-SAME: {transform_indices = @gate_chunks, window_bounds = array<i64: 1, 1, 1, 2, 64>}, {transform_indices = @gate_chunks, window_bounds = array<i64: 1, 1, 1, 1, 64>}, {transform_indices = @value_tokens, window_bounds = array<i64: 1, 64, 128>}
// GDN: sym_name = "key_chunks"
// GDN: %[[GROUP:.*]] = "arith.constant"() <{value = 2 : i32}>
// GDN: %[[KEY_HEAD:.*]] = "arith.divsi"(%{{.*}}, %[[GROUP]])
// GDN: %[[KEY_BLOCK:.*]] = "arith.divsi"(%[[KEY_HEAD]],
// GDN-NEXT: "func.return"(%{{.*}}, %[[KEY_BLOCK]], %{{.*}}, %{{.*}})
// GDN: sym_name = "value_tokens"
// GDN-NEXT: ^bb0(%[[B:.*]]: i32, %[[H:.*]]: i32, %[[C:.*]]: i32):
// GDN: "func.return"(%[[B]], %[[C]], %[[H]]) : (i32, i32, i32) -> ()
// With gdn-token-major=all, q, k and v come token-major too: a reshape each, not a transpose;
// each key head's [64, 128] tile is loaded from its lanes.
// RUN: flywheel-opt %S/../Inputs/gdn-kernel-bf16.mlir --flywheel-tile='gdn-heads=1 gdn-chunks-per-step=1 gdn-token-major=all' | FileCheck %s --check-prefix=GDN-ALL
// GDN-ALL-NOT: "stablehlo.transpose"{{.*}}bf16>
// GDN-ALL: "flywheel.gated_delta_kernel"({{.*}} : (tensor<1x128x128xbf16>, tensor<1x128x128xbf16>, tensor<1x128x256xbf16>, tensor<1x2x2x2x64xf32>, tensor<1x2x2x1x64xf32>) -> (tensor<1x128x256xbf16>, tensor<1x2x128x128xf32>)
// GDN-ALL: "vector.load"(%arg{{[0-9]+}}, {{.*}}) : (memref<1x64x128xbf16>, index, index, index) -> vector<1x64x128xbf16>
// GDN-ALL: window_params = [{transform_indices = @key_tokens, window_bounds = array<i64: 1, 64, 128>}, {transform_indices = @key_tokens, window_bounds = array<i64: 1, 64, 128>}, {transform_indices = @value_tokens, window_bounds = array<i64: 1, 64, 128>}
// GDN-ALL: sym_name = "key_tokens"
// With gdn-token-major=none, the output is head-major and transposed back outside.
// RUN: flywheel-opt %S/../Inputs/gdn-kernel-bf16.mlir --flywheel-tile='gdn-heads=1 gdn-chunks-per-step=1 gdn-token-major=none' | FileCheck %s --check-prefix=GDN-NONE
// GDN-NONE: %[[KERNEL:.*]]:2 = "flywheel.gated_delta_kernel"({{.*}} -> (tensor<1x2x128x128xbf16>, tensor<1x2x128x128xf32>)
// GDN-NONE-NEXT: %[[SPLIT:.*]] = "stablehlo.reshape"(%[[KERNEL]]#0)
// GDN-NONE-NEXT: "stablehlo.transpose"(%[[SPLIT]]) <{permutation = array<i64: 1, 2, 0, 3>}> : (tensor<2x2x64x128xbf16>) -> tensor<2x64x2x128xbf16>
// GDN-NONE-NOT: _tokens
// A window's lanes must be whole 128-lane tiles or the array's: one value head of 64
// lanes a step stays head-major, inputs and output, whatever gdn-token-major asks.
// RUN: sed 's/x128xbf16/x64xbf16/g; s/x128x128xf32/x64x64xf32/g' %S/../Inputs/gdn-kernel-bf16.mlir | flywheel-opt --flywheel-tile='gdn-heads=1 gdn-token-major=all' | FileCheck %s --check-prefix=GDN-NARROW
// GDN-NARROW: "flywheel.gated_delta_kernel"({{.*}} : (tensor<1x1x128x64xbf16>, tensor<1x1x128x64xbf16>, tensor<1x2x128x64xbf16>, {{.*}} -> (tensor<1x2x128x64xbf16>, tensor<1x2x64x64xf32>)
// GDN-NARROW-NOT: _tokens
// Laid out BNTH, the output stays head-major: [B, Nv, T, Dv] is already the result's layout.
// RUN: flywheel-opt %S/../Inputs/gdn-kernel-bnth-bf16.mlir --flywheel-tile='gdn-heads=1 gdn-chunks-per-step=1' | FileCheck %s --check-prefix=GDN-BNTH
// GDN-BNTH: %[[KERNEL:.*]]:2 = "flywheel.gated_delta_kernel"({{.*}} -> (tensor<1x2x128x128xbf16>, tensor<1x2x128x128xf32>)
// GDN-BNTH-NEXT: "func.return"(%[[KERNEL]]#0, %[[KERNEL]]#1)
// GDN-BNTH-NOT: _tokens
// Head dims the kernel does not take, and chunk sizes, are kept with a reason.
// The gates as written: natural-base exponentials. With gdn-exp2 the γ and γ_C rows are
// multiplied by log2(e) (a constant row made once per step) and every exponential of a
// gate sum is an exp2.
// RUN: FileCheck %s --check-prefix=GDN-EXP < %t.gdn.mlir
// GDN-EXP-NOT: "math.exp2"
// GDN-EXP: "math.exp"
// RUN: flywheel-opt %S/../Inputs/gdn-kernel-bf16.mlir --flywheel-tile='gdn-heads=1 gdn-exp2=true' | FileCheck %s --check-prefix=GDN-EXP2
// GDN-EXP2: %[[LOG2E:.*]] = "arith.constant"() <{value = dense<1.44269502> : vector<1x64xf32>}>
// GDN-EXP2-COUNT-2: "arith.mulf"(%{{.*}}, %[[LOG2E]])
// GDN-EXP2-NOT: "math.exp"(
// GDN-EXP2: "math.exp2"
// GDN-EXP2-NOT: "math.exp"(
// RUN: flywheel-opt %S/../Inputs/gdn-whole.mlir --flywheel-tile=remarks=true 2>&1 | FileCheck %s --check-prefix=GDN-KEPT
// GDN-KEPT: remark: kept for the reference lowering: chunks of 4 tokens (16, 32, 64 or 128)
// GDN-KEPT: "flywheel.gated_delta"
// RUN: flywheel-opt %S/../Inputs/gdn-kernel-bf16.mlir --flywheel-tile='chunk=48 remarks=true' 2>&1 | FileCheck %s --check-prefix=GDN-CHUNK
// GDN-CHUNK: remark: kept for the reference lowering: chunks of 48 tokens (16, 32, 64 or 128)
// RUN: sed 's/x128xbf16/x96xbf16/g; s/x128x128xf32/x96x96xf32/g' %S/../Inputs/gdn-kernel-bf16.mlir | flywheel-opt --flywheel-tile=remarks=true 2>&1 | FileCheck %s --check-prefix=GDN-DIMS
// GDN-DIMS: remark: kept for the reference lowering: head dims 96/96 (32, 64, 128 or 256)
// By default a step stacks as many value heads as fill its rows: here both heads (their
// group), reading one key head.
// RUN: flywheel-opt %S/../Inputs/gdn-kernel-bf16.mlir --pass-pipeline='builtin.module(flywheel-layout,flywheel-tile{remarks=true})' 2>&1 | FileCheck %s --check-prefix=GDN-STACKED
// GDN-STACKED: remark: tiled into a Mosaic kernel (grid 1x1x1, chunks of 64, 2 value head(s) and 2 chunk(s) per step)
// GDN-STACKED: "flywheel.matmul"({{.*}}) {transpose_rhs = true} : (vector<128x128xbf16>, vector<128x128xbf16>, vector<128x128xf32>)
// Shared operands (as flywheel-layout records by default): one product T [bV | b e^g K],
// and per head one [W; e^g Q] S.
// GDN-STACKED: %[[JOINED:.*]] = "tpu.concatenate"({{.*}}) {dimension = 1 : i32} : (vector<128x128xf32>, vector<128x128xf32>) -> vector<128x256xf32>
// GDN-STACKED: "flywheel.matmul"(%[[T:.*]], %[[JOINED]], {{.*}} -> vector<128x256xf32>
// GDN-STACKED: %[[WQ:.*]] = "tpu.concatenate"({{.*}}) {dimension = 0 : i32} : (vector<64x128xf32>, vector<64x128xf32>) -> vector<128x128xf32>
// GDN-STACKED: "flywheel.matmul"(%[[WQ]], {{.*}} -> vector<128x128xf32>
// The rows that fill a step depend on the target: 1024 on v6e (the default target), 512
// on tpu7x, 256 on v5e; gdn-heads overrides them. Here 8 key heads and 16 value heads.
// RUN: sed 's/128x1x128xbf16/128x8x128xbf16/g; s/128x2x128xbf16/128x16x128xbf16/g; s/128x2xf32/128x16xf32/g; s/1x2x128x128xf32/1x16x128x128xf32/g' %S/../Inputs/gdn-kernel-bf16.mlir > %t.16-heads.mlir
// RUN: flywheel-opt %t.16-heads.mlir --flywheel-tile=remarks=true 2>&1 >/dev/null | FileCheck %s --check-prefix=GDN-ROWS-1024
// RUN: flywheel-opt %t.16-heads.mlir --flywheel-tile='target=tpu7x remarks=true' 2>&1 >/dev/null | FileCheck %s --check-prefix=GDN-ROWS-512
// RUN: flywheel-opt %t.16-heads.mlir --flywheel-tile='target=v5e remarks=true' 2>&1 >/dev/null | FileCheck %s --check-prefix=GDN-ROWS-256
// RUN: flywheel-opt %t.16-heads.mlir --flywheel-tile='target=v5e gdn-heads=8 remarks=true' 2>&1 >/dev/null | FileCheck %s --check-prefix=GDN-ROWS-512
// RUN: flywheel-opt %t.16-heads.mlir --flywheel-tpu='target=v5e remarks=true' 2>&1 >/dev/null | FileCheck %s --check-prefix=GDN-ROWS-256
// GDN-ROWS-1024: remark: tiled into a Mosaic kernel (grid 1x1x1, chunks of 64, 16 value head(s) and 2 chunk(s) per step)
// GDN-ROWS-512: remark: tiled into a Mosaic kernel (grid 1x2x1, chunks of 64, 8 value head(s) and 2 chunk(s) per step)
// GDN-ROWS-256: remark: tiled into a Mosaic kernel (grid 1x4x1, chunks of 64, 4 value head(s) and 2 chunk(s) per step)
// The chunk-parallel tiles (decay, K Kᵀ, Q Kᵀ, A, T, the output weights) are block
// diagonal over a step's heads; they are worked on in diagonal blocks of 128 rows
// (gdn-block-rows), two heads of 64-token chunks: K Kᵀ, the forward substitution and
// T [bV | b e^g K] on 128 x 128 tiles, four blocks per chunk for eight heads (two chunks
// per step: eight loops), never the 512 x 512 tile; each block's gates and values are
// loaded at its own heads.
// RUN: flywheel-opt %t.16-heads.mlir --pass-pipeline='builtin.module(flywheel-layout,flywheel-tile{gdn-heads=8})' | FileCheck %s --check-prefix=GDN-BLOCKS
// GDN-BLOCKS-NOT: vector<512x512xf32>
// GDN-BLOCKS: "flywheel.matmul"({{.*}}) {transpose_rhs = true} : (vector<128x128xbf16>, vector<128x128xbf16>, vector<128x128xf32>)
// GDN-BLOCKS: "vector.load"(%arg{{[0-9]+}}, {{.*}}) : (memref<1x8x128x128xbf16>, index, index, index, index) -> vector<1x2x64x128xbf16>
// GDN-BLOCKS: "vector.load"(%arg{{[0-9]+}}, {{.*}}) : (memref<1x1x2x2x512xf32>, index, index, index, index, index) -> vector<1x1x1x1x128xf32>
// GDN-BLOCKS-COUNT-8: }) : (index, index, index, vector<128x128xf32>) -> vector<128x128xf32>
// GDN-BLOCKS-NOT: "scf.for"
// gdn-block-rows=0 keeps the step's whole stacked tile: one loop per chunk on 512 x 512.
// RUN: flywheel-opt %t.16-heads.mlir --pass-pipeline='builtin.module(flywheel-layout,flywheel-tile{gdn-heads=8 gdn-block-rows=0})' | FileCheck %s --check-prefix=GDN-WHOLE
// GDN-WHOLE: "flywheel.matmul"({{.*}}) {transpose_rhs = true} : (vector<512x128xbf16>, vector<512x128xbf16>, vector<512x512xf32>)
// GDN-WHOLE-COUNT-2: }) : (index, index, index, vector<512x512xf32>) -> vector<512x512xf32>
// GDN-WHOLE-NOT: "scf.for"
// A near miss: three heads per step (192 rows) cannot be cut at 128 lanes, so they stay
// one 192 x 192 block.
// RUN: sed 's/x2x128xbf16/x3x128xbf16/g; s/x2xf32/x3xf32/g; s/1x2x128x128xf32/1x3x128x128xf32/g' %S/../Inputs/gdn-kernel-bf16.mlir > %t.3-heads.mlir
// RUN: flywheel-opt %t.3-heads.mlir --pass-pipeline='builtin.module(flywheel-layout,flywheel-tile{gdn-heads=3})' | FileCheck %s --check-prefix=GDN-THREE
// GDN-THREE-NOT: vector<128x128xbf16>
// GDN-THREE: "flywheel.matmul"({{.*}}) {transpose_rhs = true} : (vector<192x128xbf16>, vector<192x128xbf16>, vector<192x192xf32>)
// Four chunks per step at most by default, two on tpu7x (whose 64 MiB of VMEM four
// overflowed at 32 value heads); 256 tokens are four chunks.
// RUN: sed 's/<1x128x/<1x256x/g' %S/../Inputs/gdn-kernel-bf16.mlir > %t.256-tokens.mlir
// RUN: flywheel-opt %t.256-tokens.mlir --flywheel-tile=remarks=true 2>&1 >/dev/null | FileCheck %s --check-prefix=GDN-CHUNKS-4
// RUN: flywheel-opt %t.256-tokens.mlir --flywheel-tile='target=v5e remarks=true' 2>&1 >/dev/null | FileCheck %s --check-prefix=GDN-CHUNKS-4
// RUN: flywheel-opt %t.256-tokens.mlir --flywheel-tile='target=tpu7x remarks=true' 2>&1 >/dev/null | FileCheck %s --check-prefix=GDN-CHUNKS-2
// RUN: flywheel-opt %t.256-tokens.mlir --flywheel-tile='target=tpu7x gdn-chunks-per-step=4 remarks=true' 2>&1 >/dev/null | FileCheck %s --check-prefix=GDN-CHUNKS-4
// GDN-CHUNKS-4: remark: tiled into a Mosaic kernel (grid 1x1x1, chunks of 64, 2 value head(s) and 4 chunk(s) per step)
// GDN-CHUNKS-2: remark: tiled into a Mosaic kernel (grid 1x1x2, chunks of 64, 2 value head(s) and 2 chunk(s) per step)
// Chunks per step (by default the most of 4, 2, 1 dividing the chunks: here both): one
// window of 128 tokens, each chunk's program in turn on its 64-token block (its own
// forward substitution), the state read from scratch once before the first and
// written once after the last, handed from chunk to chunk in registers.
// RUN: flywheel-opt %S/../Inputs/gdn-kernel-bf16.mlir --flywheel-tile=gdn-heads=1 | FileCheck %s --check-prefix=GDN-STEP
// GDN-STEP: %[[SCRATCH:.*]] = "vector.load"(%arg{{[0-9]+}}, %{{.*}}) : (memref<1x128x128xf32>, index, index, index) -> vector<1x128x128xf32>
// GDN-STEP-NOT: memref<1x128x128xf32>, index, index, index) -> vector<1x128x128xf32>
// GDN-STEP: "vector.load"(%arg{{[0-9]+}}, {{.*}}) : (memref<1x1x128x128xbf16>, index, index, index, index) -> vector<1x1x64x128xbf16>
// GDN-STEP: "scf.for"
// GDN-STEP: %[[AT64:.*]] = "arith.constant"() <{value = 64 : index}>
// GDN-STEP: "vector.load"(%arg{{[0-9]+}}, %{{.*}}, %{{.*}}, %[[AT64]], %{{.*}}) : (memref<1x1x128x128xbf16>, index, index, index, index) -> vector<1x1x64x128xbf16>
// GDN-STEP: "scf.for"
// GDN-STEP: "tpu.vector_store"({{.*}}memref<1x128x128xf32>
// GDN-STEP-NOT: "scf.for"
// GDN-STEP: window_bounds = array<i64: 1, 1, 128, 128>
// RUN: flywheel-opt %S/../Inputs/gdn-kernel-bf16.mlir --flywheel-tile='gdn-chunks-per-step=3 remarks=true' 2>&1 | FileCheck %s --check-prefix=GDN-STEP-BAD
// GDN-STEP-BAD: remark: kept for the reference lowering: 3 chunks per grid step (1, 2 or 4)
// Without a recorded layout the products stay apart.
// RUN: flywheel-opt %S/../Inputs/gdn-kernel-bf16.mlir --flywheel-tile | FileCheck %s --check-prefix=GDN-APART
// GDN-APART-NOT: "tpu.concatenate"({{.*}}) {dimension = 1 : i32}
// GDN-APART: "flywheel.matmul"({{.*}} : (vector<128x128xf32>, vector<128x128xf32>, vector<128x128xf32>)
// With gdn-single-pass the products after the inverse that do not read V' (U and W,
// the state readouts) are one bf16 pass each; the inverse and V''s products (P V', then
// Kᵀ V' per head) keep bf16x3.
// RUN: flywheel-opt %S/../Inputs/gdn-kernel-bf16.mlir --pass-pipeline='builtin.module(flywheel-layout,flywheel-tile{gdn-single-pass=true gdn-chunks-per-step=1})' | FileCheck %s --check-prefix=GDN-SINGLE
// An op whose source asked DEFAULT precision gets the same kernel without the option.
// RUN: sed 's/layout = "BTNH"/layout = "BTNH", precision = "DEFAULT"/' %S/../Inputs/gdn-kernel-bf16.mlir | flywheel-opt --pass-pipeline='builtin.module(flywheel-layout,flywheel-tile{gdn-chunks-per-step=1})' | FileCheck %s --check-prefix=GDN-SINGLE
// GDN-SINGLE: "scf.for"
// GDN-SINGLE: "flywheel.matmul"({{.*}}) {precision = "bf16x3", transpose_rhs = false}
// GDN-SINGLE: "scf.yield"
// GDN-SINGLE: "flywheel.matmul"({{.*}}) {precision = "bf16", transpose_rhs = false} : (vector<128x128xf32>, vector<128x256xf32>
// GDN-SINGLE-COUNT-2: "flywheel.matmul"({{.*}}) {precision = "bf16", transpose_rhs = false} : (vector<128x128xf32>, vector<128x128xf32>
// GDN-SINGLE: "flywheel.matmul"({{.*}}) {precision = "bf16x3", transpose_rhs = false} : (vector<128x128xf32>, vector<128x128xf32>
// GDN-SINGLE-COUNT-2: "flywheel.matmul"({{.*}}) {precision = "bf16x3", transpose_rhs = false} : (vector<128x64xf32>, vector<64x128xf32>
// GDN-SINGLE-NOT: "bf16"
// A readout asking more than the rest keeps Q S at bf16x3 (here the products apart: U
// and W, then per head Q S and W S); shared, [W; Q] S takes the more precise of the two.
// RUN: sed 's/layout = "BTNH"/layout = "BTNH", precision = "DEFAULT", readout_precision = "HIGHEST"/' %S/../Inputs/gdn-kernel-bf16.mlir | flywheel-opt --pass-pipeline='builtin.module(flywheel-tile{gdn-chunks-per-step=1})' | FileCheck %s --check-prefix=GDN-READOUT
// GDN-READOUT: "scf.yield"
// GDN-READOUT-COUNT-2: "flywheel.matmul"({{.*}}) {precision = "bf16", transpose_rhs = false} : (vector<128x128xf32>, vector<128x128xf32>
// GDN-READOUT: "flywheel.matmul"({{.*}}) {precision = "bf16x3", transpose_rhs = false} : (vector<64x128xf32>, vector<128x128xf32>
// GDN-READOUT: "flywheel.matmul"({{.*}}) {precision = "bf16", transpose_rhs = false} : (vector<64x128xf32>, vector<128x128xf32>
// GDN-READOUT: "flywheel.matmul"({{.*}}) {precision = "bf16x3", transpose_rhs = false} : (vector<64x128xf32>, vector<128x128xf32>
// GDN-READOUT: "flywheel.matmul"({{.*}}) {precision = "bf16", transpose_rhs = false} : (vector<64x128xf32>, vector<128x128xf32>
// RUN: sed 's/layout = "BTNH"/layout = "BTNH", precision = "DEFAULT", readout_precision = "HIGHEST"/' %S/../Inputs/gdn-kernel-bf16.mlir | flywheel-opt --pass-pipeline='builtin.module(flywheel-layout,flywheel-tile{gdn-chunks-per-step=1})' | FileCheck %s --check-prefix=GDN-READOUT-SHARED
// GDN-READOUT-SHARED: "scf.yield"
// GDN-READOUT-SHARED: "flywheel.matmul"({{.*}}) {precision = "bf16", transpose_rhs = false} : (vector<128x128xf32>, vector<128x256xf32>
// GDN-READOUT-SHARED-NOT: precision = "bf16"
// HIGH and HIGHEST keep every f32 product at bf16x3.
// RUN: sed 's/layout = "BTNH"/layout = "BTNH", precision = "HIGH"/' %S/../Inputs/gdn-kernel-bf16.mlir | flywheel-opt --pass-pipeline='builtin.module(flywheel-layout,flywheel-tile{gdn-chunks-per-step=1})' | FileCheck %s --check-prefix=GDN-HIGH
// GDN-HIGH: "scf.yield"
// GDN-HIGH-NOT: precision = "bf16"
// GDN-HIGH-COUNT-6: "flywheel.matmul"({{.*}}) {precision = "bf16x3", transpose_rhs = false}
// GDN-HIGH-NOT: precision = "bf16"

// Key sub-blocks: flywheel-tile splits 256-key blocks into two sub-blocks of 128 keys
// (flywheel-pipeline overlaps them). A key block of one lane tile (128 keys) cannot split
// into whole lane tiles, so it runs unsplit; 4 sub-blocks of a 256-key block drop to 2.
// transposed-whole-keys takes transposed kernels' key blocks of at least that many keys
// whole, one sub-block (flywheel-tpu's 1024); a smaller block, or a standard kernel,
// keeps key-splits. A non-positive sub-block count, or a negative transposed-whole-keys,
// is an error, with no output file.
// RUN: flywheel-opt %S/../Inputs/attention-bnth-bf16.mlir --flywheel-tile='block-kv=256 key-splits=2 remarks=true' 2>&1 >/dev/null | FileCheck %s --check-prefix=TILE-REMARK
// TILE-REMARK: remark: tiled into a Mosaic kernel (grid 1x2x1x1, query group 1, blocks 256x256, standard orientation, row sum on the VPU, 2 key sub-block(s))
// RUN: flywheel-opt %S/../Inputs/attention-bnth-bf16.mlir --flywheel-tile='block-kv=128 key-splits=2 remarks=true' 2>&1 >/dev/null | FileCheck %s --check-prefix=NARROW
// NARROW: remark: tiled into a Mosaic kernel (grid 1x2x1x2, query group 1, blocks 256x128, standard orientation, row sum on the VPU, 1 key sub-block(s))
// RUN: flywheel-opt %S/../Inputs/attention-bnth-bf16.mlir --flywheel-tile='block-kv=256 key-splits=4 remarks=true' 2>&1 >/dev/null | FileCheck %s --check-prefix=FEWER
// FEWER: remark: tiled into a Mosaic kernel ({{.*}}, 2 key sub-block(s))
// RUN: flywheel-opt %S/../Inputs/attention-bnth-bf16.mlir --pass-pipeline='builtin.module(flywheel-layout{orientation=transposed},flywheel-tile{block-kv=256 key-splits=2 transposed-whole-keys=256 remarks=true})' 2>&1 >/dev/null | FileCheck %s --check-prefix=TRANSPOSED-WHOLE
// TRANSPOSED-WHOLE: remark: tiled into a Mosaic kernel ({{.*}}, transposed orientation, {{.*}}, 1 key sub-block(s))
// RUN: flywheel-opt %S/../Inputs/attention-bnth-bf16.mlir --pass-pipeline='builtin.module(flywheel-layout{orientation=transposed},flywheel-tile{block-kv=256 key-splits=2 transposed-whole-keys=512 remarks=true})' 2>&1 >/dev/null | FileCheck %s --check-prefix=TRANSPOSED-SMALL
// TRANSPOSED-SMALL: remark: tiled into a Mosaic kernel ({{.*}}, transposed orientation, {{.*}}, 2 key sub-block(s))
// RUN: flywheel-opt %S/../Inputs/attention-bnth-bf16.mlir --flywheel-tile='block-kv=256 key-splits=2 transposed-whole-keys=256 remarks=true' 2>&1 >/dev/null | FileCheck %s --check-prefix=STANDARD-TWO
// STANDARD-TWO: remark: tiled into a Mosaic kernel ({{.*}}, standard orientation, {{.*}}, 2 key sub-block(s))
// RUN: not flywheel-opt %S/../Inputs/attention-bnth-bf16.mlir --flywheel-tile=key-splits=0 -o %t.none.mlir 2>&1 | FileCheck %s --check-prefix=ZERO
// ZERO: error: flywheel-tile: key-splits must be at least 1, not 0
// RUN: not test -e %t.none.mlir
// RUN: not flywheel-opt %S/../Inputs/attention-bnth-bf16.mlir --flywheel-tile=transposed-whole-keys=-1 -o %t.negative.mlir 2>&1 | FileCheck %s --check-prefix=NEGATIVE
// NEGATIVE: error: flywheel-tile: transposed-whole-keys must be at least 0, not -1
// RUN: not test -e %t.negative.mlir
// A head wider than the kernel serves (its blocks stop fitting VMEM; a head of 2^31 once
// took minutes in the kernel's text) is kept for the reference lowering, with a remark;
// the widest served head still gets its kernel.
// RUN: sed 's/1x2x256x128xbf16/1x2x256x1024xbf16/g' %S/../Inputs/attention-bnth-bf16.mlir | flywheel-opt --flywheel-tile=remarks=true 2>&1 | FileCheck %s --check-prefix=WIDE-HEAD
// WIDE-HEAD: remark: kept for the reference lowering: head dim 1024 (the kernel serves up to 512)
// WIDE-HEAD-NOT: flywheel.attention_kernel
// RUN: sed 's/1x2x256x128xbf16/1x2x256x512xbf16/g' %S/../Inputs/attention-bnth-bf16.mlir | flywheel-opt --flywheel-tile=remarks=true 2>&1 | FileCheck %s --check-prefix=HEAD-512
// HEAD-512: remark: tiled into a Mosaic kernel
// Block sizes of zero or less (once a division by zero inside the pass) are refused too.
// RUN: not flywheel-opt %S/../Inputs/attention-bnth-bf16.mlir --flywheel-tile=block-q=0 -o %t.block.mlir 2>&1 | FileCheck %s --check-prefix=BLOCK-ZERO
// BLOCK-ZERO: error: flywheel-tile: block-q must be at least 1, not 0
// BLOCK-ZERO-NOT: internal error
// RUN: not test -e %t.block.mlir
// RUN: not flywheel-opt %S/../Inputs/attention-bnth-bf16.mlir --flywheel-tile=causal-block-kv=-128 2>&1 | FileCheck %s --check-prefix=BLOCK-NEGATIVE
// BLOCK-NEGATIVE: error: flywheel-tile: causal-block-kv must be at least 1, not -128

// A mask operand with a band (causal, window): the band is folded into the mask the kernel
// reads (key <= query + right and key >= query - left, and-ed with it), so the kernel masks
// every block; rows the two empty are uniform over all keys in both programs.
// RUN: flywheel-opt %S/../Inputs/attention-mask-window-bf16.mlir --flywheel-tile=remarks=true -o %t.mask-band.mlir 2>&1 | FileCheck %s --check-prefix=MASK-BAND-REMARK
// MASK-BAND-REMARK: remark: tiled into a Mosaic kernel
// RUN: FileCheck %s --check-prefix=MASK-BAND < %t.mask-band.mlir
// MASK-BAND: %[[ROW:.*]] = "stablehlo.iota"() <{iota_dimension = 2 : i64}> : () -> tensor<1x1x256x256xi32>
// MASK-BAND: %[[COLUMN:.*]] = "stablehlo.iota"() <{iota_dimension = 3 : i64}>
// MASK-BAND: comparison_direction = #stablehlo<comparison_direction LE>
// MASK-BAND: "stablehlo.and"
// MASK-BAND: comparison_direction = #stablehlo<comparison_direction GE>
// MASK-BAND: "stablehlo.and"
// Widened to i32 by a select (a convert of a boolean is a DMA copy libtpu 0.0.51's
// static profiler cannot price).
// MASK-BAND: "stablehlo.select"({{.*}}) : (tensor<1x1x256x256xi1>, tensor<1x1x256x256xi32>, tensor<1x1x256x256xi32>) -> tensor<1x1x256x256xi32>
// MASK-BAND: "flywheel.attention_kernel"
// RUN: flywheel-opt %t.mask-band.mlir --pass-pipeline='builtin.module(flywheel-lower-to-mosaic,flywheel-lower-to-stablehlo)' -o %t.mask-band.lowered.mlir
// RUN: flywheel-opt %S/../Inputs/attention-mask-window-bf16.mlir --flywheel-lower-to-stablehlo -o %t.mask-band.reference.mlir
// RUN: flywheel check %t.mask-band.reference.mlir %t.mask-band.lowered.mlir | FileCheck %s --check-prefix=MASK-BAND-CHECK
// MASK-BAND-CHECK: check: passed
