// Tile IR of MHA in BNTH, bf16, 200 tokens: one block of 200 queries x 256 keys, the keys padded. Made by: sed 's/x256x/x200x/g' test/Inputs/attention-bnth-bf16.mlir | flywheel-opt --pass-pipeline='builtin.module(flywheel-tile)' | mlir-opt-22 --allow-unregistered-dialect
module {
  func.func @main(%arg0: tensor<1x2x200x128xbf16>, %arg1: tensor<1x2x200x128xbf16>, %arg2: tensor<1x2x200x128xbf16>) -> tensor<1x2x200x128xbf16> {
    %0 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<bf16>}> : () -> tensor<bf16>
    %1 = "stablehlo.pad"(%arg1, %0) <{edge_padding_high = array<i64: 0, 0, 56, 0>, edge_padding_low = array<i64: 0, 0, 0, 0>, interior_padding = array<i64: 0, 0, 0, 0>}> : (tensor<1x2x200x128xbf16>, tensor<bf16>) -> tensor<1x2x256x128xbf16>
    %2 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<bf16>}> : () -> tensor<bf16>
    %3 = "stablehlo.pad"(%arg2, %2) <{edge_padding_high = array<i64: 0, 0, 56, 0>, edge_padding_low = array<i64: 0, 0, 0, 0>, interior_padding = array<i64: 0, 0, 0, 0>}> : (tensor<1x2x200x128xbf16>, tensor<bf16>) -> tensor<1x2x256x128xbf16>
    %4 = "flywheel.attention_kernel"(%arg0, %1, %3) {bytes_accessed = 466944 : i64, flops = 52428800 : i64, kernel = @flywheel_kernel_0, operandSegmentSizes = array<i32: 1, 1, 1, 0, 0>, transcendentals = 102800 : i64} : (tensor<1x2x200x128xbf16>, tensor<1x2x256x128xbf16>, tensor<1x2x256x128xbf16>) -> tensor<1x2x200x128xbf16>
    return %4 : tensor<1x2x200x128xbf16>
  }
  module @flywheel_kernel_0 attributes {stable_mosaic.version = 15 : i64} {
    func.func @kernel(%arg0: i32, %arg1: i32, %arg2: i32, %arg3: i32, %arg4: memref<1x1x200x128xbf16>, %arg5: memref<1x1x256x128xbf16>, %arg6: memref<1x1x256x128xbf16>, %arg7: memref<1x1x200x128xbf16>, %arg8: memref<200x128xf32>, %arg9: memref<200x128xf32>, %arg10: memref<200x128xf32>) attributes {dimension_semantics = [#tpu.dimension_semantics<parallel>, #tpu.dimension_semantics<parallel>, #tpu.dimension_semantics<parallel>, #tpu.dimension_semantics<arbitrary>], iteration_bounds = array<i64: 1, 2, 1, 1>, scalar_prefetch = 0 : i64, scratch_operands = 3 : i64, tpu.core_type = #tpu.core_type<tc>, window_params = [{transform_indices = @q_blocks, window_bounds = array<i64: 1, 1, 200, 128>}, {transform_indices = @kv_blocks, window_bounds = array<i64: 1, 1, 256, 128>}, {transform_indices = @kv_blocks, window_bounds = array<i64: 1, 1, 256, 128>}, {transform_indices = @q_blocks, window_bounds = array<i64: 1, 1, 200, 128>}]} {
      %c0 = arith.constant 0 : index
      %c0_i32 = arith.constant 0 : i32
      %0 = arith.cmpi eq, %arg3, %c0_i32 : i32
      scf.if %0 {
        %cst = arith.constant dense<0xFF800000> : vector<200x128xf32>
        "tpu.vector_store"(%cst, %arg8, %c0, %c0) {add = false, operandSegmentSizes = array<i32: 1, 1, 2, 0>, strides = array<i32>} : (vector<200x128xf32>, memref<200x128xf32>, index, index) -> ()
        %cst_2 = arith.constant dense<0.000000e+00> : vector<200x128xf32>
        "tpu.vector_store"(%cst_2, %arg9, %c0, %c0) {add = false, operandSegmentSizes = array<i32: 1, 1, 2, 0>, strides = array<i32>} : (vector<200x128xf32>, memref<200x128xf32>, index, index) -> ()
        %cst_3 = arith.constant dense<0.000000e+00> : vector<200x128xf32>
        "tpu.vector_store"(%cst_3, %arg10, %c0, %c0) {add = false, operandSegmentSizes = array<i32: 1, 1, 2, 0>, strides = array<i32>} : (vector<200x128xf32>, memref<200x128xf32>, index, index) -> ()
      }
      %c256_i32 = arith.constant 256 : i32
      %c200_i32 = arith.constant 200 : i32
      %1 = arith.muli %arg3, %c256_i32 : i32
      %c255_i32 = arith.constant 255 : i32
      %2 = arith.addi %1, %c255_i32 : i32
      %3 = arith.muli %arg2, %c200_i32 : i32
      %c199_i32 = arith.constant 199 : i32
      %4 = arith.addi %3, %c199_i32 : i32
      %c199_i32_0 = arith.constant 199 : i32
      %5 = arith.cmpi sgt, %2, %c199_i32_0 : i32
      scf.if %5 {
        %8 = vector.load %arg4[%c0, %c0, %c0, %c0] : memref<1x1x200x128xbf16>, vector<1x1x200x128xbf16>
        %9 = vector.shape_cast %8 : vector<1x1x200x128xbf16> to vector<200x128xbf16>
        %10 = vector.load %arg8[%c0, %c0] : memref<200x128xf32>, vector<200x128xf32>
        %11 = vector.load %arg9[%c0, %c0] : memref<200x128xf32>, vector<200x128xf32>
        %12 = vector.load %arg10[%c0, %c0] : memref<200x128xf32>, vector<200x128xf32>
        %c0_2 = arith.constant 0 : index
        %c0_3 = arith.constant 0 : index
        %c0_4 = arith.constant 0 : index
        %c0_5 = arith.constant 0 : index
        %13 = vector.load %arg5[%c0_2, %c0_3, %c0_4, %c0_5] : memref<1x1x256x128xbf16>, vector<1x1x256x128xbf16>
        %14 = vector.shape_cast %13 : vector<1x1x256x128xbf16> to vector<256x128xbf16>
        %cst = arith.constant dense<0.000000e+00> : vector<200x256xf32>
        %15 = "flywheel.matmul"(%9, %14, %cst) {transpose_rhs = true} : (vector<200x128xbf16>, vector<256x128xbf16>, vector<200x256xf32>) -> vector<200x256xf32>
        %cst_6 = arith.constant dense<1.250000e-01> : vector<200x256xf32>
        %16 = arith.mulf %15, %cst_6 : vector<200x256xf32>
        %17 = "tpu.iota"() {dimensions = array<i32: 0>} : () -> vector<200x256xi32>
        %18 = vector.broadcast %3 : i32 to vector<200x256xi32>
        %19 = arith.addi %17, %18 : vector<200x256xi32>
        %20 = "tpu.iota"() {dimensions = array<i32: 1>} : () -> vector<200x256xi32>
        %21 = vector.broadcast %1 : i32 to vector<200x256xi32>
        %22 = arith.addi %20, %21 : vector<200x256xi32>
        %cst_7 = arith.constant dense<199> : vector<200x256xi32>
        %23 = arith.cmpi sle, %22, %cst_7 : vector<200x256xi32>
        %cst_8 = arith.constant dense<-3.23268224E+38> : vector<200x256xf32>
        %24 = arith.select %23, %16, %cst_8 : vector<200x256xi1>, vector<200x256xf32>
        %cst_9 = arith.constant dense<0xFF800000> : vector<200xf32>
        %25 = vector.multi_reduction <maximumf>, %24, %cst_9 [1] : vector<200x256xf32> to vector<200xf32>
        %26 = vector.shape_cast %25 : vector<200xf32> to vector<200x1xf32>
        %27 = vector.broadcast %26 : vector<200x1xf32> to vector<200x128xf32>
        %28 = arith.maximumf %10, %27 : vector<200x128xf32>
        %29 = "tpu.concatenate"(%28, %28) {dimension = 1 : i32} : (vector<200x128xf32>, vector<200x128xf32>) -> vector<200x256xf32>
        %30 = arith.subf %24, %29 : vector<200x256xf32>
        %31 = math.exp %30 : vector<200x256xf32>
        %32 = arith.subf %10, %28 : vector<200x128xf32>
        %33 = math.exp %32 : vector<200x128xf32>
        %34 = arith.mulf %33, %11 : vector<200x128xf32>
        %cst_10 = arith.constant dense<0.000000e+00> : vector<200xf32>
        %35 = vector.multi_reduction <add>, %31, %cst_10 [1] : vector<200x256xf32> to vector<200xf32>
        %36 = vector.shape_cast %35 : vector<200xf32> to vector<200x1xf32>
        %37 = vector.broadcast %36 : vector<200x1xf32> to vector<200x128xf32>
        %38 = arith.addf %34, %37 : vector<200x128xf32>
        %39 = arith.mulf %33, %12 : vector<200x128xf32>
        %40 = arith.truncf %31 : vector<200x256xf32> to vector<200x256xbf16>
        %c0_11 = arith.constant 0 : index
        %c0_12 = arith.constant 0 : index
        %c0_13 = arith.constant 0 : index
        %c0_14 = arith.constant 0 : index
        %41 = vector.load %arg6[%c0_11, %c0_12, %c0_13, %c0_14] : memref<1x1x256x128xbf16>, vector<1x1x256x128xbf16>
        %42 = vector.shape_cast %41 : vector<1x1x256x128xbf16> to vector<256x128xbf16>
        %cst_15 = arith.constant dense<0.000000e+00> : vector<200x128xf32>
        %43 = "flywheel.matmul"(%40, %42, %cst_15) {transpose_rhs = false} : (vector<200x256xbf16>, vector<256x128xbf16>, vector<200x128xf32>) -> vector<200x128xf32>
        %44 = arith.addf %39, %43 : vector<200x128xf32>
        "tpu.vector_store"(%38, %arg9, %c0, %c0) {add = false, operandSegmentSizes = array<i32: 1, 1, 2, 0>, strides = array<i32>} : (vector<200x128xf32>, memref<200x128xf32>, index, index) -> ()
        "tpu.vector_store"(%44, %arg10, %c0, %c0) {add = false, operandSegmentSizes = array<i32: 1, 1, 2, 0>, strides = array<i32>} : (vector<200x128xf32>, memref<200x128xf32>, index, index) -> ()
        "tpu.vector_store"(%28, %arg8, %c0, %c0) {add = false, operandSegmentSizes = array<i32: 1, 1, 2, 0>, strides = array<i32>} : (vector<200x128xf32>, memref<200x128xf32>, index, index) -> ()
      }
      %true = arith.constant true
      %6 = arith.xori %5, %true : i1
      scf.if %6 {
        %8 = vector.load %arg4[%c0, %c0, %c0, %c0] : memref<1x1x200x128xbf16>, vector<1x1x200x128xbf16>
        %9 = vector.shape_cast %8 : vector<1x1x200x128xbf16> to vector<200x128xbf16>
        %10 = vector.load %arg8[%c0, %c0] : memref<200x128xf32>, vector<200x128xf32>
        %11 = vector.load %arg9[%c0, %c0] : memref<200x128xf32>, vector<200x128xf32>
        %12 = vector.load %arg10[%c0, %c0] : memref<200x128xf32>, vector<200x128xf32>
        %c0_2 = arith.constant 0 : index
        %c0_3 = arith.constant 0 : index
        %c0_4 = arith.constant 0 : index
        %c0_5 = arith.constant 0 : index
        %13 = vector.load %arg5[%c0_2, %c0_3, %c0_4, %c0_5] : memref<1x1x256x128xbf16>, vector<1x1x256x128xbf16>
        %14 = vector.shape_cast %13 : vector<1x1x256x128xbf16> to vector<256x128xbf16>
        %cst = arith.constant dense<0.000000e+00> : vector<200x256xf32>
        %15 = "flywheel.matmul"(%9, %14, %cst) {transpose_rhs = true} : (vector<200x128xbf16>, vector<256x128xbf16>, vector<200x256xf32>) -> vector<200x256xf32>
        %cst_6 = arith.constant dense<1.250000e-01> : vector<200x256xf32>
        %16 = arith.mulf %15, %cst_6 : vector<200x256xf32>
        %cst_7 = arith.constant dense<0xFF800000> : vector<200xf32>
        %17 = vector.multi_reduction <maximumf>, %16, %cst_7 [1] : vector<200x256xf32> to vector<200xf32>
        %18 = vector.shape_cast %17 : vector<200xf32> to vector<200x1xf32>
        %19 = vector.broadcast %18 : vector<200x1xf32> to vector<200x128xf32>
        %20 = arith.maximumf %10, %19 : vector<200x128xf32>
        %21 = "tpu.concatenate"(%20, %20) {dimension = 1 : i32} : (vector<200x128xf32>, vector<200x128xf32>) -> vector<200x256xf32>
        %22 = arith.subf %16, %21 : vector<200x256xf32>
        %23 = math.exp %22 : vector<200x256xf32>
        %24 = arith.subf %10, %20 : vector<200x128xf32>
        %25 = math.exp %24 : vector<200x128xf32>
        %26 = arith.mulf %25, %11 : vector<200x128xf32>
        %cst_8 = arith.constant dense<0.000000e+00> : vector<200xf32>
        %27 = vector.multi_reduction <add>, %23, %cst_8 [1] : vector<200x256xf32> to vector<200xf32>
        %28 = vector.shape_cast %27 : vector<200xf32> to vector<200x1xf32>
        %29 = vector.broadcast %28 : vector<200x1xf32> to vector<200x128xf32>
        %30 = arith.addf %26, %29 : vector<200x128xf32>
        %31 = arith.mulf %25, %12 : vector<200x128xf32>
        %32 = arith.truncf %23 : vector<200x256xf32> to vector<200x256xbf16>
        %c0_9 = arith.constant 0 : index
        %c0_10 = arith.constant 0 : index
        %c0_11 = arith.constant 0 : index
        %c0_12 = arith.constant 0 : index
        %33 = vector.load %arg6[%c0_9, %c0_10, %c0_11, %c0_12] : memref<1x1x256x128xbf16>, vector<1x1x256x128xbf16>
        %34 = vector.shape_cast %33 : vector<1x1x256x128xbf16> to vector<256x128xbf16>
        %cst_13 = arith.constant dense<0.000000e+00> : vector<200x128xf32>
        %35 = "flywheel.matmul"(%32, %34, %cst_13) {transpose_rhs = false} : (vector<200x256xbf16>, vector<256x128xbf16>, vector<200x128xf32>) -> vector<200x128xf32>
        %36 = arith.addf %31, %35 : vector<200x128xf32>
        "tpu.vector_store"(%30, %arg9, %c0, %c0) {add = false, operandSegmentSizes = array<i32: 1, 1, 2, 0>, strides = array<i32>} : (vector<200x128xf32>, memref<200x128xf32>, index, index) -> ()
        "tpu.vector_store"(%36, %arg10, %c0, %c0) {add = false, operandSegmentSizes = array<i32: 1, 1, 2, 0>, strides = array<i32>} : (vector<200x128xf32>, memref<200x128xf32>, index, index) -> ()
        "tpu.vector_store"(%20, %arg8, %c0, %c0) {add = false, operandSegmentSizes = array<i32: 1, 1, 2, 0>, strides = array<i32>} : (vector<200x128xf32>, memref<200x128xf32>, index, index) -> ()
      }
      %c0_i32_1 = arith.constant 0 : i32
      %7 = arith.cmpi eq, %arg3, %c0_i32_1 : i32
      scf.if %7 {
        %8 = vector.load %arg10[%c0, %c0] : memref<200x128xf32>, vector<200x128xf32>
        %9 = vector.load %arg9[%c0, %c0] : memref<200x128xf32>, vector<200x128xf32>
        %10 = arith.divf %8, %9 : vector<200x128xf32>
        %11 = arith.truncf %10 : vector<200x128xf32> to vector<200x128xbf16>
        %12 = vector.shape_cast %11 : vector<200x128xbf16> to vector<1x1x200x128xbf16>
        "tpu.vector_store"(%12, %arg7, %c0, %c0, %c0, %c0) {add = false, operandSegmentSizes = array<i32: 1, 1, 4, 0>, strides = array<i32>} : (vector<1x1x200x128xbf16>, memref<1x1x200x128xbf16>, index, index, index, index) -> ()
      }
      return
    }
    func.func @q_blocks(%arg0: i32, %arg1: i32, %arg2: i32, %arg3: i32) -> (i32, i32, i32, i32) {
      %c0_i32 = arith.constant 0 : i32
      return %arg0, %arg1, %arg2, %c0_i32 : i32, i32, i32, i32
    }
    func.func @kv_blocks(%arg0: i32, %arg1: i32, %arg2: i32, %arg3: i32) -> (i32, i32, i32, i32) {
      %c0_i32 = arith.constant 0 : i32
      %c200_i32 = arith.constant 200 : i32
      %c256_i32 = arith.constant 256 : i32
      %0 = arith.addi %arg3, %c0_i32 : i32
      return %arg0, %arg1, %0, %c0_i32 : i32, i32, i32, i32
    }
  }
}

