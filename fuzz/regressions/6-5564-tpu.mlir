// Tile IR of MHA in BNTH, bf16, 1024 tokens, transposed orientation: blocks of 256 x 256, each in two key sub-blocks. Made by: sed 's/x256x/x1024x/g' test/Inputs/attention-bnth-bf16.mlir | flywheel-opt --pass-pipeline='builtin.module(flywheel-layout{orientation=transposed},flywheel-tile{block-q=256 block-kv=256 key-splits=2})' | mlir-opt-22 --allow-unregistered-dialect
module {
  func.func @main(%arg0: tensor<1x2x1024x128xbf16>, %arg1: tensor<1x2x1024x128xbf16>, %arg2: tensor<1x2x1024x128xbf16>) -> tensor<1x2x1024x128xbf16> {
    %0 = "stablehlo.reshape"(%arg2) : (tensor<1x2x1024x128xbf16>) -> tensor<2x1024x128xbf16>
    %1 = "stablehlo.transpose"(%0) <{permutation = array<i64: 0, 2, 1>}> : (tensor<2x1024x128xbf16>) -> tensor<2x128x1024xbf16>
    %2 = "stablehlo.reshape"(%1) : (tensor<2x128x1024xbf16>) -> tensor<1x2x128x1024xbf16>
    %3 = "flywheel.attention_kernel"(%arg0, %arg1, %2) {bytes_accessed = 2097152 : i64, flops = 1073741824 : i64, kernel = @flywheel_kernel_0, operandSegmentSizes = array<i32: 1, 1, 1, 0, 0>, transcendentals = 2105344 : i64} : (tensor<1x2x1024x128xbf16>, tensor<1x2x1024x128xbf16>, tensor<1x2x128x1024xbf16>) -> tensor<1x2x1024x128xbf16>
    return %3 : tensor<1x2x1024x128xbf16>
  }
  module @flywheel_kernel_0 attributes {stable_mosaic.version = 15 : i64} {
    func.func @kernel(%arg0: i32, %arg1: i32, %arg2: i32, %arg3: i32, %arg4: memref<1x1x256x128xbf16>, %arg5: memref<1x1x256x128xbf16>, %arg6: memref<1x1x128x256xbf16>, %arg7: memref<1x1x256x128xbf16>, %arg8: memref<1x256xf32>, %arg9: memref<1x256xf32>, %arg10: memref<128x256xf32>) attributes {dimension_semantics = [#tpu.dimension_semantics<parallel>, #tpu.dimension_semantics<parallel>, #tpu.dimension_semantics<parallel>, #tpu.dimension_semantics<arbitrary>], iteration_bounds = array<i64: 1, 2, 4, 4>, scalar_prefetch = 0 : i64, scratch_operands = 3 : i64, tpu.core_type = #tpu.core_type<tc>, window_params = [{transform_indices = @q_blocks, window_bounds = array<i64: 1, 1, 256, 128>}, {transform_indices = @kv_blocks, window_bounds = array<i64: 1, 1, 256, 128>}, {transform_indices = @v_t_blocks, window_bounds = array<i64: 1, 1, 128, 256>}, {transform_indices = @q_blocks, window_bounds = array<i64: 1, 1, 256, 128>}]} {
      %c0 = arith.constant 0 : index
      %c0_i32 = arith.constant 0 : i32
      %0 = arith.cmpi eq, %arg3, %c0_i32 : i32
      scf.if %0 {
        %cst_24 = arith.constant dense<0xFF800000> : vector<1x256xf32>
        "tpu.vector_store"(%cst_24, %arg8, %c0, %c0) {add = false, operandSegmentSizes = array<i32: 1, 1, 2, 0>, strides = array<i32>} : (vector<1x256xf32>, memref<1x256xf32>, index, index) -> ()
        %cst_25 = arith.constant dense<0.000000e+00> : vector<1x256xf32>
        "tpu.vector_store"(%cst_25, %arg9, %c0, %c0) {add = false, operandSegmentSizes = array<i32: 1, 1, 2, 0>, strides = array<i32>} : (vector<1x256xf32>, memref<1x256xf32>, index, index) -> ()
        %cst_26 = arith.constant dense<0.000000e+00> : vector<128x256xf32>
        "tpu.vector_store"(%cst_26, %arg10, %c0, %c0) {add = false, operandSegmentSizes = array<i32: 1, 1, 2, 0>, strides = array<i32>} : (vector<128x256xf32>, memref<128x256xf32>, index, index) -> ()
      }
      %1 = vector.load %arg4[%c0, %c0, %c0, %c0] : memref<1x1x256x128xbf16>, vector<1x1x256x128xbf16>
      %2 = vector.shape_cast %1 : vector<1x1x256x128xbf16> to vector<256x128xbf16>
      %3 = vector.load %arg8[%c0, %c0] : memref<1x256xf32>, vector<1x256xf32>
      %4 = vector.load %arg9[%c0, %c0] : memref<1x256xf32>, vector<1x256xf32>
      %5 = vector.load %arg10[%c0, %c0] : memref<128x256xf32>, vector<128x256xf32>
      %c0_0 = arith.constant 0 : index
      %c0_1 = arith.constant 0 : index
      %c0_2 = arith.constant 0 : index
      %c0_3 = arith.constant 0 : index
      %6 = vector.load %arg5[%c0_0, %c0_1, %c0_2, %c0_3] : memref<1x1x256x128xbf16>, vector<1x1x128x128xbf16>
      %7 = vector.shape_cast %6 : vector<1x1x128x128xbf16> to vector<128x128xbf16>
      %cst = arith.constant dense<0.000000e+00> : vector<128x256xf32>
      %8 = "flywheel.matmul"(%7, %2, %cst) {transpose_rhs = true} : (vector<128x128xbf16>, vector<256x128xbf16>, vector<128x256xf32>) -> vector<128x256xf32>
      %cst_4 = arith.constant dense<0x7FC00000> : vector<128x256xf32>
      %9 = arith.mulf %8, %cst_4 : vector<128x256xf32>
      %cst_5 = arith.constant dense<0xFF800000> : vector<256xf32>
      %10 = vector.multi_reduction <maximumf>, %9, %cst_5 [0] : vector<128x256xf32> to vector<256xf32>
      %11 = vector.shape_cast %10 : vector<256xf32> to vector<1x256xf32>
      %12 = arith.maximumf %3, %11 : vector<1x256xf32>
      %13 = vector.broadcast %12 : vector<1x256xf32> to vector<128x256xf32>
      %14 = arith.subf %9, %13 : vector<128x256xf32>
      %15 = math.exp %14 : vector<128x256xf32>
      %16 = arith.subf %3, %12 : vector<1x256xf32>
      %17 = math.exp %16 : vector<1x256xf32>
      %18 = arith.mulf %17, %4 : vector<1x256xf32>
      %cst_6 = arith.constant dense<0.000000e+00> : vector<256xf32>
      %19 = vector.multi_reduction <add>, %15, %cst_6 [0] : vector<128x256xf32> to vector<256xf32>
      %20 = vector.shape_cast %19 : vector<256xf32> to vector<1x256xf32>
      %21 = arith.addf %18, %20 : vector<1x256xf32>
      %22 = vector.broadcast %17 : vector<1x256xf32> to vector<128x256xf32>
      %23 = arith.mulf %22, %5 : vector<128x256xf32>
      %24 = arith.truncf %15 : vector<128x256xf32> to vector<128x256xbf16>
      %c0_7 = arith.constant 0 : index
      %c0_8 = arith.constant 0 : index
      %c0_9 = arith.constant 0 : index
      %c0_10 = arith.constant 0 : index
      %25 = vector.load %arg6[%c0_7, %c0_8, %c0_9, %c0_10] : memref<1x1x128x256xbf16>, vector<1x1x128x128xbf16>
      %26 = vector.shape_cast %25 : vector<1x1x128x128xbf16> to vector<128x128xbf16>
      %cst_11 = arith.constant dense<0.000000e+00> : vector<128x256xf32>
      %27 = "flywheel.matmul"(%26, %24, %cst_11) {transpose_rhs = false} : (vector<128x128xbf16>, vector<128x256xbf16>, vector<128x256xf32>) -> vector<128x256xf32>
      %28 = arith.addf %23, %27 : vector<128x256xf32>
      %c0_12 = arith.constant 0 : index
      %c0_13 = arith.constant 0 : index
      %c128 = arith.constant 128 : index
      %c0_14 = arith.constant 0 : index
      %29 = vector.load %arg5[%c0_12, %c0_13, %c128, %c0_14] : memref<1x1x256x128xbf16>, vector<1x1x128x128xbf16>
      %30 = vector.shape_cast %29 : vector<1x1x128x128xbf16> to vector<128x128xbf16>
      %cst_15 = arith.constant dense<0x7F800000> : vector<128x256xf32>
      %31 = "flywheel.matmul"(%30, %2, %cst_15) {transpose_rhs = true} : (vector<128x128xbf16>, vector<256x128xbf16>, vector<128x256xf32>) -> vector<128x256xf32>
      %cst_16 = arith.constant dense<1.250000e-01> : vector<128x256xf32>
      %32 = arith.mulf %31, %cst_16 : vector<128x256xf32>
      %cst_17 = arith.constant dense<0xFF800000> : vector<256xf32>
      %33 = vector.multi_reduction <maximumf>, %32, %cst_17 [0] : vector<128x256xf32> to vector<256xf32>
      %34 = vector.shape_cast %33 : vector<256xf32> to vector<1x256xf32>
      %35 = arith.maximumf %12, %34 : vector<1x256xf32>
      %36 = vector.broadcast %35 : vector<1x256xf32> to vector<128x256xf32>
      %37 = arith.subf %32, %36 : vector<128x256xf32>
      %38 = math.exp %37 : vector<128x256xf32>
      %39 = arith.subf %12, %35 : vector<1x256xf32>
      %40 = math.exp %39 : vector<1x256xf32>
      %41 = arith.mulf %40, %21 : vector<1x256xf32>
      %cst_18 = arith.constant dense<0.000000e+00> : vector<256xf32>
      %42 = vector.multi_reduction <add>, %38, %cst_18 [0] : vector<128x256xf32> to vector<256xf32>
      %43 = vector.shape_cast %42 : vector<256xf32> to vector<1x256xf32>
      %44 = arith.addf %41, %43 : vector<1x256xf32>
      %45 = vector.broadcast %40 : vector<1x256xf32> to vector<128x256xf32>
      %46 = arith.mulf %45, %28 : vector<128x256xf32>
      %47 = arith.truncf %38 : vector<128x256xf32> to vector<128x256xbf16>
      %c0_19 = arith.constant 0 : index
      %c0_20 = arith.constant 0 : index
      %c0_21 = arith.constant 0 : index
      %c128_22 = arith.constant 128 : index
      %48 = vector.load %arg6[%c0_19, %c0_20, %c0_21, %c128_22] : memref<1x1x128x256xbf16>, vector<1x1x128x128xbf16>
      %49 = vector.shape_cast %48 : vector<1x1x128x128xbf16> to vector<128x128xbf16>
      %cst_23 = arith.constant dense<0.000000e+00> : vector<128x256xf32>
      %50 = "flywheel.matmul"(%49, %47, %cst_23) {transpose_rhs = false} : (vector<128x128xbf16>, vector<128x256xbf16>, vector<128x256xf32>) -> vector<128x256xf32>
      %51 = arith.addf %46, %50 : vector<128x256xf32>
      "tpu.vector_store"(%44, %arg9, %c0, %c0) {add = false, operandSegmentSizes = array<i32: 1, 1, 2, 0>, strides = array<i32>} : (vector<1x256xf32>, memref<1x256xf32>, index, index) -> ()
      "tpu.vector_store"(%51, %arg10, %c0, %c0) {add = false, operandSegmentSizes = array<i32: 1, 1, 2, 0>, strides = array<i32>} : (vector<128x256xf32>, memref<128x256xf32>, index, index) -> ()
      "tpu.vector_store"(%35, %arg8, %c0, %c0) {add = false, operandSegmentSizes = array<i32: 1, 1, 2, 0>, strides = array<i32>} : (vector<1x256xf32>, memref<1x256xf32>, index, index) -> ()
      %c3_i32 = arith.constant 3 : i32
      %52 = arith.cmpi eq, %arg3, %c3_i32 : i32
      scf.if %52 {
        %53 = vector.load %arg10[%c0, %c0] : memref<128x256xf32>, vector<128x256xf32>
        %54 = vector.load %arg9[%c0, %c0] : memref<1x256xf32>, vector<1x256xf32>
        %55 = vector.broadcast %54 : vector<1x256xf32> to vector<128x256xf32>
        %56 = arith.divf %53, %55 : vector<128x256xf32>
        %57 = vector.transpose %56, [1, 0] : vector<128x256xf32> to vector<256x128xf32>
        %58 = arith.truncf %57 : vector<256x128xf32> to vector<256x128xbf16>
        %59 = vector.shape_cast %58 : vector<256x128xbf16> to vector<1x1x256x128xbf16>
        "tpu.vector_store"(%59, %arg7, %c0, %c0, %c0, %c0) {add = false, operandSegmentSizes = array<i32: 1, 1, 4, 0>, strides = array<i32>} : (vector<1x1x256x128xbf16>, memref<1x1x256x128xbf16>, index, index, index, index) -> ()
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
    func.func @v_t_blocks(%arg0: i32, %arg1: i32, %arg2: i32, %arg3: i32) -> (i32, i32, i32, i32) {
      %c0_i32 = arith.constant 0 : i32
      %c256_i32 = arith.constant 256 : i32
      %c256_i32_0 = arith.constant 256 : i32
      %0 = arith.addi %arg3, %c0_i32 : i32
      return %arg0, %arg1, %c0_i32, %0 : i32, i32, i32, i32
    }
  }
}

