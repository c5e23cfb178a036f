// flywheel-shard: in a program partitioned over chips with Shardy, each attention and
// Gated DeltaNet goes into an sdy.manual_computation over the mesh axes not yet manual,
// splitting heads (then batch) so that the Mosaic kernel flywheel-tile makes of it runs
// per chip on local shapes. XLA cannot partition a kernel's custom call: without the
// region it gathers every operand and runs the whole kernel on every chip.

// RUN: flywheel-opt %s --split-input-file --flywheel-shard=remarks=true --verify-diagnostics | FileCheck %s

// GQA 8/2 heads on a 2x2 mesh with no shardings given: "a" splits the two key/value
// heads, "b" (which the one key/value head left cannot take) the batch; each chip has
// 4 query heads and 1 key/value head.
module attributes {mhlo.num_partitions = 4 : i32} {
  "sdy.mesh"() <{mesh = #sdy.mesh<["a"=2, "b"=2]>, sym_name = "mesh"}> : () -> ()
  // CHECK-LABEL: sym_name = "gqa"
  func.func @gqa(%q: tensor<2x8x128x64xbf16>, %k: tensor<2x2x128x64xbf16>, %v: tensor<2x2x128x64xbf16>) -> tensor<2x8x128x64xbf16> {
    // CHECK: %[[O:.*]] = "sdy.manual_computation"(%arg0, %arg1, %arg2)
    // CHECK: ^bb0(%[[Q:.*]]: tensor<1x4x128x64xbf16>, %[[K:.*]]: tensor<1x1x128x64xbf16>, %[[V:.*]]: tensor<1x1x128x64xbf16>):
    // CHECK: %[[LOCAL:.*]] = "flywheel.attention"(%[[Q]], %[[K]], %[[V]]) {{.*}}kv_heads = 1 : i64{{.*}}q_heads = 4 : i64{{.*}} -> tensor<1x4x128x64xbf16>
    // CHECK: "sdy.return"(%[[LOCAL]])
    // CHECK: {in_shardings = #sdy.sharding_per_value<[<@mesh, [{"b"}, {"a"}, {}, {}]>, <@mesh, [{"b"}, {"a"}, {}, {}]>, <@mesh, [{"b"}, {"a"}, {}, {}]>]>, manual_axes = #sdy<manual_axes{"a", "b"}>, out_shardings = #sdy.sharding_per_value<[<@mesh, [{"b"}, {"a"}, {}, {}]>]>}
    // CHECK-SAME: -> tensor<2x8x128x64xbf16>
    // CHECK: "func.return"(%[[O]])
    // expected-remark@below {{partitioned over mesh @mesh axes "a", "b": heads split 2 ways, batch 2 ways}}
    %o = "flywheel.attention"(%q, %k, %v) {operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0>, scale = 0.125 : f32, causal = true, layout = "BNTH", q_heads = 8, kv_heads = 2} : (tensor<2x8x128x64xbf16>, tensor<2x2x128x64xbf16>, tensor<2x2x128x64xbf16>) -> tensor<2x8x128x64xbf16>
    return %o : tensor<2x8x128x64xbf16>
  }
}

// -----

// The program already splits the batch over "a" (the argument's sdy.sharding, through
// a convert): "a" keeps that job, "b" splits the heads. A mask broadcast over heads
// keeps its size-1 head dimension whole.
module attributes {mhlo.num_partitions = 4 : i32} {
  "sdy.mesh"() <{mesh = #sdy.mesh<["a"=2, "b"=2]>, sym_name = "mesh"}> : () -> ()
  // CHECK-LABEL: sym_name = "batch_sharded"
  func.func @batch_sharded(%q: tensor<2x128x4x64xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a"}, {}, {}, {}]>}, %k: tensor<2x128x4x64xbf16>, %v: tensor<2x128x4x64xbf16>, %mask: tensor<2x1x128x128xi1>) -> tensor<2x128x4x64xbf16> {
    %qb = "stablehlo.convert"(%q) : (tensor<2x128x4x64xf32>) -> tensor<2x128x4x64xbf16>
    // CHECK: "sdy.manual_computation"
    // CHECK: ^bb0(%{{.*}}: tensor<1x128x2x64xbf16>, %{{.*}}: tensor<1x128x2x64xbf16>, %{{.*}}: tensor<1x128x2x64xbf16>, %{{.*}}: tensor<1x1x128x128xi1>):
    // CHECK: in_shardings = #sdy.sharding_per_value<[<@mesh, [{"a"}, {}, {"b"}, {}]>, <@mesh, [{"a"}, {}, {"b"}, {}]>, <@mesh, [{"a"}, {}, {"b"}, {}]>, <@mesh, [{"a"}, {}, {}, {}]>]>
    // expected-remark@below {{partitioned over mesh @mesh axes "a", "b": heads split 2 ways, batch 2 ways}}
    %o = "flywheel.attention"(%qb, %k, %v, %mask) {operandSegmentSizes = array<i32: 1, 1, 1, 1, 0, 0, 0>, scale = 0.125 : f32, causal = false, layout = "BTNH", q_heads = 4, kv_heads = 4} : (tensor<2x128x4x64xbf16>, tensor<2x128x4x64xbf16>, tensor<2x128x4x64xbf16>, tensor<2x1x128x128xi1>) -> tensor<2x128x4x64xbf16>
    return %o : tensor<2x128x4x64xbf16>
  }
}

// -----

// Gated DeltaNet with an initial state: q, k, v and o split on their head axis, the
// gates on theirs (layout without the head dim), both states on dimension 1.
module attributes {mhlo.num_partitions = 2 : i32} {
  "sdy.mesh"() <{mesh = #sdy.mesh<["x"=2]>, sym_name = "mesh"}> : () -> ()
  // CHECK-LABEL: sym_name = "gated_delta"
  func.func @gated_delta(%q: tensor<1x256x2x64xbf16>, %k: tensor<1x256x2x64xbf16>, %v: tensor<1x256x4x64xbf16>, %g: tensor<1x256x4xf32>, %beta: tensor<1x256x4xf32>, %s0: tensor<1x4x64x64xf32>) -> (tensor<1x256x4x64xbf16>, tensor<1x4x64x64xf32>) {
    // CHECK: %[[R:.*]]:2 = "sdy.manual_computation"
    // CHECK: ^bb0(%{{.*}}: tensor<1x256x1x64xbf16>, %{{.*}}: tensor<1x256x1x64xbf16>, %{{.*}}: tensor<1x256x2x64xbf16>, %{{.*}}: tensor<1x256x2xf32>, %{{.*}}: tensor<1x256x2xf32>, %{{.*}}: tensor<1x2x64x64xf32>):
    // CHECK: "flywheel.gated_delta"{{.*}} -> (tensor<1x256x2x64xbf16>, tensor<1x2x64x64xf32>)
    // CHECK: in_shardings = #sdy.sharding_per_value<[<@mesh, [{}, {}, {"x"}, {}]>, <@mesh, [{}, {}, {"x"}, {}]>, <@mesh, [{}, {}, {"x"}, {}]>, <@mesh, [{}, {}, {"x"}]>, <@mesh, [{}, {}, {"x"}]>, <@mesh, [{}, {"x"}, {}, {}]>]>, manual_axes = #sdy<manual_axes{"x"}>, out_shardings = #sdy.sharding_per_value<[<@mesh, [{}, {}, {"x"}, {}]>, <@mesh, [{}, {"x"}, {}, {}]>]>
    // CHECK: "func.return"(%[[R]]#0, %[[R]]#1)
    // expected-remark@below {{partitioned over mesh @mesh axes "x": heads split 2 ways, batch 1 ways}}
    %o, %s = "flywheel.gated_delta"(%q, %k, %v, %g, %beta, %s0) {operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 1>, scale = 0.125 : f32, chunk_size = 64 : i64, layout = "BTNH"} : (tensor<1x256x2x64xbf16>, tensor<1x256x2x64xbf16>, tensor<1x256x4x64xbf16>, tensor<1x256x4xf32>, tensor<1x256x4xf32>, tensor<1x4x64x64xf32>) -> (tensor<1x256x4x64xbf16>, tensor<1x4x64x64xf32>)
    return %o, %s : tensor<1x256x4x64xbf16>, tensor<1x4x64x64xf32>
  }
}

// -----

// Inside a shard_map over "a" the op is already local over "a": only "b" becomes manual,
// in a nested region. An axis that divides neither heads nor batch ("c", 3 chips) is
// manual too, its chips repeating the work.
module attributes {mhlo.num_partitions = 12 : i32} {
  "sdy.mesh"() <{mesh = #sdy.mesh<["a"=2, "b"=2, "c"=3]>, sym_name = "mesh"}> : () -> ()
  // CHECK-LABEL: sym_name = "nested"
  func.func @nested(%q: tensor<2x4x128x64xbf16>) -> tensor<2x4x128x64xbf16> {
    // CHECK: "sdy.manual_computation"(%arg0)
    // CHECK: ^bb0(%[[LOCAL:[^:]*]]: tensor<1x4x128x64xbf16>):
    // CHECK: "sdy.manual_computation"(%[[LOCAL]], %[[LOCAL]], %[[LOCAL]])
    // CHECK: ^bb0(%{{.*}}: tensor<1x2x128x64xbf16>,
    // CHECK: {in_shardings = #sdy.sharding_per_value<[<@mesh, [{}, {"b"}, {}, {}]>, {{.*}} manual_axes = #sdy<manual_axes{"b", "c"}>
    %r = "sdy.manual_computation"(%q) <{in_shardings = #sdy.sharding_per_value<[<@mesh, [{"a"}, {}, {}, {}]>]>, manual_axes = #sdy<manual_axes{"a"}>, out_shardings = #sdy.sharding_per_value<[<@mesh, [{"a"}, {}, {}, {}]>]>}> ({
    ^bb0(%x: tensor<1x4x128x64xbf16>):
      // expected-remark@below {{partitioned over mesh @mesh axes "b", "c": heads split 2 ways, batch 1 ways; axes "c" divide neither, their chips repeat the work}}
      %o = "flywheel.attention"(%x, %x, %x) {operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0>, scale = 0.125 : f32, causal = false, layout = "BNTH", q_heads = 4, kv_heads = 4} : (tensor<1x4x128x64xbf16>, tensor<1x4x128x64xbf16>, tensor<1x4x128x64xbf16>) -> tensor<1x4x128x64xbf16>
      "sdy.return"(%o) : (tensor<1x4x128x64xbf16>) -> ()
    }) : (tensor<2x4x128x64xbf16>) -> tensor<2x4x128x64xbf16>
    return %r : tensor<2x4x128x64xbf16>
  }
}

// -----

// Near misses, left alone: an op already manual over every axis (a kernel may run
// there), a mesh whose axes hold one chip each, and a program on one chip.
module attributes {mhlo.num_partitions = 2 : i32} {
  "sdy.mesh"() <{mesh = #sdy.mesh<["x"=2, "y"=1]>, sym_name = "mesh"}> : () -> ()
  // CHECK-LABEL: sym_name = "all_manual"
  func.func @all_manual(%q: tensor<2x4x128x64xbf16>) -> tensor<2x4x128x64xbf16> {
    // CHECK-COUNT-1: "sdy.manual_computation"
    // CHECK-NOT: "sdy.manual_computation"
    %r = "sdy.manual_computation"(%q) <{in_shardings = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}, {}, {}]>]>, manual_axes = #sdy<manual_axes{"x"}>, out_shardings = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}, {}, {}]>]>}> ({
    ^bb0(%x: tensor<1x4x128x64xbf16>):
      %o = "flywheel.attention"(%x, %x, %x) {operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0>, scale = 0.125 : f32, causal = false, layout = "BNTH", q_heads = 4, kv_heads = 4} : (tensor<1x4x128x64xbf16>, tensor<1x4x128x64xbf16>, tensor<1x4x128x64xbf16>) -> tensor<1x4x128x64xbf16>
      "sdy.return"(%o) : (tensor<1x4x128x64xbf16>) -> ()
    }) : (tensor<2x4x128x64xbf16>) -> tensor<2x4x128x64xbf16>
    return %r : tensor<2x4x128x64xbf16>
  }
}

// -----

module attributes {mhlo.num_partitions = 1 : i32} {
  "sdy.mesh"() <{mesh = #sdy.mesh<["x"=1]>, sym_name = "mesh"}> : () -> ()
  // CHECK-LABEL: sym_name = "one_chip"
  func.func @one_chip(%q: tensor<1x4x128x64xbf16>) -> tensor<1x4x128x64xbf16> {
    // CHECK-NOT: "sdy.manual_computation"
    // CHECK: "flywheel.attention"
    %o = "flywheel.attention"(%q, %q, %q) {operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0>, scale = 0.125 : f32, causal = false, layout = "BNTH", q_heads = 4, kv_heads = 4} : (tensor<1x4x128x64xbf16>, tensor<1x4x128x64xbf16>, tensor<1x4x128x64xbf16>) -> tensor<1x4x128x64xbf16>
    return %o : tensor<1x4x128x64xbf16>
  }
}

// -----

// Diagnostics. A GSPMD program (partitioned, no sdy.mesh) gets no region; flywheel-tile
// will keep its ops for the reference lowering (below).
module attributes {mhlo.num_partitions = 4 : i32} {
  func.func @gspmd(%q: tensor<1x4x128x64xbf16> {mhlo.sharding = "{devices=[1,4,1,1]<=[4]}"}) -> tensor<1x4x128x64xbf16> {
    // expected-remark@below {{not partitioned by flywheel-shard: the program is partitioned without Shardy (no sdy.mesh)}}
    %o = "flywheel.attention"(%q, %q, %q) {operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0>, scale = 0.125 : f32, causal = false, layout = "BNTH", q_heads = 4, kv_heads = 4} : (tensor<1x4x128x64xbf16>, tensor<1x4x128x64xbf16>, tensor<1x4x128x64xbf16>) -> tensor<1x4x128x64xbf16>
    return %o : tensor<1x4x128x64xbf16>
  }
}

// -----

// Two meshes and no manual region naming one: which mesh the op belongs to is unknown.
module attributes {mhlo.num_partitions = 2 : i32} {
  "sdy.mesh"() <{mesh = #sdy.mesh<["x"=2]>, sym_name = "mesh"}> : () -> ()
  "sdy.mesh"() <{mesh = #sdy.mesh<["y"=2]>, sym_name = "other"}> : () -> ()
  func.func @two_meshes(%q: tensor<1x4x128x64xbf16>) -> tensor<1x4x128x64xbf16> {
    // expected-remark@below {{not partitioned by flywheel-shard: the module has 2 meshes and the op is in no manual region naming one}}
    %o = "flywheel.attention"(%q, %q, %q) {operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0>, scale = 0.125 : f32, causal = false, layout = "BNTH", q_heads = 4, kv_heads = 4} : (tensor<1x4x128x64xbf16>, tensor<1x4x128x64xbf16>, tensor<1x4x128x64xbf16>) -> tensor<1x4x128x64xbf16>
    return %o : tensor<1x4x128x64xbf16>
  }
}

// -----

// A mesh it cannot read is an error at the mesh.
module attributes {mhlo.num_partitions = 2 : i32} {
  // expected-error@below {{flywheel-shard: cannot read the sdy.mesh "#sdy.mesh<[x=2]>"}}
  "sdy.mesh"() <{mesh = #sdy.mesh<[x=2]>, sym_name = "mesh"}> : () -> ()
  func.func @bad_mesh(%q: tensor<1x4x128x64xbf16>) -> tensor<1x4x128x64xbf16> {
    %o = "flywheel.attention"(%q, %q, %q) {operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0>, scale = 0.125 : f32, causal = false, layout = "BNTH", q_heads = 4, kv_heads = 4} : (tensor<1x4x128x64xbf16>, tensor<1x4x128x64xbf16>, tensor<1x4x128x64xbf16>) -> tensor<1x4x128x64xbf16>
    return %o : tensor<1x4x128x64xbf16>
  }
}

// Through flywheel-tpu on real JAX programs. Heads-sharded causal attention (4 heads over
// 4 chips): the kernel in the region runs on one head per chip, and the program compiles
// for v6e:2x2 and tpu7x:2x2x1 with no collective (XLA would otherwise all-gather the
// operands and run all four heads on every chip).
// RUN: flywheel-opt %S/../fixtures/attention_heads_sharded_bf16.mlir --flywheel-tpu='target=v6e profitability=off' -o %t.attention.mlir
// RUN: FileCheck %s --check-prefix=ATTENTION < %t.attention.mlir
// ATTENTION: "sdy.manual_computation"
// ATTENTION: "stablehlo.custom_call"{{.*}}call_target_name = "tpu_custom_call"{{.*}} -> tensor<2x1x128x64xbf16>
// ATTENTION: manual_axes = #sdy<manual_axes{"heads"}>
// RUN: flywheel compile --target v6e --topology v6e:2x2 %t.attention.mlir 2>/dev/null | FileCheck %s --check-prefix=FLOPS
// FLOPS: compiled {{.*}} for v6e:2x2 as 4 SPMD partitions
// One chip's share: 2 x 1 head x 128 x 128 x 64 x 2 (QK and PV) x 2 flops.
// FLOPS: flops 8388608
// RUN: flywheel check %S/../fixtures/attention_heads_sharded_bf16.mlir %t.attention.mlir | FileCheck %s --check-prefix=CHECKED
// CHECKED: check: passed

// Gated DeltaNet on a 2x2 mesh, batch over "batch" and heads over "heads" as the program
// shards them; compiled for both 2x2 topologies and checked on four CPU devices.
// RUN: flywheel-opt %S/../fixtures/gdn_sharded_bf16.mlir --flywheel-tpu='target=v6e remarks=true' -o %t.gdn.mlir 2>&1 | FileCheck %s --check-prefix=GDN-REMARK
// GDN-REMARK: remark: partitioned over mesh @mesh axes "batch", "heads": heads split 2 ways, batch 2 ways
// GDN-REMARK: remark: tiled into a Mosaic kernel (grid 1x1x1, chunks of 64, 1 value head(s) and 2 chunk(s) per step)
// RUN: FileCheck %s --check-prefix=GDN < %t.gdn.mlir
// GDN: in_shardings = #sdy.sharding_per_value<[<@mesh, [{"batch"}, {}, {"heads"}, {}]>,
// RUN: flywheel compile --target v6e --topology v6e:2x2 %t.gdn.mlir 2>/dev/null | FileCheck %s --check-prefix=SPMD
// SPMD: as 4 SPMD partitions
// RUN: flywheel-opt %S/../fixtures/gdn_sharded_bf16.mlir --flywheel-tpu=target=tpu7x -o %t.gdn7.mlir
// RUN: flywheel compile --target tpu7x --topology tpu7x:2x2x1 %t.gdn7.mlir 2>/dev/null | FileCheck %s --check-prefix=SPMD
// The source's products ask DEFAULT precision, so the kernel takes some in one bf16
// pass, as a TPU runs the source's: within twice the TPU's own error of the exact numbers.
// RUN: flywheel check %S/../fixtures/gdn_sharded_bf16.mlir %t.gdn.mlir --reference tpu-bound | FileCheck %s --check-prefix=GDN-CHECKED
// GDN-CHECKED: check: passed (2 outputs within tolerance)
// The check can fail: the same program with q's region sharding swapped (batch and heads
// exchanged, same local shape) gives chips the wrong q.
// RUN: sed '/in_shardings = #sdy.sharding_per_value/ s/<@mesh, \[{"batch"}, {}, {"heads"}, {}\]>/<@mesh, [{"heads"}, {}, {"batch"}, {}]>/' %t.gdn.mlir > %t.swapped.mlir
// RUN: not flywheel check %S/../fixtures/gdn_sharded_bf16.mlir %t.swapped.mlir --reference tpu-bound | FileCheck %s --check-prefix=SWAPPED
// SWAPPED: FAIL

// flywheel-tile does not make a kernel in a partitioned program outside a manual region.
// RUN: flywheel-opt %s --split-input-file --pass-pipeline='builtin.module(flywheel-tile{remarks=true})' 2>&1 | FileCheck %s --check-prefix=KEPT
// KEPT: remark: kept for the reference lowering: the program is partitioned over 4 chips and it has no Shardy mesh; XLA cannot partition a kernel
