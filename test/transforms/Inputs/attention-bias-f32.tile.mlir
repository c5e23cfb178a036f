// Tile IR of the bias fixture (attention_dpa_bias_f32: MHA, 128 tokens, f32) raised: blocks of 128 x 128. Made by: flywheel-opt test/fixtures/attention_dpa_bias_f32.mlir --pass-pipeline='builtin.module(flywheel-raise-attention,flywheel-tile)' | mlir-opt-22 --allow-unregistered-dialect
module @jit_dpa_attention attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<2x128x4x64xf32>, %arg1: tensor<2x128x4x64xf32>, %arg2: tensor<2x128x4x64xf32>, %arg3: tensor<2x4x128x128xf32>) -> (tensor<2x128x4x64xf32> {jax.result_info = "result"}) {
    %0 = "stablehlo.transpose"(%arg0) <{permutation = array<i64: 0, 2, 1, 3>}> : (tensor<2x128x4x64xf32>) -> tensor<2x4x128x64xf32>
    %1 = "stablehlo.transpose"(%arg1) <{permutation = array<i64: 0, 2, 1, 3>}> : (tensor<2x128x4x64xf32>) -> tensor<2x4x128x64xf32>
    %2 = "stablehlo.transpose"(%arg2) <{permutation = array<i64: 0, 2, 1, 3>}> : (tensor<2x128x4x64xf32>) -> tensor<2x4x128x64xf32>
    %3 = "flywheel.attention_kernel"(%0, %1, %2, %arg3) {bytes_accessed = 1572864 : i64, flops = 33554432 : i64, kernel = @flywheel_kernel_0, operandSegmentSizes = array<i32: 1, 1, 1, 0, 1>, transcendentals = 132096 : i64} : (tensor<2x4x128x64xf32>, tensor<2x4x128x64xf32>, tensor<2x4x128x64xf32>, tensor<2x4x128x128xf32>) -> tensor<2x4x128x64xf32>
    %4 = "stablehlo.transpose"(%3) <{permutation = array<i64: 0, 2, 1, 3>}> : (tensor<2x4x128x64xf32>) -> tensor<2x128x4x64xf32>
    return %4 : tensor<2x128x4x64xf32>
  }
  module @flywheel_kernel_0 attributes {stable_mosaic.version = 15 : i64} {
    func.func @kernel(%arg0: i32, %arg1: i32, %arg2: i32, %arg3: i32, %arg4: memref<1x1x128x64xf32>, %arg5: memref<1x1x128x64xf32>, %arg6: memref<1x1x128x64xf32>, %arg7: memref<1x1x128x128xf32>, %arg8: memref<1x1x128x64xf32>, %arg9: memref<128x128xf32>, %arg10: memref<128x128xf32>, %arg11: memref<128x64xf32>) attributes {dimension_semantics = [#tpu.dimension_semantics<parallel>, #tpu.dimension_semantics<parallel>, #tpu.dimension_semantics<parallel>, #tpu.dimension_semantics<arbitrary>], iteration_bounds = array<i64: 2, 4, 1, 1>, scalar_prefetch = 0 : i64, scratch_operands = 3 : i64, tpu.core_type = #tpu.core_type<tc>, window_params = [{transform_indices = @q_blocks, window_bounds = array<i64: 1, 1, 128, 64>}, {transform_indices = @kv_blocks, window_bounds = array<i64: 1, 1, 128, 64>}, {transform_indices = @kv_blocks, window_bounds = array<i64: 1, 1, 128, 64>}, {transform_indices = @bias_blocks, window_bounds = array<i64: 1, 1, 128, 128>}, {transform_indices = @q_blocks, window_bounds = array<i64: 1, 1, 128, 64>}]} {
      %c0 = arith.constant 0 : index
      %c0_i32 = arith.constant 0 : i32
      %0 = arith.cmpi eq, %arg3, %c0_i32 : i32
      scf.if %0 {
        %cst_17 = arith.constant dense<0xFF800000> : vector<128x128xf32>
        "tpu.vector_store"(%cst_17, %arg9, %c0, %c0) {add = false, operandSegmentSizes = array<i32: 1, 1, 2, 0>, strides = array<i32>} : (vector<128x128xf32>, memref<128x128xf32>, index, index) -> ()
        %cst_18 = arith.constant dense<0.000000e+00> : vector<128x128xf32>
        "tpu.vector_store"(%cst_18, %arg10, %c0, %c0) {add = false, operandSegmentSizes = array<i32: 1, 1, 2, 0>, strides = array<i32>} : (vector<128x128xf32>, memref<128x128xf32>, index, index) -> ()
        %cst_19 = arith.constant dense<0.000000e+00> : vector<128x64xf32>
        "tpu.vector_store"(%cst_19, %arg11, %c0, %c0) {add = false, operandSegmentSizes = array<i32: 1, 1, 2, 0>, strides = array<i32>} : (vector<128x64xf32>, memref<128x64xf32>, index, index) -> ()
      }
      %1 = vector.load %arg4[%c0, %c0, %c0, %c0] : memref<1x1x128x64xf32>, vector<1x1x128x64xf32>
      %2 = vector.shape_cast %1 : vector<1x1x128x64xf32> to vector<128x64xf32>
      %3 = vector.load %arg9[%c0, %c0] : memref<128x128xf32>, vector<128x128xf32>
      %4 = vector.load %arg10[%c0, %c0] : memref<128x128xf32>, vector<128x128xf32>
      %5 = vector.load %arg11[%c0, %c0] : memref<128x64xf32>, vector<128x64xf32>
      %c0_0 = arith.constant 0 : index
      %c0_1 = arith.constant 0 : index
      %c0_2 = arith.constant 0 : index
      %c0_3 = arith.constant 0 : index
      %6 = vector.load %arg5[%c0_0, %c0_1, %c0_2, %c0_3] : memref<1x1x128x64xf32>, vector<1x1x128x64xf32>
      %7 = vector.shape_cast %6 : vector<1x1x128x64xf32> to vector<128x64xf32>
      %cst = arith.constant dense<0.000000e+00> : vector<128x128xf32>
      %8 = "flywheel.matmul"(%2, %7, %cst) {transpose_rhs = true} : (vector<128x64xf32>, vector<128x64xf32>, vector<128x128xf32>) -> vector<128x128xf32>
      %cst_4 = arith.constant dense<1.250000e-01> : vector<128x128xf32>
      %9 = arith.mulf %8, %cst_4 : vector<128x128xf32>
      %c0_5 = arith.constant 0 : index
      %c0_6 = arith.constant 0 : index
      %c0_7 = arith.constant 0 : index
      %c0_8 = arith.constant 0 : index
      %10 = vector.load %arg7[%c0_5, %c0_6, %c0_7, %c0_8] : memref<1x1x128x128xf32>, vector<1x1x128x128xf32>
      %11 = vector.shape_cast %10 : vector<1x1x128x128xf32> to vector<128x128xf32>
      %12 = arith.addf %9, %11 : vector<128x128xf32>
      %cst_9 = arith.constant dense<0xFF800000> : vector<128xf32>
      %13 = vector.multi_reduction <maximumf>, %12, %cst_9 [1] : vector<128x128xf32> to vector<128xf32>
      %14 = vector.shape_cast %13 : vector<128xf32> to vector<128x1xf32>
      %15 = vector.broadcast %14 : vector<128x1xf32> to vector<128x128xf32>
      %16 = arith.maximumf %3, %15 : vector<128x128xf32>
      %17 = arith.subf %12, %16 : vector<128x128xf32>
      %18 = math.exp %17 : vector<128x128xf32>
      %19 = arith.subf %3, %16 : vector<128x128xf32>
      %20 = math.exp %19 : vector<128x128xf32>
      %21 = arith.mulf %20, %4 : vector<128x128xf32>
      %cst_10 = arith.constant dense<0.000000e+00> : vector<128xf32>
      %22 = vector.multi_reduction <add>, %18, %cst_10 [1] : vector<128x128xf32> to vector<128xf32>
      %23 = vector.shape_cast %22 : vector<128xf32> to vector<128x1xf32>
      %24 = vector.broadcast %23 : vector<128x1xf32> to vector<128x128xf32>
      %25 = arith.addf %21, %24 : vector<128x128xf32>
      %26 = vector.extract_strided_slice %20 {offsets = [0, 0], sizes = [128, 64], strides = [1, 1]} : vector<128x128xf32> to vector<128x64xf32>
      %27 = arith.mulf %26, %5 : vector<128x64xf32>
      %c0_11 = arith.constant 0 : index
      %c0_12 = arith.constant 0 : index
      %c0_13 = arith.constant 0 : index
      %c0_14 = arith.constant 0 : index
      %28 = vector.load %arg6[%c0_11, %c0_12, %c0_13, %c0_14] : memref<1x1x128x64xf32>, vector<1x1x128x64xf32>
      %29 = vector.shape_cast %28 : vector<1x1x128x64xf32> to vector<128x64xf32>
      %cst_15 = arith.constant dense<0.000000e+00> : vector<128x64xf32>
      %30 = "flywheel.matmul"(%18, %29, %cst_15) {transpose_rhs = false} : (vector<128x128xf32>, vector<128x64xf32>, vector<128x64xf32>) -> vector<128x64xf32>
      %31 = arith.addf %27, %30 : vector<128x64xf32>
      "tpu.vector_store"(%25, %arg10, %c0, %c0) {add = false, operandSegmentSizes = array<i32: 1, 1, 2, 0>, strides = array<i32>} : (vector<128x128xf32>, memref<128x128xf32>, index, index) -> ()
      "tpu.vector_store"(%31, %arg11, %c0, %c0) {add = false, operandSegmentSizes = array<i32: 1, 1, 2, 0>, strides = array<i32>} : (vector<128x64xf32>, memref<128x64xf32>, index, index) -> ()
      "tpu.vector_store"(%16, %arg9, %c0, %c0) {add = false, operandSegmentSizes = array<i32: 1, 1, 2, 0>, strides = array<i32>} : (vector<128x128xf32>, memref<128x128xf32>, index, index) -> ()
      %c0_i32_16 = arith.constant 0 : i32
      %32 = arith.cmpi eq, %arg3, %c0_i32_16 : i32
      scf.if %32 {
        %33 = vector.load %arg11[%c0, %c0] : memref<128x64xf32>, vector<128x64xf32>
        %34 = vector.load %arg10[%c0, %c0] : memref<128x128xf32>, vector<128x128xf32>
        %35 = vector.extract_strided_slice %34 {offsets = [0, 0], sizes = [128, 64], strides = [1, 1]} : vector<128x128xf32> to vector<128x64xf32>
        %36 = arith.divf %33, %35 : vector<128x64xf32>
        %37 = vector.shape_cast %36 : vector<128x64xf32> to vector<1x1x128x64xf32>
        "tpu.vector_store"(%37, %arg8, %c0, %c0, %c0, %c0) {add = false, operandSegmentSizes = array<i32: 1, 1, 4, 0>, strides = array<i32>} : (vector<1x1x128x64xf32>, memref<1x1x128x64xf32>, index, index, index, index) -> ()
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
    func.func @bias_blocks(%arg0: i32, %arg1: i32, %arg2: i32, %arg3: i32) -> (i32, i32, i32, i32) {
      %c0_i32 = arith.constant 0 : i32
      %c128_i32 = arith.constant 128 : i32
      %c128_i32_0 = arith.constant 128 : i32
      %0 = arith.addi %arg3, %c0_i32 : i32
      return %arg0, %arg1, %arg2, %0 : i32, i32, i32, i32
    }
  }
}

