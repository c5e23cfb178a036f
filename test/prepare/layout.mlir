// flywheel-layout: records each attention kernel's operand layouts as attributes that
// flywheel-tile honours: the orientation (standard S = Q·Kᵀ, or transposed Sᵀ = K·Qᵀ with
// Oᵀ = Vᵀ·Pᵀ) and where each row of P is summed (in the PV matmul as P·[V | 1], or on
// the VPU); and each Gated DeltaNet kernel's source of Kᵀ for its state update.

// By default (v6e, Dv = 128: the ones columns fill the empty half of the 256-wide MXU):
// standard orientation, row sum on the MXU.
// RUN: flywheel-opt %S/../Inputs/attention-bnth-causal-bf16.mlir --flywheel-layout=remarks=true -o %t.default.mlir 2>&1 | FileCheck %s --check-prefix=REMARK
// REMARK: attention-bnth-causal-bf16.mlir:3:8: remark: layouts: standard orientation, row sum on the MXU
// RUN: FileCheck %s --check-prefix=ATTRIBUTES < %t.default.mlir
// ATTRIBUTES: "flywheel.attention"({{.*}}flywheel.orientation = "standard", flywheel.row_sum = "mxu"

// Tiled: V gets 128 columns of ones (an XLA pad outside the kernel), the accumulator is
// [rows, Dv + 128], no per-step row sum, and the last step reads l from the
// accumulator's last lane tile.
// RUN: flywheel-opt %t.default.mlir --flywheel-tile=remarks=true -o %t.mxu.mlir 2>&1 | FileCheck %s --check-prefix=TILE-REMARK
// TILE-REMARK: remark: tiled into a Mosaic kernel (grid 1x2x1x1, query group 1, blocks 256x256, standard orientation, row sum on the MXU, 1 key sub-block(s))
// RUN: FileCheck %s --check-prefix=MXU < %t.mxu.mlir
// RUN: FileCheck %s --check-prefix=NO-ROW-SUM < %t.mxu.mlir
// NO-ROW-SUM-NOT: #vector.kind<add>
// MXU: %[[ONE:.*]] = "stablehlo.constant"() <{value = dense<1.000000e+00> : tensor<bf16>}>
// MXU: "stablehlo.pad"(%{{.*}}, %[[ONE]]) <{edge_padding_high = array<i64: 0, 0, 0, 128>, {{.*}}}> : (tensor<1x2x256x128xbf16>, tensor<bf16>) -> tensor<1x2x256x256xbf16>
// MXU: "flywheel.attention_kernel"
// MXU: "vector.multi_reduction"({{.*}}) <{kind = #vector.kind<maximumf>, reduction_dims = array<i64: 1>}>
// MXU: "flywheel.matmul"({{.*}}) {transpose_rhs = false} : (vector<256x256xbf16>, vector<256x256xbf16>, vector<256x256xf32>) -> vector<256x256xf32>
// MXU: "vector.extract_strided_slice"(%{{.*}}) <{offsets = [0, 0], sizes = [256, 128], strides = [1, 1]}> : (vector<256x256xf32>) -> vector<256x128xf32>
// MXU: "vector.extract_strided_slice"(%{{.*}}) <{offsets = [0, 128], sizes = [256, 128], strides = [1, 1]}> : (vector<256x256xf32>) -> vector<256x128xf32>
// MXU: "arith.divf"

// The transposed orientation: Sᵀ = K·Qᵀ ([keys, queries]), the softmax reduces over
// dimension 0 into [1, rows] statistics, Oᵀ = Vᵀ·Pᵀ with V transposed outside the
// kernel, O transposed once at the last step. It sums on the VPU.
// RUN: flywheel-opt %S/../Inputs/attention-bnth-causal-bf16.mlir --pass-pipeline='builtin.module(flywheel-layout{orientation=transposed remarks=true},flywheel-tile)' -o %t.transposed.mlir 2>&1 | FileCheck %s --check-prefix=TRANSPOSED-REMARK
// TRANSPOSED-REMARK: remark: layouts: transposed orientation, row sum on the VPU (the transposed kernel sums across sublanes)
// RUN: FileCheck %s --check-prefix=TRANSPOSED < %t.transposed.mlir
// TRANSPOSED: "stablehlo.transpose"(%{{.*}}) <{permutation = array<i64: 0, 2, 1>}> : (tensor<2x256x128xbf16>) -> tensor<2x128x256xbf16>
// TRANSPOSED: "flywheel.matmul"({{.*}}) {transpose_rhs = true} : (vector<256x128xbf16>, vector<256x128xbf16>, vector<256x256xf32>) -> vector<256x256xf32>
// TRANSPOSED: "tpu.iota"() {dimensions = array<i32: 1>}
// TRANSPOSED: "vector.multi_reduction"({{.*}}) <{kind = #vector.kind<maximumf>, reduction_dims = array<i64: 0>}>
// TRANSPOSED: "vector.broadcast"({{.*}}) : (vector<1x256xf32>) -> vector<256x256xf32>
// TRANSPOSED: "vector.multi_reduction"({{.*}}) <{kind = #vector.kind<add>, reduction_dims = array<i64: 0>}>
// TRANSPOSED: "flywheel.matmul"({{.*}}) {transpose_rhs = false} : (vector<128x256xbf16>, vector<256x256xbf16>, vector<128x256xf32>) -> vector<128x256xf32>
// TRANSPOSED: "vector.transpose"({{.*}}) <{permutation = array<i64: 1, 0>}> : (vector<128x256xf32>) -> vector<256x128xf32>
// Vᵀ's window is [Dv, keys], its key block index last.
// TRANSPOSED: window_bounds = array<i64: 1, 1, 128, 256>
// TRANSPOSED: "func.func"() <{function_type = (i32, i32, i32, i32) -> (i32, i32, i32, i32), sym_name = "v_t_blocks"}>

// Both compile for every target.
// RUN: flywheel-opt %t.mxu.mlir --flywheel-lower-to-mosaic -o %t.mxu.lowered.mlir
// RUN: flywheel-opt %t.transposed.mlir --flywheel-lower-to-mosaic -o %t.transposed.lowered.mlir
// RUN: flywheel compile --target v5e %t.mxu.lowered.mlir 2>/dev/null | FileCheck %s --check-prefix=COMPILE
// RUN: flywheel compile --target tpu7x %t.mxu.lowered.mlir 2>/dev/null | FileCheck %s --check-prefix=COMPILE
// RUN: flywheel compile --target v6e %t.transposed.lowered.mlir 2>/dev/null | FileCheck %s --check-prefix=COMPILE
// COMPILE: compiled {{.*}} for

// Near misses. A mask or bias operand keeps the standard orientation (its tiles arrive
// query-major). (This fixture's head dim, 64, also keeps the row sum on the VPU.)
// RUN: flywheel-opt %S/../fixtures/attention_dpa_mask_bf16.mlir --pass-pipeline='builtin.module(flywheel-raise-attention,flywheel-layout{orientation=transposed remarks=true})' 2>&1 >/dev/null | FileCheck %s --check-prefix=MASK
// MASK: remark: layouts: standard orientation, row sum on the VPU (a mask or bias operand keeps the standard orientation; value head dim 64 is not whole lane tiles)
// What that decides: the masked attention still gets its kernel when transposed is asked
// (the transposed kernel takes no mask, so choosing it would leave XLA the attention).
// RUN: flywheel-opt %S/../fixtures/attention_dpa_mask_bf16.mlir --pass-pipeline='builtin.module(flywheel-raise-attention,flywheel-layout{orientation=transposed},flywheel-tile,flywheel-lower-to-mosaic,flywheel-lower-to-stablehlo)' -o %t.mask-kernel.mlir
// RUN: grep -c '"tpu_custom_call"' %t.mask-kernel.mlir | FileCheck %s --check-prefix=MASK-KERNEL
// MASK-KERNEL: {{^1$}}
// A value head dim of 64 is not a whole lane tile: the sum stays on the VPU.
// RUN: sed 's/x128xbf16/x64xbf16/g' %S/../Inputs/attention-bnth-causal-bf16.mlir | flywheel-opt --flywheel-layout=remarks=true 2>&1 >/dev/null | FileCheck %s --check-prefix=D64
// D64: remark: layouts: standard orientation, row sum on the VPU (value head dim 64 is not whole lane tiles)
// The auto row sum keeps the VPU where the ones columns would cost an MXU pass: Dv = 256
// on v6e, v5e's 128-wide MXU; and on tpu7x, where libtpu's cycles favour the VPU.
// RUN: sed 's/x128xbf16/x256xbf16/g' %S/../Inputs/attention-bnth-causal-bf16.mlir | flywheel-opt --flywheel-layout=remarks=true 2>&1 >/dev/null | FileCheck %s --check-prefix=D256
// D256: remark: layouts: standard orientation, row sum on the VPU (auto row sum: value head dim 256 fills the 256-wide MXU, ones columns would be an extra pass)
// RUN: flywheel-opt %S/../Inputs/attention-bnth-causal-bf16.mlir --flywheel-layout='target=v5e remarks=true' 2>&1 >/dev/null | FileCheck %s --check-prefix=OTHER-TARGET
// RUN: flywheel-opt %S/../Inputs/attention-bnth-causal-bf16.mlir --flywheel-layout='target=tpu7x remarks=true' 2>&1 >/dev/null | FileCheck %s --check-prefix=OTHER-TARGET
// OTHER-TARGET: remark: layouts: standard orientation, row sum on the VPU (auto row sum: the MXU sum pays off on v6e only)
// Asked for explicitly, the MXU sum is granted there too.
// RUN: sed 's/x128xbf16/x256xbf16/g' %S/../Inputs/attention-bnth-causal-bf16.mlir | flywheel-opt --flywheel-layout='row-sum=mxu target=tpu7x remarks=true' 2>&1 >/dev/null | FileCheck %s --check-prefix=FORCED
// FORCED: remark: layouts: standard orientation, row sum on the MXU{{$}}
// Key blocks narrower than a lane tile: flywheel-tile sums on the VPU despite the request.
// RUN: flywheel-opt %t.default.mlir --flywheel-tile='causal-block-kv=64 remarks=true' 2>&1 >/dev/null | FileCheck %s --check-prefix=NARROW
// NARROW: remark: tiled into a Mosaic kernel (grid 1x2x1x4, query group 1, blocks 256x64, standard orientation, row sum on the VPU, 1 key sub-block(s))

// orientation=auto (flywheel-tpu's): transposed where, with the lagged max, libtpu's
// cycles favour it — v6e and tpu7x, no window, head dim 128 or 256, causal at 128 ...
// RUN: flywheel-opt %S/../Inputs/attention-bnth-bf16.mlir --flywheel-layout='orientation=auto remarks=true' 2>&1 | FileCheck %s --check-prefix=AUTO
// RUN: flywheel-opt %S/../Inputs/attention-bnth-bf16.mlir --flywheel-layout='orientation=auto target=tpu7x remarks=true' 2>&1 | FileCheck %s --check-prefix=AUTO
// RUN: flywheel-opt %S/../Inputs/attention-bnth-causal-bf16.mlir --flywheel-layout='orientation=auto target=v6e remarks=true' 2>&1 | FileCheck %s --check-prefix=AUTO
// RUN: flywheel-opt %S/../Inputs/attention-bnth-causal-bf16.mlir --flywheel-layout='orientation=auto target=tpu7x remarks=true' 2>&1 | FileCheck %s --check-prefix=AUTO
// RUN: sed 's/x128xbf16/x256xbf16/g' %S/../Inputs/attention-bnth-bf16.mlir | flywheel-opt --flywheel-layout='orientation=auto target=tpu7x remarks=true' 2>&1 | FileCheck %s --check-prefix=AUTO
// AUTO: remark: layouts: transposed orientation, row sum on the VPU (the transposed kernel sums across sublanes)
// AUTO: "flywheel.attention"({{.*}}flywheel.orientation = "transposed", flywheel.row_sum = "vpu"
// ... and near misses, kept standard: causality at head dim 256, a window, head dim 64,
// v5e, a mask.
// RUN: sed 's/kv_heads = 2}/kv_heads = 2, window = array<i64: 100, 0>}/' %S/../Inputs/attention-bnth-causal-bf16.mlir | flywheel-opt --flywheel-layout='orientation=auto remarks=true' 2>&1 >/dev/null | FileCheck %s --check-prefix=AUTO-WINDOW
// AUTO-WINDOW: remark: layouts: standard orientation, row sum on the MXU (auto orientation: a window keeps the standard orientation)
// RUN: sed 's/x128xbf16/x256xbf16/g' %S/../Inputs/attention-bnth-causal-bf16.mlir | flywheel-opt --flywheel-layout='orientation=auto remarks=true' 2>&1 >/dev/null | FileCheck %s --check-prefix=AUTO-D256
// AUTO-D256: remark: layouts: standard orientation, row sum on the VPU (auto orientation: causality keeps the standard orientation at head dim 256; auto row sum: value head dim 256 fills the 256-wide MXU, ones columns would be an extra pass)
// RUN: sed 's/x128xbf16/x64xbf16/g' %S/../Inputs/attention-bnth-bf16.mlir | flywheel-opt --flywheel-layout='orientation=auto target=tpu7x remarks=true' 2>&1 >/dev/null | FileCheck %s --check-prefix=AUTO-D64
// AUTO-D64: remark: layouts: standard orientation, row sum on the VPU (auto orientation: transposed at head dims 128 and 256 only, not 64/64; value head dim 64 is not whole lane tiles)
// RUN: flywheel-opt %S/../Inputs/attention-bnth-bf16.mlir --flywheel-layout='orientation=auto target=v5e remarks=true' 2>&1 >/dev/null | FileCheck %s --check-prefix=AUTO-V5E
// AUTO-V5E: remark: layouts: standard orientation, row sum on the VPU (auto orientation: transposed on v6e and tpu7x only; auto row sum: the MXU sum pays off on v6e only)
// RUN: flywheel-opt %S/../fixtures/attention_dpa_mask_bf16.mlir --pass-pipeline='builtin.module(flywheel-raise-attention,flywheel-layout{orientation=auto remarks=true})' 2>&1 >/dev/null | FileCheck %s --check-prefix=AUTO-MASK
// AUTO-MASK: remark: layouts: standard orientation, row sum on the VPU (a mask or bias operand keeps the standard orientation; value head dim 64 is not whole lane tiles)

// Diagnostics: a layout attribute flywheel-tile does not understand, or a transposed
// orientation with a mask, keeps the op for the reference lowering, with a remark.
// RUN: sed 's/kv_heads = 2}/kv_heads = 2, flywheel.orientation = "diagonal"}/' %S/../Inputs/attention-bnth-causal-bf16.mlir | flywheel-opt --flywheel-tile=remarks=true 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// UNKNOWN: remark: kept for the reference lowering: flywheel.orientation is "diagonal", not "standard" or "transposed"
// UNKNOWN: "flywheel.attention"
// RUN: flywheel-opt %S/../fixtures/attention_dpa_mask_bf16.mlir --flywheel-raise-attention | sed 's/causal = false,/causal = false, flywheel.orientation = "transposed",/' | flywheel-opt --flywheel-tile=remarks=true 2>&1 | FileCheck %s --check-prefix=TRANSPOSED-MASK
// TRANSPOSED-MASK: remark: kept for the reference lowering: the transposed orientation takes no mask or bias operand
// An option value the pass does not know is an error.
// RUN: not flywheel-opt %S/../Inputs/attention-bnth-causal-bf16.mlir --flywheel-layout=orientation=diagonal 2>&1 | FileCheck %s --check-prefix=OPTION
// OPTION: invalid value 'diagonal' for option 'orientation' (standard|transposed|auto)

// Gated DeltaNet: flywheel-layout records whether products that share an operand are
// one product (by default they are: T [βV | βe^γK] and, per head, [W; e^γ Q] S; the
// flywheel-tile tests check the kernel) and where the state update Kᵀ·V' gets Kᵀ. By
// default each chunk's K tile is transposed in the kernel ([64, 128] to [128, 64] here):
// libtpu's static cycles favour it over reading a transposed copy.
// RUN: flywheel-opt %S/../Inputs/gdn-kernel-bf16.mlir --flywheel-layout=remarks=true -o %t.gdn.mlir 2>&1 | FileCheck %s --check-prefix=GDN-REMARK
// GDN-REMARK: gdn-kernel-bf16.mlir:4:12: remark: layouts: shared operands, state update keys transpose per chunk
// RUN: FileCheck %s --check-prefix=GDN-ATTRIBUTES < %t.gdn.mlir
// GDN-ATTRIBUTES: "flywheel.gated_delta"({{.*}}flywheel.operand_sharing = "shared", flywheel.state_keys = "transpose_per_chunk"
// RUN: flywheel-opt %t.gdn.mlir --flywheel-tile | FileCheck %s --check-prefix=GDN-PER-CHUNK
// GDN-PER-CHUNK: "flywheel.gated_delta_kernel"({{.*}}operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 0, 0>
// GDN-PER-CHUNK: "vector.transpose"(%{{.*}}) <{permutation = array<i64: 1, 0>}> : (vector<64x128xf32>) -> vector<128x64xf32>

// With gdn-state-keys=transposed-copy, K also reaches the kernel transposed once by XLA,
// [B, Nk, Dk, T'], and each step slices its chunks' Kᵀ from one [Dk, chunks x C] tile:
// no transpose of K in the kernel.
// RUN: flywheel-opt %S/../Inputs/gdn-kernel-bf16.mlir --pass-pipeline='builtin.module(flywheel-layout{gdn-state-keys=transposed-copy},flywheel-tile)' -o %t.gdn-copy.mlir
// RUN: FileCheck %s --check-prefix=GDN-COPY < %t.gdn-copy.mlir
// RUN: FileCheck %s --check-prefix=GDN-NO-TRANSPOSE < %t.gdn-copy.mlir
// GDN-COPY: %[[KT:.*]] = "stablehlo.transpose"(%{{.*}}) <{permutation = array<i64: 2, 0, 1>}> : (tensor<2x64x128xbf16>) -> tensor<128x2x64xbf16>
// GDN-COPY: %[[KT_BLOCKS:.*]] = "stablehlo.reshape"(%[[KT]]) {{.*}} -> tensor<1x1x128x128xbf16>
// GDN-COPY: "flywheel.gated_delta_kernel"({{.*}}, %[[KT_BLOCKS]]) {{{.*}}operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 0, 1>
// GDN-COPY: "vector.extract_strided_slice"(%{{.*}}) <{offsets = [0, 64], sizes = [128, 64], strides = [1, 1]}> : (vector<128x128xf32>) -> vector<128x64xf32>
// GDN-COPY: {transform_indices = @key_chunks_transposed, window_bounds = array<i64: 1, 1, 128, 128>}
// GDN-COPY: sym_name = "key_chunks_transposed"
// GDN-NO-TRANSPOSE-NOT: (vector<64x128xf32>) -> vector<128x64xf32>
// It compiles with libtpu.
// RUN: flywheel-opt %t.gdn-copy.mlir --flywheel-lower-to-mosaic -o %t.gdn-copy.lowered.mlir
// RUN: flywheel compile --target v6e %t.gdn-copy.lowered.mlir 2>/dev/null | FileCheck %s --check-prefix=COMPILE

// With gdn-shared-operands=false the products stay apart.
// RUN: flywheel-opt %S/../Inputs/gdn-kernel-bf16.mlir --pass-pipeline='builtin.module(flywheel-layout{gdn-shared-operands=false remarks=true},flywheel-tile)' 2>&1 | FileCheck %s --check-prefix=GDN-SEPARATE
// GDN-SEPARATE: remark: layouts: separate operands, state update keys transpose per chunk
// GDN-SEPARATE-NOT: -> vector<128x256xf32>

// Near misses: each op kind gets only its own layout attributes.
// RUN: FileCheck %s --check-prefix=GDN-ONLY < %t.gdn.mlir
// GDN-ONLY-NOT: flywheel.orientation
// GDN-ONLY-NOT: flywheel.row_sum
// RUN: FileCheck %s --check-prefix=ATTENTION-ONLY < %t.default.mlir
// ATTENTION-ONLY-NOT: flywheel.state_keys
// ATTENTION-ONLY-NOT: flywheel.operand_sharing

// Diagnostics: a state_keys value flywheel-tile does not know keeps the op for the
// reference lowering, with a remark; an unknown option value is an error.
// RUN: sed 's/layout = "BTNH"}/layout = "BTNH", flywheel.state_keys = "sideways"}/' %S/../Inputs/gdn-kernel-bf16.mlir | flywheel-opt --flywheel-tile=remarks=true 2>&1 | FileCheck %s --check-prefix=GDN-UNKNOWN
// GDN-UNKNOWN: remark: kept for the reference lowering: flywheel.state_keys is "sideways", not "transpose_per_chunk" or "transposed_copy"
// GDN-UNKNOWN: "flywheel.gated_delta"
// RUN: sed 's/layout = "BTNH"}/layout = "BTNH", flywheel.operand_sharing = "some"}/' %S/../Inputs/gdn-kernel-bf16.mlir | flywheel-opt --flywheel-tile=remarks=true 2>&1 | FileCheck %s --check-prefix=GDN-UNKNOWN-SHARING
// GDN-UNKNOWN-SHARING: remark: kept for the reference lowering: flywheel.operand_sharing is "some", not "separate" or "shared"
// RUN: not flywheel-opt %S/../Inputs/gdn-kernel-bf16.mlir --flywheel-layout=gdn-state-keys=sideways 2>&1 | FileCheck %s --check-prefix=GDN-OPTION
// GDN-OPTION: invalid value 'sideways' for option 'gdn-state-keys' (transposed-copy|transpose-per-chunk)
