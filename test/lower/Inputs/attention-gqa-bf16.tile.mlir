// Tile IR of the GQA fixture (attention_gqa_bf16: 8 query heads, 2 key heads, 128 tokens, bf16) raised: blocks of 128 x 128, query group 4. Made by: flywheel-opt test/fixtures/attention_gqa_bf16.mlir --pass-pipeline='builtin.module(flywheel-raise-attention,flywheel-tile)' | mlir-opt-22 --allow-unregistered-dialect
module @jit_einsum_attention attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<2x128x8x64xbf16>, %arg1: tensor<2x128x2x64xbf16>, %arg2: tensor<2x128x2x64xbf16>) -> (tensor<2x128x8x64xbf16> {jax.result_info = "result"}) {
    %0 = "stablehlo.reshape"(%arg0) : (tensor<2x128x8x64xbf16>) -> tensor<2x128x2x4x64xbf16>
    %1 = "stablehlo.transpose"(%0) <{permutation = array<i64: 0, 2, 1, 3, 4>}> : (tensor<2x128x2x4x64xbf16>) -> tensor<2x2x128x4x64xbf16>
    %2 = "stablehlo.reshape"(%1) : (tensor<2x2x128x4x64xbf16>) -> tensor<2x2x512x64xbf16>
    %3 = "stablehlo.transpose"(%arg1) <{permutation = array<i64: 0, 2, 1, 3>}> : (tensor<2x128x2x64xbf16>) -> tensor<2x2x128x64xbf16>
    %4 = "stablehlo.transpose"(%arg2) <{permutation = array<i64: 0, 2, 1, 3>}> : (tensor<2x128x2x64xbf16>) -> tensor<2x2x128x64xbf16>
    %5 = "flywheel.attention_kernel"(%2, %3, %4) {bytes_accessed = 655360 : i64, flops = 67108864 : i64, kernel = @flywheel_kernel_0, operandSegmentSizes = array<i32: 1, 1, 1, 0, 0>, transcendentals = 264192 : i64} : (tensor<2x2x512x64xbf16>, tensor<2x2x128x64xbf16>, tensor<2x2x128x64xbf16>) -> tensor<2x2x512x64xbf16>
    %6 = "stablehlo.reshape"(%5) : (tensor<2x2x512x64xbf16>) -> tensor<2x2x128x4x64xbf16>
    %7 = "stablehlo.transpose"(%6) <{permutation = array<i64: 0, 2, 1, 3, 4>}> : (tensor<2x2x128x4x64xbf16>) -> tensor<2x128x2x4x64xbf16>
    %8 = "stablehlo.reshape"(%7) : (tensor<2x128x2x4x64xbf16>) -> tensor<2x128x8x64xbf16>
    return %8 : tensor<2x128x8x64xbf16>
  }
  module @flywheel_kernel_0 attributes {stable_mosaic.version = 15 : i64} {
    func.func @kernel(%arg0: i32, %arg1: i32, %arg2: i32, %arg3: i32, %arg4: memref<1x1x512x64xbf16>, %arg5: memref<1x1x128x64xbf16>, %arg6: memref<1x1x128x64xbf16>, %arg7: memref<1x1x512x64xbf16>, %arg8: memref<512x128xf32>, %arg9: memref<512x128xf32>, %arg10: memref<512x64xf32>) attributes {dimension_semantics = [#tpu.dimension_semantics<parallel>, #tpu.dimension_semantics<parallel>, #tpu.dimension_semantics<parallel>, #tpu.dimension_semantics<arbitrary>], iteration_bounds = array<i64: 2, 2, 1, 1>, scalar_prefetch = 0 : i64, scratch_operands = 3 : i64, tpu.core_type = #tpu.core_type<tc>, window_params = [{transform_indices = @q_blocks, window_bounds = array<i64: 1, 1, 512, 64>}, {transform_indices = @kv_blocks, window_bounds = array<i64: 1, 1, 128, 64>}, {transform_indices = @kv_blocks, window_bounds = array<i64: 1, 1, 128, 64>}, {transform_indices = @q_blocks, window_bounds = array<i64: 1, 1, 512, 64>}]} {
      %c0 = arith.constant 0 : index
      %c0_i32 = arith.constant 0 : i32
      %0 = arith.cmpi eq, %arg3, %c0_i32 : i32
      scf.if %0 {
        %cst_13 = arith.constant dense<0xFF800000> : vector<512x128xf32>
        "tpu.vector_store"(%cst_13, %arg8, %c0, %c0) {add = false, operandSegmentSizes = array<i32: 1, 1, 2, 0>, strides = array<i32>} : (vector<512x128xf32>, memref<512x128xf32>, index, index) -> ()
        %cst_14 = arith.constant dense<0.000000e+00> : vector<512x128xf32>
        "tpu.vector_store"(%cst_14, %arg9, %c0, %c0) {add = false, operandSegmentSizes = array<i32: 1, 1, 2, 0>, strides = array<i32>} : (vector<512x128xf32>, memref<512x128xf32>, index, index) -> ()
        %cst_15 = arith.constant dense<0.000000e+00> : vector<512x64xf32>
        "tpu.vector_store"(%cst_15, %arg10, %c0, %c0) {add = false, operandSegmentSizes = array<i32: 1, 1, 2, 0>, strides = array<i32>} : (vector<512x64xf32>, memref<512x64xf32>, index, index) -> ()
      }
      %1 = vector.load %arg4[%c0, %c0, %c0, %c0] : memref<1x1x512x64xbf16>, vector<1x1x512x64xbf16>
      %2 = vector.shape_cast %1 : vector<1x1x512x64xbf16> to vector<512x64xbf16>
      %3 = vector.load %arg8[%c0, %c0] : memref<512x128xf32>, vector<512x128xf32>
      %4 = vector.load %arg9[%c0, %c0] : memref<512x128xf32>, vector<512x128xf32>
      %5 = vector.load %arg10[%c0, %c0] : memref<512x64xf32>, vector<512x64xf32>
      %c0_0 = arith.constant 0 : index
      %c0_1 = arith.constant 0 : index
      %c0_2 = arith.constant 0 : index
      %c0_3 = arith.constant 0 : index
      %6 = vector.load %arg5[%c0_0, %c0_1, %c0_2, %c0_3] : memref<1x1x128x64xbf16>, vector<1x1x128x64xbf16>
      %7 = vector.shape_cast %6 : vector<1x1x128x64xbf16> to vector<128x64xbf16>
      %cst = arith.constant dense<0.000000e+00> : vector<512x128xf32>
      %8 = "flywheel.matmul"(%2, %7, %cst) {transpose_rhs = true} : (vector<512x64xbf16>, vector<128x64xbf16>, vector<512x128xf32>) -> vector<512x128xf32>
      %cst_4 = arith.constant dense<1.250000e-01> : vector<512x128xf32>
      %9 = arith.mulf %8, %cst_4 : vector<512x128xf32>
      %cst_5 = arith.constant dense<0xFF800000> : vector<512xf32>
      %10 = vector.multi_reduction <maximumf>, %9, %cst_5 [1] : vector<512x128xf32> to vector<512xf32>
      %11 = vector.shape_cast %10 : vector<512xf32> to vector<512x1xf32>
      %12 = vector.broadcast %11 : vector<512x1xf32> to vector<512x128xf32>
      %13 = arith.maximumf %3, %12 : vector<512x128xf32>
      %14 = arith.subf %9, %13 : vector<512x128xf32>
      %15 = math.exp %14 : vector<512x128xf32>
      %16 = arith.subf %3, %13 : vector<512x128xf32>
      %17 = math.exp %16 : vector<512x128xf32>
      %18 = arith.mulf %17, %4 : vector<512x128xf32>
      %cst_6 = arith.constant dense<0.000000e+00> : vector<512xf32>
      %19 = vector.multi_reduction <add>, %15, %cst_6 [1] : vector<512x128xf32> to vector<512xf32>
      %20 = vector.shape_cast %19 : vector<512xf32> to vector<512x1xf32>
      %21 = vector.broadcast %20 : vector<512x1xf32> to vector<512x128xf32>
      %22 = arith.addf %18, %21 : vector<512x128xf32>
      %23 = vector.extract_strided_slice %17 {offsets = [0, 0], sizes = [512, 64], strides = [1, 1]} : vector<512x128xf32> to vector<512x64xf32>
      %24 = arith.mulf %23, %5 : vector<512x64xf32>
      %25 = arith.truncf %15 : vector<512x128xf32> to vector<512x128xbf16>
      %c0_7 = arith.constant 0 : index
      %c0_8 = arith.constant 0 : index
      %c0_9 = arith.constant 0 : index
      %c0_10 = arith.constant 0 : index
      %26 = vector.load %arg6[%c0_7, %c0_8, %c0_9, %c0_10] : memref<1x1x128x64xbf16>, vector<1x1x128x64xbf16>
      %27 = vector.shape_cast %26 : vector<1x1x128x64xbf16> to vector<128x64xbf16>
      %cst_11 = arith.constant dense<0.000000e+00> : vector<512x64xf32>
      %28 = "flywheel.matmul"(%25, %27, %cst_11) {transpose_rhs = false} : (vector<512x128xbf16>, vector<128x64xbf16>, vector<512x64xf32>) -> vector<512x64xf32>
      %29 = arith.addf %24, %28 : vector<512x64xf32>
      "tpu.vector_store"(%22, %arg9, %c0, %c0) {add = false, operandSegmentSizes = array<i32: 1, 1, 2, 0>, strides = array<i32>} : (vector<512x128xf32>, memref<512x128xf32>, index, index) -> ()
      "tpu.vector_store"(%29, %arg10, %c0, %c0) {add = false, operandSegmentSizes = array<i32: 1, 1, 2, 0>, strides = array<i32>} : (vector<512x64xf32>, memref<512x64xf32>, index, index) -> ()
      "tpu.vector_store"(%13, %arg8, %c0, %c0) {add = false, operandSegmentSizes = array<i32: 1, 1, 2, 0>, strides = array<i32>} : (vector<512x128xf32>, memref<512x128xf32>, index, index) -> ()
      %c0_i32_12 = arith.constant 0 : i32
      %30 = arith.cmpi eq, %arg3, %c0_i32_12 : i32
      scf.if %30 {
        %31 = vector.load %arg10[%c0, %c0] : memref<512x64xf32>, vector<512x64xf32>
        %32 = vector.load %arg9[%c0, %c0] : memref<512x128xf32>, vector<512x128xf32>
        %33 = vector.extract_strided_slice %32 {offsets = [0, 0], sizes = [512, 64], strides = [1, 1]} : vector<512x128xf32> to vector<512x64xf32>
        %34 = arith.divf %31, %33 : vector<512x64xf32>
        %35 = arith.truncf %34 : vector<512x64xf32> to vector<512x64xbf16>
        %36 = vector.shape_cast %35 : vector<512x64xbf16> to vector<1x1x512x64xbf16>
        "tpu.vector_store"(%36, %arg7, %c0, %c0, %c0, %c0) {add = false, operandSegmentSizes = array<i32: 1, 1, 4, 0>, strides = array<i32>} : (vector<1x1x512x64xbf16>, memref<1x1x512x64xbf16>, index, index, index, index) -> ()
      }
      return
    }
    func.func @q_blocks(%arg0: i32, %arg1: i32, %arg2: i32, %arg3: i32) -> (i32, i32, i32, i32) {
      %c0_i32 = arith.constant 0 : i32
      return %arg0, %arg1, %arg2, %c0_i32 : i32, i32, i32, i32
    }
    func.func @kv_blocks(%arg0: i32, %arg1: i32, %arg2: i32, %arg3: i32) -> (i32, i32, i32, i32) {
      %c0_i32 = arith.constant 0 : i32
      %c128_i32 = arith.constant 128 : i32
      %c128_i32_0 = arith.constant 128 : i32
      %0 = arith.addi %arg3, %c0_i32 : i32
      return %arg0, %arg1, %0, %c0_i32 : i32, i32, i32, i32
    }
  }
}

