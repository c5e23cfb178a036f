// Tile IR of MHA in BNTH, f32, 256 tokens: one block of 256 x 256. Made by: sed 's/bf16/f32/g' test/Inputs/attention-bnth-bf16.mlir | flywheel-opt --pass-pipeline='builtin.module(flywheel-tile)' | mlir-opt-22 --allow-unregistered-dialect
module {
  func.func @main(%arg0: tensor<1x2x256x128xf32>, %arg1: tensor<1x2x256x128xf32>, %arg2: tensor<1x2x256x128xf32>) -> tensor<1x2x256x128xf32> {
    %0 = "flywheel.attention_kernel"(%arg0, %arg1, %arg2) {bytes_accessed = 1048576 : i64, flops = 67108864 : i64, kernel = @flywheel_kernel_0, operandSegmentSizes = array<i32: 1, 1, 1, 0, 0>, transcendentals = 131584 : i64} : (tensor<1x2x256x128xf32>, tensor<1x2x256x128xf32>, tensor<1x2x256x128xf32>) -> tensor<1x2x256x128xf32>
    return %0 : tensor<1x2x256x128xf32>
  }
  module @flywheel_kernel_0 attributes {stable_mosaic.version = 15 : i64} {
    func.func @kernel(%arg0: i32, %arg1: i32, %arg2: i32, %arg3: i32, %arg4: memref<1x1x256x128xf32>, %arg5: memref<1x1x256x128xf32>, %arg6: memref<1x1x256x128xf32>, %arg7: memref<1x1x256x128xf32>, %arg8: memref<256x128xf32>, %arg9: memref<256x128xf32>, %arg10: memref<256x128xf32>) attributes {dimension_semantics = [#tpu.dimension_semantics<parallel>, #tpu.dimension_semantics<parallel>, #tpu.dimension_semantics<parallel>, #tpu.dimension_semantics<arbitrary>], iteration_bounds = array<i64: 1, 2, 1, 1>, scalar_prefetch = 0 : i64, scratch_operands = 3 : i64, tpu.core_type = #tpu.core_type<tc>, window_params = [{transform_indices = @q_blocks, window_bounds = array<i64: 1, 1, 256, 128>}, {transform_indices = @kv_blocks, window_bounds = array<i64: 1, 1, 256, 128>}, {transform_indices = @kv_blocks, window_bounds = array<i64: 1, 1, 256, 128>}, {transform_indices = @q_blocks, window_bounds = array<i64: 1, 1, 256, 128>}]} {
      %c0 = arith.constant 0 : index
      %c0_i32 = arith.constant 0 : i32
      %0 = arith.cmpi eq, %arg3, %c0_i32 : i32
      scf.if %0 {
        %cst_13 = arith.constant dense<0xFF800000> : vector<256x128xf32>
        "tpu.vector_store"(%cst_13, %arg8, %c0, %c0) {add = false, operandSegmentSizes = array<i32: 1, 1, 2, 0>, strides = array<i32>} : (vector<256x128xf32>, memref<256x128xf32>, index, index) -> ()
        %cst_14 = arith.constant dense<0.000000e+00> : vector<256x128xf32>
        "tpu.vector_store"(%cst_14, %arg9, %c0, %c0) {add = false, operandSegmentSizes = array<i32: 1, 1, 2, 0>, strides = array<i32>} : (vector<256x128xf32>, memref<256x128xf32>, index, index) -> ()
        %cst_15 = arith.constant dense<0.000000e+00> : vector<256x128xf32>
        "tpu.vector_store"(%cst_15, %arg10, %c0, %c0) {add = false, operandSegmentSizes = array<i32: 1, 1, 2, 0>, strides = array<i32>} : (vector<256x128xf32>, memref<256x128xf32>, index, index) -> ()
      }
      %1 = vector.load %arg4[%c0, %c0, %c0, %c0] : memref<1x1x256x128xf32>, vector<1x1x256x128xf32>
      %2 = vector.shape_cast %1 : vector<1x1x256x128xf32> to vector<256x128xf32>
      %3 = vector.load %arg8[%c0, %c0] : memref<256x128xf32>, vector<256x128xf32>
      %4 = vector.load %arg9[%c0, %c0] : memref<256x128xf32>, vector<256x128xf32>
      %5 = vector.load %arg10[%c0, %c0] : memref<256x128xf32>, vector<256x128xf32>
      %c0_0 = arith.constant 0 : index
      %c0_1 = arith.constant 0 : index
      %c0_2 = arith.constant 0 : index
      %c0_3 = arith.constant 0 : index
      %6 = vector.load %arg5[%c0_0, %c0_1, %c0_2, %c0_3] : memref<1x1x256x128xf32>, vector<1x1x256x128xf32>
      %7 = vector.shape_cast %6 : vector<1x1x256x128xf32> to vector<256x128xf32>
      %cst = arith.constant dense<0.000000e+00> : vector<256x256xf32>
      %8 = "flywheel.matmul"(%2, %7, %cst) {transpose_rhs = true} : (vector<256x128xf32>, vector<256x128xf32>, vector<256x256xf32>) -> vector<256x256xf32>
      %cst_4 = arith.constant dense<1.250000e-01> : vector<256x256xf32>
      %9 = arith.mulf %8, %cst_4 : vector<256x256xf32>
      %cst_5 = arith.constant dense<0xFF800000> : vector<256xf32>
      %10 = vector.multi_reduction <maximumf>, %9, %cst_5 [1] : vector<256x256xf32> to vector<256xf32>
      %11 = vector.shape_cast %10 : vector<256xf32> to vector<256x1xf32>
      %12 = vector.broadcast %11 : vector<256x1xf32> to vector<256x128xf32>
      %13 = arith.maximumf %3, %12 : vector<256x128xf32>
      %14 = "tpu.concatenate"(%13, %13) {dimension = 1 : i32} : (vector<256x128xf32>, vector<256x128xf32>) -> vector<256x256xf32>
      %15 = arith.subf %9, %14 : vector<256x256xf32>
      %16 = math.exp %15 : vector<256x256xf32>
      %17 = arith.subf %3, %13 : vector<256x128xf32>
      %18 = math.exp %17 : vector<256x128xf32>
      %19 = arith.mulf %18, %4 : vector<256x128xf32>
      %cst_6 = arith.constant dense<0.000000e+00> : vector<256xf32>
      %20 = vector.multi_reduction <add>, %16, %cst_6 [1] : vector<256x256xf32> to vector<256xf32>
      %21 = vector.shape_cast %20 : vector<256xf32> to vector<256x1xf32>
      %22 = vector.broadcast %21 : vector<256x1xf32> to vector<256x128xf32>
      %23 = arith.addf %19, %22 : vector<256x128xf32>
      %24 = arith.mulf %18, %5 : vector<256x128xf32>
      %c0_7 = arith.constant 0 : index
      %c0_8 = arith.constant 0 : index
      %c0_9 = arith.constant 0 : index
      %c0_10 = arith.constant 0 : index
      %25 = vector.load %arg6[%c0_7, %c0_8, %c0_9, %c0_10] : memref<1x1x256x128xf32>, vector<1x1x256x128xf32>
      %26 = vector.shape_cast %25 : vector<1x1x256x128xf32> to vector<256x128xf32>
      %cst_11 = arith.constant dense<0.000000e+00> : vector<256x128xf32>
      %27 = "flywheel.matmul"(%16, %26, %cst_11) {transpose_rhs = false} : (vector<256x256xf32>, vector<256x128xf32>, vector<256x128xf32>) -> vector<256x128xf32>
      %28 = arith.addf %24, %27 : vector<256x128xf32>
      "tpu.vector_store"(%23, %arg9, %c0, %c0) {add = false, operandSegmentSizes = array<i32: 1, 1, 2, 0>, strides = array<i32>} : (vector<256x128xf32>, memref<256x128xf32>, index, index) -> ()
      "tpu.vector_store"(%28, %arg10, %c0, %c0) {add = false, operandSegmentSizes = array<i32: 1, 1, 2, 0>, strides = array<i32>} : (vector<256x128xf32>, memref<256x128xf32>, index, index) -> ()
      "tpu.vector_store"(%13, %arg8, %c0, %c0) {add = false, operandSegmentSizes = array<i32: 1, 1, 2, 0>, strides = array<i32>} : (vector<256x128xf32>, memref<256x128xf32>, index, index) -> ()
      %c0_i32_12 = arith.constant 0 : i32
      %29 = arith.cmpi eq, %arg3, %c0_i32_12 : i32
      scf.if %29 {
        %30 = vector.load %arg10[%c0, %c0] : memref<256x128xf32>, vector<256x128xf32>
        %31 = vector.load %arg9[%c0, %c0] : memref<256x128xf32>, vector<256x128xf32>
        %32 = arith.divf %30, %31 : vector<256x128xf32>
        %33 = vector.shape_cast %32 : vector<256x128xf32> to vector<1x1x256x128xf32>
        "tpu.vector_store"(%33, %arg7, %c0, %c0, %c0, %c0) {add = false, operandSegmentSizes = array<i32: 1, 1, 4, 0>, strides = array<i32>} : (vector<1x1x256x128xf32>, memref<1x1x256x128xf32>, index, index, index, index) -> ()
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

