// flywheel-lower-to-mosaic: flywheel.attention_kernel (tile IR from flywheel-tile) -> its
// Mosaic kernel serialized into stablehlo.custom_call @tpu_custom_call, compiled by libtpu
// (deviceless). The kernels are flywheel-tile's, committed as tile IR (Inputs/*.tile.mlir
// and ../transforms/Inputs/*.tile.mlir, each with the command that made it), so that the
// checks of the lowering follow it alone; flywheel-tile's remarks on them are checked
// from the programs.

// RUN: flywheel-opt %S/../fixtures/attention_gqa_bf16.mlir --pass-pipeline='builtin.module(flywheel-raise-attention,flywheel-tile{remarks=true},flywheel-tile)' 2>&1 >/dev/null | FileCheck %s --check-prefix=REMARK
// RUN: flywheel-opt %S/Inputs/attention-gqa-bf16.tile.mlir --flywheel-lower-to-mosaic -o %t.gqa.mlir
// REMARK: remark: tiled into a Mosaic kernel (grid 2x2x1x1, query group 4, blocks 128x128, {{.*}})
// RUN: FileCheck %s --check-prefix=CALL < %t.gqa.mlir
// Q to [B, Nkv, T x group, D] (each query's 4 group heads in adjacent rows), K and V to
// BNTH, the kernel (cost: 2 MXU products of 2*128*128*64 flops per (batch, query head),
// 128*(128+1) exponentials per query head, q+k+v+o bytes), the output back to BTNH.
// CALL: %[[SPLIT:.*]] = "stablehlo.reshape"(%arg0) : (tensor<2x128x8x64xbf16>) -> tensor<2x128x2x4x64xbf16>
// CALL: %[[GROUPED:.*]] = "stablehlo.transpose"(%[[SPLIT]]) <{permutation = array<i64: 0, 2, 1, 3, 4>}> : (tensor<2x128x2x4x64xbf16>) -> tensor<2x2x128x4x64xbf16>
// CALL: %[[Q:.*]] = "stablehlo.reshape"(%[[GROUPED]]) : (tensor<2x2x128x4x64xbf16>) -> tensor<2x2x512x64xbf16>
// CALL: %[[K:.*]] = "stablehlo.transpose"(%arg1) <{permutation = array<i64: 0, 2, 1, 3>}> : (tensor<2x128x2x64xbf16>) -> tensor<2x2x128x64xbf16>
// CALL: %[[V:.*]] = "stablehlo.transpose"(%arg2) <{permutation = array<i64: 0, 2, 1, 3>}> : (tensor<2x128x2x64xbf16>) -> tensor<2x2x128x64xbf16>
// CALL: %[[O:.*]] = "stablehlo.custom_call"(%[[Q]], %[[K]], %[[V]]) <{api_version = 1 : i32, backend_config = "{\22custom_call_config\22: {\22body\22: \22{{[A-Za-z0-9+/=]+}}\22, \22cost_estimate\22: {\22flops\22: 67108864, \22transcendentals\22: 264192, \22bytes_accessed\22: 655360, \22remote_bytes_transferred\22: 0}, \22serialization_format\22: 1, \22needs_layout_passes\22: true}}", call_target_name = "tpu_custom_call"{{.*}}}> {kernel_name = "flywheel_attention"} : (tensor<2x2x512x64xbf16>, tensor<2x2x128x64xbf16>, tensor<2x2x128x64xbf16>) -> tensor<2x2x512x64xbf16>
// CALL: %[[ROWS:.*]] = "stablehlo.reshape"(%[[O]]) : (tensor<2x2x512x64xbf16>) -> tensor<2x2x128x4x64xbf16>
// CALL: %[[HEADS:.*]] = "stablehlo.transpose"(%[[ROWS]]) <{permutation = array<i64: 0, 2, 1, 3, 4>}> : (tensor<2x2x128x4x64xbf16>) -> tensor<2x128x2x4x64xbf16>
// CALL: "stablehlo.reshape"(%[[HEADS]]) : (tensor<2x128x2x4x64xbf16>) -> tensor<2x128x8x64xbf16>
// CALL-NOT: flywheel.attention

// Every kernel compiles for all three targets.
// RUN: flywheel compile --target v5e %t.gqa.mlir 2>/dev/null | FileCheck %s --check-prefix=COMPILE
// RUN: flywheel compile --target v6e %t.gqa.mlir 2>/dev/null | FileCheck %s --check-prefix=COMPILE
// RUN: flywheel compile --target tpu7x %t.gqa.mlir 2>/dev/null | FileCheck %s --check-prefix=COMPILE
// RUN: flywheel-opt %S/../fixtures/attention_causal_bf16.mlir --pass-pipeline='builtin.module(flywheel-raise-attention,flywheel-tile,flywheel-lower-to-mosaic)' -o %t.causal.mlir
// RUN: flywheel compile --target v6e %t.causal.mlir 2>/dev/null | FileCheck %s --check-prefix=COMPILE
// RUN: flywheel-opt %S/../transforms/Inputs/attention-softcap-f32.tile.mlir --flywheel-lower-to-mosaic -o %t.softcap.mlir
// RUN: flywheel compile --target tpu7x %t.softcap.mlir 2>/dev/null | FileCheck %s --check-prefix=COMPILE
// COMPILE: compiled {{.*}} for
// COMPILE: flops

// A kernel op's vmem_limit (MiB; flywheel-tile sets it) is the scoped VMEM its kernel
// may use, in the call's backend_config as Pallas writes vmem_limit_bytes. The
// transposed kernel at 2048 x 2048 blocks with the lagged max (flywheel-tpu's on v6e)
// needs 17.83 MiB of scoped VMEM on libtpu 0.0.51: with its 36 it compiles, with 16 it
// does not. Without a limit the call has no memory config (libtpu's default applies).
// RUN: flywheel-opt %S/Inputs/attention-transposed-bf16-4096.tile.mlir --pass-pipeline='builtin.module(flywheel-exp-softmax{fold-scale=split lagged-max=transposed},flywheel-pipeline)' -o %t.wide.mlir
// RUN: flywheel-opt %t.wide.mlir --flywheel-lower-to-mosaic -o %t.wide-36.mlir
// RUN: FileCheck %s --check-prefix=VMEM < %t.wide-36.mlir
// VMEM: \22needs_layout_passes\22: true}, \22scoped_memory_configs\22: [{\22memory_space\22: 1, \22offset\22: 0, \22size\22: 37748736}]}"
// RUN: flywheel compile --target v6e %t.wide-36.mlir 2>/dev/null | FileCheck %s --check-prefix=COMPILE
// RUN: sed 's/, vmem_limit = 36 : i64//' %t.wide.mlir | flywheel-opt --flywheel-lower-to-mosaic -o %t.wide-default.mlir
// RUN: FileCheck %s --check-prefix=VMEM-DEFAULT < %t.wide-default.mlir
// VMEM-DEFAULT: \22needs_layout_passes\22: true}}"
// VMEM-DEFAULT-NOT: scoped_memory_configs
// RUN: sed 's/vmem_limit = 36 : i64/vmem_limit = 16 : i64/' %t.wide.mlir | flywheel-opt --flywheel-lower-to-mosaic -o %t.wide-16.mlir
// RUN: not flywheel compile --target v6e %t.wide-16.mlir 2>&1 | FileCheck %s --check-prefix=VMEM-OOM
// VMEM-OOM: flywheel: error: libtpu could not compile the module: E1001: CompileTimeScopedVmemOom
// Diagnostics: a limit that is not a positive number of MiB is an error at the kernel
// op, and no output file is written.
// RUN: sed 's/vmem_limit = 36 : i64/vmem_limit = 0 : i64/' %t.wide.mlir | not flywheel-opt --flywheel-lower-to-mosaic -o %t.wide-bad.mlir 2>&1 | FileCheck %s --check-prefix=VMEM-BAD
// VMEM-BAD: error: 'flywheel.attention_kernel' op: cannot serialize its kernel: 'vmem_limit' must be from 1 to 1048576 MiB, not 0
// RUN: not test -e %t.wide-bad.mlir

// Static cycles, the kernel by its name.
// RUN: flywheel-opt %S/../transforms/Inputs/attention-causal-bf16.tile.mlir --flywheel-lower-to-mosaic -o %t.bnth.mlir
// RUN: flywheel profile --target v6e %t.bnth.mlir 2>/dev/null | FileCheck %s --check-prefix=PROFILE
// PROFILE: {{[a-z_.0-9]+}} {{ *}}{{[1-9][0-9]*}}
// PROFILE: total {{ *[1-9][0-9]*}}

// Biases and masks are extra windowed operands (the mask as i32); both compile.
// RUN: flywheel-opt %S/Inputs/attention-mask-bf16.tile.mlir --flywheel-lower-to-mosaic -o %t.mask.mlir
// RUN: FileCheck %s --check-prefix=MASK < %t.mask.mlir
// MASK: "stablehlo.convert"(%arg3) : (tensor<2x1x128x128xi1>) -> tensor<2x1x128x128xi32>
// MASK: "stablehlo.custom_call"({{.*}} : (tensor<2x4x128x64xbf16>, tensor<2x4x128x64xbf16>, tensor<2x4x128x64xbf16>, tensor<2x1x128x128xi32>) -> tensor<2x4x128x64xbf16>
// RUN: flywheel compile --target v6e %t.mask.mlir 2>/dev/null | FileCheck %s --check-prefix=COMPILE
// libtpu 0.0.51's static profiler aborts on it (the mask's conversion); the abort becomes
// one error line (the compile runs in a child process).
// RUN: not flywheel profile --target v6e %t.mask.mlir 2>&1 | FileCheck %s --check-prefix=ABORT
// ABORT: flywheel: error: libtpu aborted while profiling: Static LLO profiling of {{.*}} failed: INVALID_ARGUMENT: Unsupported DMA direction for latency modeling: dma-general
// RUN: flywheel-opt %S/../transforms/Inputs/attention-bias-f32.tile.mlir --flywheel-lower-to-mosaic -o %t.bias.mlir
// RUN: flywheel compile --target v5e %t.bias.mlir 2>/dev/null | FileCheck %s --check-prefix=COMPILE
// Sliding windows are served (skipping blocks outside the band, masking its edges).
// RUN: flywheel-opt %S/../fixtures/attention_sliding_window_f32.mlir --pass-pipeline='builtin.module(flywheel-raise-attention,flywheel-tile{remarks=true causal-block-q=64 causal-block-kv=32},flywheel-tile,flywheel-lower-to-mosaic)' -o %t.window.mlir 2>&1 | FileCheck %s --check-prefix=WINDOW
// WINDOW: remark: tiled into a Mosaic kernel (grid 2x4x2x4, query group 1, blocks 64x32, {{.*}})
// RUN: flywheel compile --target tpu7x %t.window.mlir 2>/dev/null | FileCheck %s --check-prefix=COMPILE
// Lengths the blocks do not divide are padded with zeros to whole blocks (the key
// padding masked in the kernel) and the output sliced back; the result compiles.
// RUN: flywheel-opt %S/../fixtures/attention_mha_f32.mlir --pass-pipeline='builtin.module(flywheel-raise-attention,flywheel-tile{block-q=48 block-kv=96 remarks=true},flywheel-tile)' 2>&1 >/dev/null | FileCheck %s --check-prefix=PADDED-REMARK
// RUN: flywheel-opt %S/Inputs/attention-padded-f32.tile.mlir --flywheel-lower-to-mosaic -o %t.padded.mlir
// PADDED-REMARK: remark: tiled into a Mosaic kernel (grid 2x4x3x2, query group 1, blocks 48x96, {{.*}})
// RUN: FileCheck %s --check-prefix=PADDED < %t.padded.mlir
// PADDED: "stablehlo.pad"(%arg0, %{{.*}}) <{edge_padding_high = array<i64: 0, 16, 0, 0>, edge_padding_low = array<i64: 0, 0, 0, 0>, interior_padding = array<i64: 0, 0, 0, 0>}> : (tensor<2x128x4x64xf32>, tensor<f32>) -> tensor<2x144x4x64xf32>
// PADDED: "stablehlo.pad"(%arg1, %{{.*}}) <{edge_padding_high = array<i64: 0, 64, 0, 0>, {{.*}}-> tensor<2x192x4x64xf32>
// PADDED: "stablehlo.pad"(%arg2, %{{.*}}) <{edge_padding_high = array<i64: 0, 64, 0, 0>, {{.*}}-> tensor<2x192x4x64xf32>
// PADDED: "stablehlo.custom_call"{{.*}} : (tensor<2x4x144x64xf32>, tensor<2x4x192x64xf32>, tensor<2x4x192x64xf32>) -> tensor<2x4x144x64xf32>
// PADDED: "stablehlo.slice"({{.*}}) <{limit_indices = array<i64: 2, 128, 4, 64>, start_indices = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1, 1, 1>}> : (tensor<2x144x4x64xf32>) -> tensor<2x128x4x64xf32>
// RUN: flywheel compile --target v5e %t.padded.mlir 2>/dev/null | FileCheck %s --check-prefix=COMPILE
// RUN: flywheel compile --target v6e %t.padded.mlir 2>/dev/null | FileCheck %s --check-prefix=COMPILE
// RUN: flywheel compile --target tpu7x %t.padded.mlir 2>/dev/null | FileCheck %s --check-prefix=COMPILE
// RUN: flywheel check %S/../fixtures/attention_mha_f32.mlir %t.padded.mlir | FileCheck %s --check-prefix=PADDED-CHECK
// PADDED-CHECK: check: passed

// A kernel op whose kernel module is missing is an error at its location, and nothing is
// written.
// RUN: not flywheel-opt %s --flywheel-lower-to-mosaic -o %t.missing.mlir 2>&1 | FileCheck %s --check-prefix=MISSING
// MISSING: to-mosaic.mlir:[[@LINE+4]]:8: error: 'flywheel.attention_kernel' op: cannot serialize its kernel: no kernel module @nowhere in the program
// RUN: test ! -e %t.missing.mlir

func.func @missing(%q: tensor<1x1x128x64xf32>) -> tensor<1x1x128x64xf32> {
  %o = "flywheel.attention_kernel"(%q, %q, %q) {operandSegmentSizes = array<i32: 1, 1, 1, 0, 0>, flops = 1 : i64, transcendentals = 1 : i64, bytes_accessed = 1 : i64, kernel = @nowhere} : (tensor<1x1x128x64xf32>, tensor<1x1x128x64xf32>, tensor<1x1x128x64xf32>) -> tensor<1x1x128x64xf32>
  return %o : tensor<1x1x128x64xf32>
}

// The Gated DeltaNet kernel: one call with two results (o and the final state). Its f32
// products ask Mosaic for fp32 precision (the MXU's default would round them to bf16);
// with gdn-precision=bf16x3 each is three one-pass bf16 products of the operands' high
// and low bf16 parts instead, taken as one product. The body is checked decoded
// from the call's config. The kernel (two value heads, two chunks a step) is committed at
// flywheel-tile's default gdn-precision=bf16x3; with its products' precision dropped it is
// the kernel flywheel-tile writes at gdn-precision=fp32.
// RUN: sed 's/{precision = "bf16x3", /{/' %S/../transforms/Inputs/gdn-bf16.tile.mlir | flywheel-opt --pass-pipeline='builtin.module(flywheel-tri-inverse,flywheel-lower-to-mosaic)' -o %t.gdn.mlir
// RUN: FileCheck %s --check-prefix=GDN < %t.gdn.mlir
// GDN: %{{.*}}:2 = "stablehlo.custom_call"({{.*}}call_target_name = "tpu_custom_call"{{.*}}result_layouts = [dense<[2, 1, 0]> : tensor<3xindex>, dense<[3, 2, 1, 0]> : tensor<4xindex>]}> {kernel_name = "flywheel_gated_delta"}
// GDN-SAME: -> (tensor<1x128x256xbf16>, tensor<1x2x128x128xf32>)
// RUN: grep -o 'body\\22: \\22[A-Za-z0-9+/=]*' %t.gdn.mlir | sed 's/.*\\22//' | base64 -d | FileCheck %s --check-prefix=FP32
// FP32: "stable_mosaic.tpu.matmul"({{.*}}) {dimension_numbers = {{.*}}} : (vector<128x128xbf16>, vector<128x128xbf16>, vector<128x128xf32>)
// FP32: "stable_mosaic.tpu.matmul"({{.*}}) {dimension_numbers = {{.*}}, precision = #tpu.contract_precision<fp32>, {{.*}}} : (vector<64x128xf32>, vector<128x128xf32>, vector<64x128xf32>)
// RUN: flywheel-opt %S/../transforms/Inputs/gdn-bf16.tile.mlir --pass-pipeline='builtin.module(flywheel-tri-inverse,flywheel-lower-to-mosaic)' -o %t.gdn3.mlir
// RUN: grep -o 'body\\22: \\22[A-Za-z0-9+/=]*' %t.gdn3.mlir | sed 's/.*\\22//' | base64 -d | FileCheck %s --check-prefix=BF16X3
// Each f32 operand is split once, right after its definition (an operand that holds
// bf16 numbers has no low part, and its product is left out: Kᵀ, below).
// BF16X3-NOT: contract_precision
// Two f32 tiles take three passes as one product over their contractions side by side,
// [hi | lo | hi] times [hi; hi; lo], which the MXU sums as it sums any contraction. The
// inverse's first, N N (N side by side, times N stacked back): N's parts are the masking
// of A's parts, the right operand's parts are N's stacked back in bf16 (never an f32 128
// x 128 copy split again).
// BF16X3-NOT: "stable_mosaic.tpu.concatenate"({{.*}}) {dimension = 0 : i32} : (vector<64x128xf32>, vector<64x128xf32>) -> vector<128x128xf32>
// BF16X3: %[[NH:.*]] = "stable_mosaic.arith.select"(%[[N_MASK:.*]], %{{.*}}, %[[Z:.*]]) : (vector<64x128xi1>, vector<64x128xbf16>, vector<64x128xbf16>)
// BF16X3-NEXT: %[[NL:.*]] = "stable_mosaic.arith.select"(%[[N_MASK]], %{{.*}}, %[[Z]])
// BF16X3: %[[CH:.*]] = "stable_mosaic.tpu.concatenate"(%[[NH]], %[[NH]]) {dimension = 0 : i32} : ({{.*}}) -> vector<128x128xbf16>
// BF16X3-NEXT: %[[CL:.*]] = "stable_mosaic.tpu.concatenate"(%[[NL]], %[[NL]]) {dimension = 0 : i32}
// BF16X3-NEXT: %[[Z2:.*]] = "stable_mosaic.arith.constant"
// BF16X3-NEXT: %[[RH:.*]] = "stable_mosaic.arith.select"(%{{.*}}, %[[CH]], %[[Z2]])
// BF16X3-NEXT: %[[RL:.*]] = "stable_mosaic.arith.select"(%{{.*}}, %[[CL]], %[[Z2]])
// BF16X3-NEXT: %[[ZERO:.*]] = "stable_mosaic.arith.constant"
// BF16X3-NEXT: %[[LEFT:.*]] = "stable_mosaic.tpu.concatenate"(%[[NH]], %[[NL]], %[[NH]]) {dimension = 1 : i32} : ({{.*}}) -> vector<64x384xbf16>
// BF16X3-NEXT: %[[RIGHT:.*]] = "stable_mosaic.tpu.concatenate"(%[[RH]], %[[RH]], %[[RL]]) {dimension = 0 : i32} : ({{.*}}) -> vector<384x128xbf16>
// BF16X3-NEXT: %[[N2:.*]] = "stable_mosaic.tpu.matmul"(%[[LEFT]], %[[RIGHT]], %[[ZERO]]) {{.*}} -> vector<64x128xf32>
// BF16X3-NEXT: "stable_mosaic.arith.truncf"(%[[N2]])
// BF16X3-NOT: "stable_mosaic.arith.addf"(%[[N2]],
// Near miss: with one head per step the inverse's products contract over 64 lanes, and
// three passes side by side would sit at lane offsets 64 and 128 (relaid out): they go
// apart, hi·lo, then the left parts stacked as one product of twice the rows against the
// right high part (its weights loaded once), the halves added. (The one-head kernel is
// committed with fp32 products; at bf16x3 it is the kernel flywheel-tile{gdn-heads=1}
// writes.)
// RUN: sed 's/{transpose_rhs = false}/{precision = "bf16x3", transpose_rhs = false}/' %S/../transforms/Inputs/gdn-one-head-fp32.tile.mlir | flywheel-opt --pass-pipeline='builtin.module(flywheel-tri-inverse,flywheel-lower-to-mosaic)' | grep -o 'body\\22: \\22[A-Za-z0-9+/=]*' | sed 's/.*\\22//' | base64 -d | FileCheck %s --check-prefix=APART
// APART-NOT: x192xbf16>
// APART: %[[HL:.*]] = "stable_mosaic.tpu.matmul"(%[[NH:.*]], %[[NL:.*]], %{{.*}}) {{.*}} : (vector<64x64xbf16>, vector<64x64xbf16>, vector<64x64xf32>) -> vector<64x64xf32>
// APART-NEXT: %[[BOTH:.*]] = "stable_mosaic.tpu.concatenate"(%[[NH]], %[[NL]]) {dimension = 0 : i32} : ({{.*}}) -> vector<128x64xbf16>
// APART-NEXT: "stable_mosaic.arith.constant"
// APART-NEXT: %[[P:.*]] = "stable_mosaic.tpu.matmul"(%[[BOTH]], %[[NH]], %{{.*}}) {{.*}} -> vector<128x64xf32>
// APART-NEXT: %[[LOW:.*]] = "stable_mosaic.vector.extract_strided_slice"(%[[P]]) {offsets = [64, 0], sizes = [64, 64], strides = [1, 1]}
// APART-NEXT: %[[SUM:.*]] = "stable_mosaic.arith.addf"(%[[HL]], %[[LOW]])
// APART-NEXT: %[[HIGH:.*]] = "stable_mosaic.vector.extract_strided_slice"(%[[P]]) {offsets = [0, 0], sizes = [64, 64], strides = [1, 1]}
// APART-NEXT: "stable_mosaic.arith.addf"(%[[SUM]], %[[HIGH]])
// Kᵀ for the state update (K widened from bf16, transposed) times the decayed values
// takes two: Kᵀ has no low part.
// RUN: grep -o 'body\\22: \\22[A-Za-z0-9+/=]*' %t.gdn3.mlir | sed 's/.*\\22//' | base64 -d | FileCheck %s --check-prefix=BF16X3-KEYS
// BF16X3-KEYS: %[[K:.*]] = "stable_mosaic.arith.extf"(%{{.*}}) : (vector<64x128xbf16>) -> vector<64x128xf32>
// BF16X3-KEYS-NEXT: %[[KT:.*]] = "stable_mosaic.vector.transpose"(%[[K]])
// BF16X3-KEYS-NOT: "stable_mosaic.arith.subf"(%[[KT]],
// Near miss: with f32 inputs Kᵀ is f32 and keeps its low part (three products).
// RUN: flywheel-opt %S/Inputs/gdn-f32.tile.mlir --pass-pipeline='builtin.module(flywheel-tri-inverse,flywheel-lower-to-mosaic)' | grep -o 'body\\22: \\22[A-Za-z0-9+/=]*' | sed 's/.*\\22//' | base64 -d | FileCheck %s --check-prefix=F32-KEYS
// F32-KEYS: %[[KT:.*]] = "stable_mosaic.vector.transpose"(%{{.*}}) {{.*}} : (vector<64x128xf32>) -> vector<128x64xf32>
// F32-KEYS: %[[KTH:.*]] = "stable_mosaic.arith.truncf"(%[[KT]])
// F32-KEYS-NEXT: %[[KTB:.*]] = "stable_mosaic.arith.extf"(%[[KTH]])
// F32-KEYS-NEXT: "stable_mosaic.arith.subf"(%[[KT]], %[[KTB]])
// BF16X3-KEYS: %[[KTH:.*]] = "stable_mosaic.arith.truncf"(%[[KT]]) : (vector<128x64xf32>) -> vector<128x64xbf16>
// BF16X3-KEYS-NOT: "stable_mosaic.arith.subf"(%[[KT]],
// BF16X3-KEYS: %[[LEFT:.*]] = "stable_mosaic.tpu.concatenate"(%[[KTH]], %[[KTH]]) {dimension = 1 : i32} : ({{.*}}) -> vector<128x128xbf16>
// BF16X3-KEYS-NEXT: %[[RIGHT:.*]] = "stable_mosaic.tpu.concatenate"(%{{.*}}, %{{.*}}) {dimension = 0 : i32} : (vector<64x128xbf16>, vector<64x128xbf16>) -> vector<128x128xbf16>
// BF16X3-KEYS-NEXT: "stable_mosaic.tpu.matmul"(%[[LEFT]], %[[RIGHT]], %{{.*}})
// BF16X3-KEYS-NOT: "stable_mosaic.arith.subf"(%[[KT]],
// With gdn-single-pass the products after the inverse are one pass of the operands'
// bf16 roundings, with no low parts: U and W from T [βV | βe^γK] first. (With its products
// outside the inverse's loop at precision "bf16", the kernel is the one
// flywheel-tile{gdn-single-pass=true} writes.)
// RUN: sed '/scf.for/,/scf.yield/!s/precision = "bf16x3"/precision = "bf16"/' %S/../transforms/Inputs/gdn-bf16.tile.mlir | flywheel-opt --pass-pipeline='builtin.module(flywheel-tri-inverse,flywheel-lower-to-mosaic)' -o %t.gdn1.mlir
// RUN: grep -o 'body\\22: \\22[A-Za-z0-9+/=]*' %t.gdn1.mlir | sed 's/.*\\22//' | base64 -d | FileCheck %s --check-prefix=SINGLE
// SINGLE: %[[J:.*]] = "stable_mosaic.tpu.concatenate"({{.*}}) {dimension = 1 : i32} : (vector<128x128xf32>, vector<128x128xf32>) -> vector<128x256xf32>
// SINGLE: %[[T:.*]] = "stable_mosaic.arith.truncf"(%{{.*}}) : (vector<128x128xf32>) -> vector<128x128xbf16>
// SINGLE-NEXT: %[[JB:.*]] = "stable_mosaic.arith.truncf"(%[[J]]) : (vector<128x256xf32>) -> vector<128x256xbf16>
// SINGLE-NEXT: "stable_mosaic.tpu.matmul"(%[[T]], %[[JB]], %{{.*}}) {{.*}} : (vector<128x128xbf16>, vector<128x256xbf16>, vector<128x256xf32>) -> vector<128x256xf32>
// RUN: flywheel compile --target v6e %t.gdn1.mlir 2>/dev/null | FileCheck %s --check-prefix=COMPILE
// RUN: flywheel compile --target v5e %t.gdn.mlir 2>/dev/null | FileCheck %s --check-prefix=COMPILE
// RUN: flywheel compile --target v6e %t.gdn3.mlir 2>/dev/null | FileCheck %s --check-prefix=COMPILE
// RUN: flywheel compile --target tpu7x %t.gdn3.mlir 2>/dev/null | FileCheck %s --check-prefix=COMPILE
// RUN: flywheel compile --target v5e %t.gdn3.mlir 2>/dev/null | FileCheck %s --check-prefix=COMPILE
// The passes apart (one head per step) and the refined inverse (its one-pass products
// and Newton step) compile too.
// RUN: sed 's/{transpose_rhs = false}/{precision = "bf16x3", transpose_rhs = false}/' %S/../transforms/Inputs/gdn-one-head-fp32.tile.mlir | flywheel-opt --pass-pipeline='builtin.module(flywheel-tri-inverse,flywheel-lower-to-mosaic)' -o %t.gdn-apart.mlir
// RUN: flywheel compile --target v6e %t.gdn-apart.mlir 2>/dev/null | FileCheck %s --check-prefix=COMPILE
// RUN: flywheel-opt %S/../transforms/Inputs/gdn-bf16.tile.mlir --pass-pipeline='builtin.module(flywheel-pipeline,flywheel-tri-inverse{refine-from=1},flywheel-lower-to-mosaic)' -o %t.gdn-refined.mlir
// RUN: flywheel compile --target v6e %t.gdn-refined.mlir 2>/dev/null | FileCheck %s --check-prefix=COMPILE
// RUN: flywheel compile --target v5e %t.gdn-refined.mlir 2>/dev/null | FileCheck %s --check-prefix=COMPILE
// Token-major windows at head dim 64: the second value head's tiles at lane 64 of the
// step's v and output windows.
// RUN: sed 's/x128xbf16/x64xbf16/g; s/x128x128xf32/x64x64xf32/g' %S/../Inputs/gdn-kernel-bf16.mlir | flywheel-opt --pass-pipeline='builtin.module(flywheel-layout,flywheel-tile{gdn-token-major=all},flywheel-tri-inverse,flywheel-lower-to-mosaic)' -o %t.gdn64.mlir
// RUN: flywheel compile --target v6e %t.gdn64.mlir 2>/dev/null | FileCheck %s --check-prefix=COMPILE
// One such head a step (64 lanes, not the array's 128) keeps head-major windows, so it compiles.
// RUN: sed 's/x128xbf16/x64xbf16/g; s/x128x128xf32/x64x64xf32/g' %S/../Inputs/gdn-kernel-bf16.mlir | flywheel-opt --pass-pipeline='builtin.module(flywheel-layout,flywheel-tile{gdn-heads=1 gdn-token-major=all},flywheel-tri-inverse,flywheel-lower-to-mosaic)' -o %t.gdn64-narrow.mlir
// RUN: flywheel compile --target v6e %t.gdn64-narrow.mlir 2>/dev/null | FileCheck %s --check-prefix=COMPILE
