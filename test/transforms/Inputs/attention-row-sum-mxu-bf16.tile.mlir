// Tile IR of MHA in BNTH, bf16, 256 tokens, the row sum on the MXU: one block of 256 x 256. Made by: flywheel-opt test/Inputs/attention-bnth-bf16.mlir --pass-pipeline='builtin.module(flywheel-layout{row-sum=mxu},flywheel-tile)' | mlir-opt-22 --allow-unregistered-dialect
module {
  func.func @main(%arg0: tensor<1x2x256x128xbf16>, %arg1: tensor<1x2x256x128xbf16>, %arg2: tensor<1x2x256x128xbf16>) -> tensor<1x2x256x128xbf16> {
    %0 = "stablehlo.constant"() <{value = dense<1.000000e+00> : tensor<bf16>}> : () -> tensor<bf16>
    %1 = "stablehlo.pad"(%arg2, %0) <{edge_padding_high = array<i64: 0, 0, 0, 128>, edge_padding_low = array<i64: 0, 0, 0, 0>, interior_padding = array<i64: 0, 0, 0, 0>}> : (tensor<1x2x256x128xbf16>, tensor<bf16>) -> tensor<1x2x256x256xbf16>
    %2 = "flywheel.attention_kernel"(%arg0, %arg1, %1) {bytes_accessed = 524288 : i64, flops = 67108864 : i64, kernel = @flywheel_kernel_0, operandSegmentSizes = array<i32: 1, 1, 1, 0, 0>, transcendentals = 131584 : i64} : (tensor<1x2x256x128xbf16>, tensor<1x2x256x128xbf16>, tensor<1x2x256x256xbf16>) -> tensor<1x2x256x128xbf16>
    return %2 : tensor<1x2x256x128xbf16>
  }
  module @flywheel_kernel_0 attributes {stable_mosaic.version = 15 : i64} {
    func.func @kernel(%arg0: i32, %arg1: i32, %arg2: i32, %arg3: i32, %arg4: memref<1x1x256x128xbf16>, %arg5: memref<1x1x256x128xbf16>, %arg6: memref<1x1x256x256xbf16>, %arg7: memref<1x1x256x128xbf16>, %arg8: memref<256x128xf32>, %arg9: memref<256x256xf32>) attributes {dimension_semantics = [#tpu.dimension_semantics<parallel>, #tpu.dimension_semantics<parallel>, #tpu.dimension_semantics<parallel>, #tpu.dimension_semantics<arbitrary>], iteration_bounds = array<i64: 1, 2, 1, 1>, scalar_prefetch = 0 : i64, scratch_operands = 2 : i64, tpu.core_type = #tpu.core_type<tc>, window_params = [{transform_indices = @q_blocks, window_bounds = array<i64: 1, 1, 256, 128>}, {transform_indices = @kv_blocks, window_bounds = array<i64: 1, 1, 256, 128>}, {transform_indices = @kv_blocks, window_bounds = array<i64: 1, 1, 256, 256>}, {transform_indices = @q_blocks, window_bounds = array<i64: 1, 1, 256, 128>}]} {
      %c0 = arith.constant 0 : index
      %c0_i32 = arith.constant 0 : i32
      %0 = arith.cmpi eq, %arg3, %c0_i32 : i32
      scf.if %0 {
        %cst_12 = arith.constant dense<0xFF800000> : vector<256x128xf32>
        "tpu.vector_store"(%cst_12, %arg8, %c0, %c0) {add = false, operandSegmentSizes = array<i32: 1, 1, 2, 0>, strides = array<i32>} : (vector<256x128xf32>, memref<256x128xf32>, index, index) -> ()
        %cst_13 = arith.constant dense<0.000000e+00> : vector<256x128xf32>
        %cst_14 = arith.constant dense<0.000000e+00> : vector<256x256xf32>
        "tpu.vector_store"(%cst_14, %arg9, %c0, %c0) {add = false, operandSegmentSizes = array<i32: 1, 1, 2, 0>, strides = array<i32>} : (vector<256x256xf32>, memref<256x256xf32>, index, index) -> ()
      }
      %1 = vector.load %arg4[%c0, %c0, %c0, %c0] : memref<1x1x256x128xbf16>, vector<1x1x256x128xbf16>
      %2 = vector.shape_cast %1 : vector<1x1x256x128xbf16> to vector<256x128xbf16>
      %3 = vector.load %arg8[%c0, %c0] : memref<256x128xf32>, vector<256x128xf32>
      %4 = vector.load %arg9[%c0, %c0] : memref<256x256xf32>, vector<256x256xf32>
      %c0_0 = arith.constant 0 : index
      %c0_1 = arith.constant 0 : index
      %c0_2 = arith.constant 0 : index
      %c0_3 = arith.constant 0 : index
      %5 = vector.load %arg5[%c0_0, %c0_1, %c0_2, %c0_3] : memref<1x1x256x128xbf16>, vector<1x1x256x128xbf16>
      %6 = vector.shape_cast %5 : vector<1x1x256x128xbf16> to vector<256x128xbf16>
      %cst = arith.constant dense<0.000000e+00> : vector<256x256xf32>
      %7 = "flywheel.matmul"(%2, %6, %cst) {transpose_rhs = true} : (vector<256x128xbf16>, vector<256x128xbf16>, vector<256x256xf32>) -> vector<256x256xf32>
      %cst_4 = arith.constant dense<1.250000e-01> : vector<256x256xf32>
      %8 = arith.mulf %7, %cst_4 : vector<256x256xf32>
      %cst_5 = arith.constant dense<0xFF800000> : vector<256xf32>
      %9 = vector.multi_reduction <maximumf>, %8, %cst_5 [1] : vector<256x256xf32> to vector<256xf32>
      %10 = vector.shape_cast %9 : vector<256xf32> to vector<256x1xf32>
      %11 = vector.broadcast %10 : vector<256x1xf32> to vector<256x128xf32>
      %12 = arith.maximumf %3, %11 : vector<256x128xf32>
      %13 = "tpu.concatenate"(%12, %12) {dimension = 1 : i32} : (vector<256x128xf32>, vector<256x128xf32>) -> vector<256x256xf32>
      %14 = arith.subf %8, %13 : vector<256x256xf32>
      %15 = math.exp %14 : vector<256x256xf32>
      %16 = arith.subf %3, %12 : vector<256x128xf32>
      %17 = math.exp %16 : vector<256x128xf32>
      %18 = "tpu.concatenate"(%17, %17) {dimension = 1 : i32} : (vector<256x128xf32>, vector<256x128xf32>) -> vector<256x256xf32>
      %19 = arith.mulf %18, %4 : vector<256x256xf32>
      %20 = arith.truncf %15 : vector<256x256xf32> to vector<256x256xbf16>
      %c0_6 = arith.constant 0 : index
      %c0_7 = arith.constant 0 : index
      %c0_8 = arith.constant 0 : index
      %c0_9 = arith.constant 0 : index
      %21 = vector.load %arg6[%c0_6, %c0_7, %c0_8, %c0_9] : memref<1x1x256x256xbf16>, vector<1x1x256x256xbf16>
      %22 = vector.shape_cast %21 : vector<1x1x256x256xbf16> to vector<256x256xbf16>
      %cst_10 = arith.constant dense<0.000000e+00> : vector<256x256xf32>
      %23 = "flywheel.matmul"(%20, %22, %cst_10) {transpose_rhs = false} : (vector<256x256xbf16>, vector<256x256xbf16>, vector<256x256xf32>) -> vector<256x256xf32>
      %24 = arith.addf %19, %23 : vector<256x256xf32>
      "tpu.vector_store"(%24, %arg9, %c0, %c0) {add = false, operandSegmentSizes = array<i32: 1, 1, 2, 0>, strides = array<i32>} : (vector<256x256xf32>, memref<256x256xf32>, index, index) -> ()
      "tpu.vector_store"(%12, %arg8, %c0, %c0) {add = false, operandSegmentSizes = array<i32: 1, 1, 2, 0>, strides = array<i32>} : (vector<256x128xf32>, memref<256x128xf32>, index, index) -> ()
      %c0_i32_11 = arith.constant 0 : i32
      %25 = arith.cmpi eq, %arg3, %c0_i32_11 : i32
      scf.if %25 {
        %26 = vector.load %arg9[%c0, %c0] : memref<256x256xf32>, vector<256x256xf32>
        %27 = vector.extract_strided_slice %26 {offsets = [0, 0], sizes = [256, 128], strides = [1, 1]} : vector<256x256xf32> to vector<256x128xf32>
        %28 = vector.extract_strided_slice %26 {offsets = [0, 128], sizes = [256, 128], strides = [1, 1]} : vector<256x256xf32> to vector<256x128xf32>
        %29 = arith.divf %27, %28 : vector<256x128xf32>
        %30 = arith.truncf %29 : vector<256x128xf32> to vector<256x128xbf16>
        %31 = vector.shape_cast %30 : vector<256x128xbf16> to vector<1x1x256x128xbf16>
        "tpu.vector_store"(%31, %arg7, %c0, %c0, %c0, %c0) {add = false, operandSegmentSizes = array<i32: 1, 1, 4, 0>, strides = array<i32>} : (vector<1x1x256x128xbf16>, memref<1x1x256x128xbf16>, index, index, index, index) -> ()
      }
      return
    }
    func.func @q_blocks(%arg0: i32, %arg1: i32, %arg2: i32, %arg3: i32) -> (i32, i32, i32, i32) {
      %c0_i32 = arith.constant 0 : i32
      return %arg0, %arg1, %arg2, %c0_i32 : i32, i32, i32, i32
    }
    func.func @kv_blocks(%arg0: i32, %arg1: i32, %arg2: i32, %arg3: i32) -> (i32, i32, i32, i32) {
      %c0_i32 = arith.constant 0 : i32
      %c256_i32 = arith.constant 256 : i32
      %c256_i32_0 = arith.constant 256 : i32
      %0 = arith.addi %arg3, %c0_i32 : i32
      return %arg0, %arg1, %0, %c0_i32 : i32, i32, i32, i32
    }
  }
}

