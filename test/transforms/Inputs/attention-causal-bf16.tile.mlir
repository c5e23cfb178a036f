// Tile IR of causal MHA in BNTH, bf16, 256 tokens: one block of 256 x 256. Made by: flywheel-opt test/Inputs/attention-bnth-causal-bf16.mlir --pass-pipeline='builtin.module(flywheel-tile)' | mlir-opt-22 --allow-unregistered-dialect
module {
  func.func @main(%arg0: tensor<1x2x256x128xbf16>, %arg1: tensor<1x2x256x128xbf16>, %arg2: tensor<1x2x256x128xbf16>) -> tensor<1x2x256x128xbf16> {
    %0 = "flywheel.attention_kernel"(%arg0, %arg1, %arg2) {bytes_accessed = 524288 : i64, flops = 67108864 : i64, kernel = @flywheel_kernel_0, operandSegmentSizes = array<i32: 1, 1, 1, 0, 0>, transcendentals = 131584 : i64} : (tensor<1x2x256x128xbf16>, tensor<1x2x256x128xbf16>, tensor<1x2x256x128xbf16>) -> tensor<1x2x256x128xbf16>
    return %0 : tensor<1x2x256x128xbf16>
  }
  module @flywheel_kernel_0 attributes {stable_mosaic.version = 15 : i64} {
    func.func @kernel(%arg0: i32, %arg1: i32, %arg2: i32, %arg3: i32, %arg4: memref<1x1x256x128xbf16>, %arg5: memref<1x1x256x128xbf16>, %arg6: memref<1x1x256x128xbf16>, %arg7: memref<1x1x256x128xbf16>, %arg8: memref<256x128xf32>, %arg9: memref<256x128xf32>, %arg10: memref<256x128xf32>) attributes {dimension_semantics = [#tpu.dimension_semantics<parallel>, #tpu.dimension_semantics<parallel>, #tpu.dimension_semantics<parallel>, #tpu.dimension_semantics<arbitrary>], iteration_bounds = array<i64: 1, 2, 1, 1>, scalar_prefetch = 0 : i64, scratch_operands = 3 : i64, tpu.core_type = #tpu.core_type<tc>, window_params = [{transform_indices = @q_blocks, window_bounds = array<i64: 1, 1, 256, 128>}, {transform_indices = @kv_blocks, window_bounds = array<i64: 1, 1, 256, 128>}, {transform_indices = @kv_blocks, window_bounds = array<i64: 1, 1, 256, 128>}, {transform_indices = @q_blocks, window_bounds = array<i64: 1, 1, 256, 128>}]} {
      %c0 = arith.constant 0 : index
      %c0_i32 = arith.constant 0 : i32
      %0 = arith.cmpi eq, %arg3, %c0_i32 : i32
      scf.if %0 {
        %cst = arith.constant dense<0xFF800000> : vector<256x128xf32>
        "tpu.vector_store"(%cst, %arg8, %c0, %c0) {add = false, operandSegmentSizes = array<i32: 1, 1, 2, 0>, strides = array<i32>} : (vector<256x128xf32>, memref<256x128xf32>, index, index) -> ()
        %cst_4 = arith.constant dense<0.000000e+00> : vector<256x128xf32>
        "tpu.vector_store"(%cst_4, %arg9, %c0, %c0) {add = false, operandSegmentSizes = array<i32: 1, 1, 2, 0>, strides = array<i32>} : (vector<256x128xf32>, memref<256x128xf32>, index, index) -> ()
        %cst_5 = arith.constant dense<0.000000e+00> : vector<256x128xf32>
        "tpu.vector_store"(%cst_5, %arg10, %c0, %c0) {add = false, operandSegmentSizes = array<i32: 1, 1, 2, 0>, strides = array<i32>} : (vector<256x128xf32>, memref<256x128xf32>, index, index) -> ()
      }
      %c256_i32 = arith.constant 256 : i32
      %c256_i32_0 = arith.constant 256 : i32
      %1 = arith.muli %arg3, %c256_i32 : i32
      %c255_i32 = arith.constant 255 : i32
      %2 = arith.addi %1, %c255_i32 : i32
      %3 = arith.muli %arg2, %c256_i32_0 : i32
      %c255_i32_1 = arith.constant 255 : i32
      %4 = arith.addi %3, %c255_i32_1 : i32
      %c0_i32_2 = arith.constant 0 : i32
      %5 = arith.addi %3, %c0_i32_2 : i32
      %6 = arith.addi %4, %c0_i32_2 : i32
      %7 = arith.cmpi sle, %1, %6 : i32
      %8 = arith.cmpi sgt, %2, %5 : i32
      scf.if %7 {
        scf.if %8 {
          %11 = vector.load %arg4[%c0, %c0, %c0, %c0] : memref<1x1x256x128xbf16>, vector<1x1x256x128xbf16>
          %12 = vector.shape_cast %11 : vector<1x1x256x128xbf16> to vector<256x128xbf16>
          %13 = vector.load %arg8[%c0, %c0] : memref<256x128xf32>, vector<256x128xf32>
          %14 = vector.load %arg9[%c0, %c0] : memref<256x128xf32>, vector<256x128xf32>
          %15 = vector.load %arg10[%c0, %c0] : memref<256x128xf32>, vector<256x128xf32>
          %c0_4 = arith.constant 0 : index
          %c0_5 = arith.constant 0 : index
          %c0_6 = arith.constant 0 : index
          %c0_7 = arith.constant 0 : index
          %16 = vector.load %arg5[%c0_4, %c0_5, %c0_6, %c0_7] : memref<1x1x256x128xbf16>, vector<1x1x256x128xbf16>
          %17 = vector.shape_cast %16 : vector<1x1x256x128xbf16> to vector<256x128xbf16>
          %cst = arith.constant dense<0.000000e+00> : vector<256x256xf32>
          %18 = "flywheel.matmul"(%12, %17, %cst) {transpose_rhs = true} : (vector<256x128xbf16>, vector<256x128xbf16>, vector<256x256xf32>) -> vector<256x256xf32>
          %cst_8 = arith.constant dense<1.250000e-01> : vector<256x256xf32>
          %19 = arith.mulf %18, %cst_8 : vector<256x256xf32>
          %20 = "tpu.iota"() {dimensions = array<i32: 0>} : () -> vector<256x256xi32>
          %21 = vector.broadcast %3 : i32 to vector<256x256xi32>
          %22 = arith.addi %20, %21 : vector<256x256xi32>
          %23 = "tpu.iota"() {dimensions = array<i32: 1>} : () -> vector<256x256xi32>
          %24 = vector.broadcast %1 : i32 to vector<256x256xi32>
          %25 = arith.addi %23, %24 : vector<256x256xi32>
          %cst_9 = arith.constant dense<0> : vector<256x256xi32>
          %26 = arith.addi %22, %cst_9 : vector<256x256xi32>
          %27 = arith.cmpi sle, %25, %26 : vector<256x256xi32>
          %cst_10 = arith.constant dense<-2.38197633E+38> : vector<256x256xf32>
          %28 = arith.select %27, %19, %cst_10 : vector<256x256xi1>, vector<256x256xf32>
          %cst_11 = arith.constant dense<0xFF800000> : vector<256xf32>
          %29 = vector.multi_reduction <maximumf>, %28, %cst_11 [1] : vector<256x256xf32> to vector<256xf32>
          %30 = vector.shape_cast %29 : vector<256xf32> to vector<256x1xf32>
          %31 = vector.broadcast %30 : vector<256x1xf32> to vector<256x128xf32>
          %32 = arith.maximumf %13, %31 : vector<256x128xf32>
          %33 = "tpu.concatenate"(%32, %32) {dimension = 1 : i32} : (vector<256x128xf32>, vector<256x128xf32>) -> vector<256x256xf32>
          %34 = arith.subf %28, %33 : vector<256x256xf32>
          %35 = math.exp %34 : vector<256x256xf32>
          %36 = arith.subf %13, %32 : vector<256x128xf32>
          %37 = math.exp %36 : vector<256x128xf32>
          %38 = arith.mulf %37, %14 : vector<256x128xf32>
          %cst_12 = arith.constant dense<0.000000e+00> : vector<256xf32>
          %39 = vector.multi_reduction <add>, %35, %cst_12 [1] : vector<256x256xf32> to vector<256xf32>
          %40 = vector.shape_cast %39 : vector<256xf32> to vector<256x1xf32>
          %41 = vector.broadcast %40 : vector<256x1xf32> to vector<256x128xf32>
          %42 = arith.addf %38, %41 : vector<256x128xf32>
          %43 = arith.mulf %37, %15 : vector<256x128xf32>
          %44 = arith.truncf %35 : vector<256x256xf32> to vector<256x256xbf16>
          %c0_13 = arith.constant 0 : index
          %c0_14 = arith.constant 0 : index
          %c0_15 = arith.constant 0 : index
          %c0_16 = arith.constant 0 : index
          %45 = vector.load %arg6[%c0_13, %c0_14, %c0_15, %c0_16] : memref<1x1x256x128xbf16>, vector<1x1x256x128xbf16>
          %46 = vector.shape_cast %45 : vector<1x1x256x128xbf16> to vector<256x128xbf16>
          %cst_17 = arith.constant dense<0.000000e+00> : vector<256x128xf32>
          %47 = "flywheel.matmul"(%44, %46, %cst_17) {transpose_rhs = false} : (vector<256x256xbf16>, vector<256x128xbf16>, vector<256x128xf32>) -> vector<256x128xf32>
          %48 = arith.addf %43, %47 : vector<256x128xf32>
          "tpu.vector_store"(%42, %arg9, %c0, %c0) {add = false, operandSegmentSizes = array<i32: 1, 1, 2, 0>, strides = array<i32>} : (vector<256x128xf32>, memref<256x128xf32>, index, index) -> ()
          "tpu.vector_store"(%48, %arg10, %c0, %c0) {add = false, operandSegmentSizes = array<i32: 1, 1, 2, 0>, strides = array<i32>} : (vector<256x128xf32>, memref<256x128xf32>, index, index) -> ()
          "tpu.vector_store"(%32, %arg8, %c0, %c0) {add = false, operandSegmentSizes = array<i32: 1, 1, 2, 0>, strides = array<i32>} : (vector<256x128xf32>, memref<256x128xf32>, index, index) -> ()
        }
        %true = arith.constant true
        %10 = arith.xori %8, %true : i1
        scf.if %10 {
          %11 = vector.load %arg4[%c0, %c0, %c0, %c0] : memref<1x1x256x128xbf16>, vector<1x1x256x128xbf16>
          %12 = vector.shape_cast %11 : vector<1x1x256x128xbf16> to vector<256x128xbf16>
          %13 = vector.load %arg8[%c0, %c0] : memref<256x128xf32>, vector<256x128xf32>
          %14 = vector.load %arg9[%c0, %c0] : memref<256x128xf32>, vector<256x128xf32>
          %15 = vector.load %arg10[%c0, %c0] : memref<256x128xf32>, vector<256x128xf32>
          %c0_4 = arith.constant 0 : index
          %c0_5 = arith.constant 0 : index
          %c0_6 = arith.constant 0 : index
          %c0_7 = arith.constant 0 : index
          %16 = vector.load %arg5[%c0_4, %c0_5, %c0_6, %c0_7] : memref<1x1x256x128xbf16>, vector<1x1x256x128xbf16>
          %17 = vector.shape_cast %16 : vector<1x1x256x128xbf16> to vector<256x128xbf16>
          %cst = arith.constant dense<0.000000e+00> : vector<256x256xf32>
          %18 = "flywheel.matmul"(%12, %17, %cst) {transpose_rhs = true} : (vector<256x128xbf16>, vector<256x128xbf16>, vector<256x256xf32>) -> vector<256x256xf32>
          %cst_8 = arith.constant dense<1.250000e-01> : vector<256x256xf32>
          %19 = arith.mulf %18, %cst_8 : vector<256x256xf32>
          %cst_9 = arith.constant dense<0xFF800000> : vector<256xf32>
          %20 = vector.multi_reduction <maximumf>, %19, %cst_9 [1] : vector<256x256xf32> to vector<256xf32>
          %21 = vector.shape_cast %20 : vector<256xf32> to vector<256x1xf32>
          %22 = vector.broadcast %21 : vector<256x1xf32> to vector<256x128xf32>
          %23 = arith.maximumf %13, %22 : vector<256x128xf32>
          %24 = "tpu.concatenate"(%23, %23) {dimension = 1 : i32} : (vector<256x128xf32>, vector<256x128xf32>) -> vector<256x256xf32>
          %25 = arith.subf %19, %24 : vector<256x256xf32>
          %26 = math.exp %25 : vector<256x256xf32>
          %27 = arith.subf %13, %23 : vector<256x128xf32>
          %28 = math.exp %27 : vector<256x128xf32>
          %29 = arith.mulf %28, %14 : vector<256x128xf32>
          %cst_10 = arith.constant dense<0.000000e+00> : vector<256xf32>
          %30 = vector.multi_reduction <add>, %26, %cst_10 [1] : vector<256x256xf32> to vector<256xf32>
          %31 = vector.shape_cast %30 : vector<256xf32> to vector<256x1xf32>
          %32 = vector.broadcast %31 : vector<256x1xf32> to vector<256x128xf32>
          %33 = arith.addf %29, %32 : vector<256x128xf32>
          %34 = arith.mulf %28, %15 : vector<256x128xf32>
          %35 = arith.truncf %26 : vector<256x256xf32> to vector<256x256xbf16>
          %c0_11 = arith.constant 0 : index
          %c0_12 = arith.constant 0 : index
          %c0_13 = arith.constant 0 : index
          %c0_14 = arith.constant 0 : index
          %36 = vector.load %arg6[%c0_11, %c0_12, %c0_13, %c0_14] : memref<1x1x256x128xbf16>, vector<1x1x256x128xbf16>
          %37 = vector.shape_cast %36 : vector<1x1x256x128xbf16> to vector<256x128xbf16>
          %cst_15 = arith.constant dense<0.000000e+00> : vector<256x128xf32>
          %38 = "flywheel.matmul"(%35, %37, %cst_15) {transpose_rhs = false} : (vector<256x256xbf16>, vector<256x128xbf16>, vector<256x128xf32>) -> vector<256x128xf32>
          %39 = arith.addf %34, %38 : vector<256x128xf32>
          "tpu.vector_store"(%33, %arg9, %c0, %c0) {add = false, operandSegmentSizes = array<i32: 1, 1, 2, 0>, strides = array<i32>} : (vector<256x128xf32>, memref<256x128xf32>, index, index) -> ()
          "tpu.vector_store"(%39, %arg10, %c0, %c0) {add = false, operandSegmentSizes = array<i32: 1, 1, 2, 0>, strides = array<i32>} : (vector<256x128xf32>, memref<256x128xf32>, index, index) -> ()
          "tpu.vector_store"(%23, %arg8, %c0, %c0) {add = false, operandSegmentSizes = array<i32: 1, 1, 2, 0>, strides = array<i32>} : (vector<256x128xf32>, memref<256x128xf32>, index, index) -> ()
        }
      }
      %c0_i32_3 = arith.constant 0 : i32
      %9 = arith.cmpi eq, %arg3, %c0_i32_3 : i32
      scf.if %9 {
        %10 = vector.load %arg10[%c0, %c0] : memref<256x128xf32>, vector<256x128xf32>
        %11 = vector.load %arg9[%c0, %c0] : memref<256x128xf32>, vector<256x128xf32>
        %12 = arith.divf %10, %11 : vector<256x128xf32>
        %13 = arith.truncf %12 : vector<256x128xf32> to vector<256x128xbf16>
        %14 = vector.shape_cast %13 : vector<256x128xbf16> to vector<1x1x256x128xbf16>
        "tpu.vector_store"(%14, %arg7, %c0, %c0, %c0, %c0) {add = false, operandSegmentSizes = array<i32: 1, 1, 4, 0>, strides = array<i32>} : (vector<1x1x256x128xbf16>, memref<1x1x256x128xbf16>, index, index, index, index) -> ()
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
      %c1_i32 = arith.constant 1 : i32
      %c-1_i32 = arith.constant -1 : i32
      %c0_i32_1 = arith.constant 0 : i32
      %0 = arith.addi %arg2, %c1_i32 : i32
      %1 = arith.muli %0, %c256_i32 : i32
      %2 = arith.addi %1, %c-1_i32 : i32
      %3 = arith.divsi %2, %c256_i32_0 : i32
      %4 = arith.minsi %3, %c0_i32_1 : i32
      %5 = arith.minsi %arg3, %4 : i32
      %6 = arith.addi %5, %c0_i32 : i32
      return %arg0, %arg1, %6, %c0_i32 : i32, i32, i32, i32
    }
  }
}

