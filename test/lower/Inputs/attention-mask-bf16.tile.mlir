// Tile IR of the mask fixture (attention_dpa_mask_bf16: MHA, 128 tokens, bf16, a boolean mask) raised: blocks of 128 x 128. Made by: flywheel-opt test/fixtures/attention_dpa_mask_bf16.mlir --pass-pipeline='builtin.module(flywheel-raise-attention,flywheel-tile)' | mlir-opt-22 --allow-unregistered-dialect
module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<2x128x4x64xbf16>, %arg1: tensor<2x128x4x64xbf16>, %arg2: tensor<2x128x4x64xbf16>, %arg3: tensor<2x1x128x128xi1>) -> (tensor<2x128x4x64xbf16> {jax.result_info = "result"}) {
    %0 = "stablehlo.transpose"(%arg0) <{permutation = array<i64: 0, 2, 1, 3>}> : (tensor<2x128x4x64xbf16>) -> tensor<2x4x128x64xbf16>
    %1 = "stablehlo.transpose"(%arg1) <{permutation = array<i64: 0, 2, 1, 3>}> : (tensor<2x128x4x64xbf16>) -> tensor<2x4x128x64xbf16>
    %2 = "stablehlo.transpose"(%arg2) <{permutation = array<i64: 0, 2, 1, 3>}> : (tensor<2x128x4x64xbf16>) -> tensor<2x4x128x64xbf16>
    %3 = "stablehlo.convert"(%arg3) : (tensor<2x1x128x128xi1>) -> tensor<2x1x128x128xi32>
    %4 = "flywheel.attention_kernel"(%0, %1, %2, %3) {bytes_accessed = 655360 : i64, flops = 33554432 : i64, kernel = @flywheel_kernel_0, operandSegmentSizes = array<i32: 1, 1, 1, 1, 0>, transcendentals = 132096 : i64} : (tensor<2x4x128x64xbf16>, tensor<2x4x128x64xbf16>, tensor<2x4x128x64xbf16>, tensor<2x1x128x128xi32>) -> tensor<2x4x128x64xbf16>
    %5 = "stablehlo.transpose"(%4) <{permutation = array<i64: 0, 2, 1, 3>}> : (tensor<2x4x128x64xbf16>) -> tensor<2x128x4x64xbf16>
    return %5 : tensor<2x128x4x64xbf16>
  }
  module @flywheel_kernel_0 attributes {stable_mosaic.version = 15 : i64} {
    func.func @kernel(%arg0: i32, %arg1: i32, %arg2: i32, %arg3: i32, %arg4: memref<1x1x128x64xbf16>, %arg5: memref<1x1x128x64xbf16>, %arg6: memref<1x1x128x64xbf16>, %arg7: memref<1x1x128x128xi32>, %arg8: memref<1x1x128x64xbf16>, %arg9: memref<128x128xf32>, %arg10: memref<128x128xf32>, %arg11: memref<128x64xf32>) attributes {dimension_semantics = [#tpu.dimension_semantics<parallel>, #tpu.dimension_semantics<parallel>, #tpu.dimension_semantics<parallel>, #tpu.dimension_semantics<arbitrary>], iteration_bounds = array<i64: 2, 4, 1, 1>, scalar_prefetch = 0 : i64, scratch_operands = 3 : i64, tpu.core_type = #tpu.core_type<tc>, window_params = [{transform_indices = @q_blocks, window_bounds = array<i64: 1, 1, 128, 64>}, {transform_indices = @kv_blocks, window_bounds = array<i64: 1, 1, 128, 64>}, {transform_indices = @kv_blocks, window_bounds = array<i64: 1, 1, 128, 64>}, {transform_indices = @mask_blocks, window_bounds = array<i64: 1, 1, 128, 128>}, {transform_indices = @q_blocks, window_bounds = array<i64: 1, 1, 128, 64>}]} {
      %c0 = arith.constant 0 : index
      %c0_i32 = arith.constant 0 : i32
      %0 = arith.cmpi eq, %arg3, %c0_i32 : i32
      scf.if %0 {
        %cst_19 = arith.constant dense<0xFF800000> : vector<128x128xf32>
        "tpu.vector_store"(%cst_19, %arg9, %c0, %c0) {add = false, operandSegmentSizes = array<i32: 1, 1, 2, 0>, strides = array<i32>} : (vector<128x128xf32>, memref<128x128xf32>, index, index) -> ()
        %cst_20 = arith.constant dense<0.000000e+00> : vector<128x128xf32>
        "tpu.vector_store"(%cst_20, %arg10, %c0, %c0) {add = false, operandSegmentSizes = array<i32: 1, 1, 2, 0>, strides = array<i32>} : (vector<128x128xf32>, memref<128x128xf32>, index, index) -> ()
        %cst_21 = arith.constant dense<0.000000e+00> : vector<128x64xf32>
        "tpu.vector_store"(%cst_21, %arg11, %c0, %c0) {add = false, operandSegmentSizes = array<i32: 1, 1, 2, 0>, strides = array<i32>} : (vector<128x64xf32>, memref<128x64xf32>, index, index) -> ()
      }
      %1 = vector.load %arg4[%c0, %c0, %c0, %c0] : memref<1x1x128x64xbf16>, vector<1x1x128x64xbf16>
      %2 = vector.shape_cast %1 : vector<1x1x128x64xbf16> to vector<128x64xbf16>
      %3 = vector.load %arg9[%c0, %c0] : memref<128x128xf32>, vector<128x128xf32>
      %4 = vector.load %arg10[%c0, %c0] : memref<128x128xf32>, vector<128x128xf32>
      %5 = vector.load %arg11[%c0, %c0] : memref<128x64xf32>, vector<128x64xf32>
      %c0_0 = arith.constant 0 : index
      %c0_1 = arith.constant 0 : index
      %c0_2 = arith.constant 0 : index
      %c0_3 = arith.constant 0 : index
      %6 = vector.load %arg5[%c0_0, %c0_1, %c0_2, %c0_3] : memref<1x1x128x64xbf16>, vector<1x1x128x64xbf16>
      %7 = vector.shape_cast %6 : vector<1x1x128x64xbf16> to vector<128x64xbf16>
      %cst = arith.constant dense<0.000000e+00> : vector<128x128xf32>
      %8 = "flywheel.matmul"(%2, %7, %cst) {transpose_rhs = true} : (vector<128x64xbf16>, vector<128x64xbf16>, vector<128x128xf32>) -> vector<128x128xf32>
      %cst_4 = arith.constant dense<1.250000e-01> : vector<128x128xf32>
      %9 = arith.mulf %8, %cst_4 : vector<128x128xf32>
      %c0_5 = arith.constant 0 : index
      %c0_6 = arith.constant 0 : index
      %c0_7 = arith.constant 0 : index
      %c0_8 = arith.constant 0 : index
      %10 = vector.load %arg7[%c0_5, %c0_6, %c0_7, %c0_8] : memref<1x1x128x128xi32>, vector<1x1x128x128xi32>
      %11 = vector.shape_cast %10 : vector<1x1x128x128xi32> to vector<128x128xi32>
      %cst_9 = arith.constant dense<0> : vector<128x128xi32>
      %12 = arith.cmpi ne, %11, %cst_9 : vector<128x128xi32>
      %cst_10 = arith.constant dense<-2.38197633E+38> : vector<128x128xf32>
      %13 = arith.select %12, %9, %cst_10 : vector<128x128xi1>, vector<128x128xf32>
      %cst_11 = arith.constant dense<0xFF800000> : vector<128xf32>
      %14 = vector.multi_reduction <maximumf>, %13, %cst_11 [1] : vector<128x128xf32> to vector<128xf32>
      %15 = vector.shape_cast %14 : vector<128xf32> to vector<128x1xf32>
      %16 = vector.broadcast %15 : vector<128x1xf32> to vector<128x128xf32>
      %17 = arith.maximumf %3, %16 : vector<128x128xf32>
      %18 = arith.subf %13, %17 : vector<128x128xf32>
      %19 = math.exp %18 : vector<128x128xf32>
      %20 = arith.subf %3, %17 : vector<128x128xf32>
      %21 = math.exp %20 : vector<128x128xf32>
      %22 = arith.mulf %21, %4 : vector<128x128xf32>
      %cst_12 = arith.constant dense<0.000000e+00> : vector<128xf32>
      %23 = vector.multi_reduction <add>, %19, %cst_12 [1] : vector<128x128xf32> to vector<128xf32>
      %24 = vector.shape_cast %23 : vector<128xf32> to vector<128x1xf32>
      %25 = vector.broadcast %24 : vector<128x1xf32> to vector<128x128xf32>
      %26 = arith.addf %22, %25 : vector<128x128xf32>
      %27 = vector.extract_strided_slice %21 {offsets = [0, 0], sizes = [128, 64], strides = [1, 1]} : vector<128x128xf32> to vector<128x64xf32>
      %28 = arith.mulf %27, %5 : vector<128x64xf32>
      %29 = arith.truncf %19 : vector<128x128xf32> to vector<128x128xbf16>
      %c0_13 = arith.constant 0 : index
      %c0_14 = arith.constant 0 : index
      %c0_15 = arith.constant 0 : index
      %c0_16 = arith.constant 0 : index
      %30 = vector.load %arg6[%c0_13, %c0_14, %c0_15, %c0_16] : memref<1x1x128x64xbf16>, vector<1x1x128x64xbf16>
      %31 = vector.shape_cast %30 : vector<1x1x128x64xbf16> to vector<128x64xbf16>
      %cst_17 = arith.constant dense<0.000000e+00> : vector<128x64xf32>
      %32 = "flywheel.matmul"(%29, %31, %cst_17) {transpose_rhs = false} : (vector<128x128xbf16>, vector<128x64xbf16>, vector<128x64xf32>) -> vector<128x64xf32>
      %33 = arith.addf %28, %32 : vector<128x64xf32>
      "tpu.vector_store"(%26, %arg10, %c0, %c0) {add = false, operandSegmentSizes = array<i32: 1, 1, 2, 0>, strides = array<i32>} : (vector<128x128xf32>, memref<128x128xf32>, index, index) -> ()
      "tpu.vector_store"(%33, %arg11, %c0, %c0) {add = false, operandSegmentSizes = array<i32: 1, 1, 2, 0>, strides = array<i32>} : (vector<128x64xf32>, memref<128x64xf32>, index, index) -> ()
      "tpu.vector_store"(%17, %arg9, %c0, %c0) {add = false, operandSegmentSizes = array<i32: 1, 1, 2, 0>, strides = array<i32>} : (vector<128x128xf32>, memref<128x128xf32>, index, index) -> ()
      %c0_i32_18 = arith.constant 0 : i32
      %34 = arith.cmpi eq, %arg3, %c0_i32_18 : i32
      scf.if %34 {
        %35 = vector.load %arg11[%c0, %c0] : memref<128x64xf32>, vector<128x64xf32>
        %36 = vector.load %arg10[%c0, %c0] : memref<128x128xf32>, vector<128x128xf32>
        %37 = vector.extract_strided_slice %36 {offsets = [0, 0], sizes = [128, 64], strides = [1, 1]} : vector<128x128xf32> to vector<128x64xf32>
        %38 = arith.divf %35, %37 : vector<128x64xf32>
        %39 = arith.truncf %38 : vector<128x64xf32> to vector<128x64xbf16>
        %40 = vector.shape_cast %39 : vector<128x64xbf16> to vector<1x1x128x64xbf16>
        "tpu.vector_store"(%40, %arg8, %c0, %c0, %c0, %c0) {add = false, operandSegmentSizes = array<i32: 1, 1, 4, 0>, strides = array<i32>} : (vector<1x1x128x64xbf16>, memref<1x1x128x64xbf16>, index, index, index, index) -> ()
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
    func.func @mask_blocks(%arg0: i32, %arg1: i32, %arg2: i32, %arg3: i32) -> (i32, i32, i32, i32) {
      %c0_i32 = arith.constant 0 : i32
      %c128_i32 = arith.constant 128 : i32
      %c128_i32_0 = arith.constant 128 : i32
      %0 = arith.addi %arg3, %c0_i32 : i32
      return %arg0, %c0_i32, %arg2, %0 : i32, i32, i32, i32
    }
  }
}

