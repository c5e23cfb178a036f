// Tile IR of causal MHA in BNTH with a window of 64 keys, bf16, 256 tokens: one block of 256 x 256. Made by: sed 's/kv_heads = 2}/kv_heads = 2, window = array<i64: 64, 0>}/' test/Inputs/attention-bnth-causal-bf16.mlir | flywheel-opt --pass-pipeline='builtin.module(flywheel-tile)' | mlir-opt-22 --allow-unregistered-dialect
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
      %c64_i32 = arith.constant 64 : i32
      %9 = arith.subi %3, %c64_i32 : i32
      %10 = arith.subi %4, %c64_i32 : i32
      %11 = arith.cmpi sge, %2, %9 : i32
      %12 = arith.cmpi slt, %1, %10 : i32
      %13 = arith.andi %7, %11 : i1
      %14 = arith.ori %8, %12 : i1
      scf.if %13 {
        scf.if %14 {
          %17 = vector.load %arg4[%c0, %c0, %c0, %c0] : memref<1x1x256x128xbf16>, vector<1x1x256x128xbf16>
          %18 = vector.shape_cast %17 : vector<1x1x256x128xbf16> to vector<256x128xbf16>
          %19 = vector.load %arg8[%c0, %c0] : memref<256x128xf32>, vector<256x128xf32>
          %20 = vector.load %arg9[%c0, %c0] : memref<256x128xf32>, vector<256x128xf32>
          %21 = vector.load %arg10[%c0, %c0] : memref<256x128xf32>, vector<256x128xf32>
          %c0_4 = arith.constant 0 : index
          %c0_5 = arith.constant 0 : index
          %c0_6 = arith.constant 0 : index
          %c0_7 = arith.constant 0 : index
          %22 = vector.load %arg5[%c0_4, %c0_5, %c0_6, %c0_7] : memref<1x1x256x128xbf16>, vector<1x1x256x128xbf16>
          %23 = vector.shape_cast %22 : vector<1x1x256x128xbf16> to vector<256x128xbf16>
          %cst = arith.constant dense<0.000000e+00> : vector<256x256xf32>
          %24 = "flywheel.matmul"(%18, %23, %cst) {transpose_rhs = true} : (vector<256x128xbf16>, vector<256x128xbf16>, vector<256x256xf32>) -> vector<256x256xf32>
          %cst_8 = arith.constant dense<1.250000e-01> : vector<256x256xf32>
          %25 = arith.mulf %24, %cst_8 : vector<256x256xf32>
          %26 = "tpu.iota"() {dimensions = array<i32: 0>} : () -> vector<256x256xi32>
          %27 = vector.broadcast %3 : i32 to vector<256x256xi32>
          %28 = arith.addi %26, %27 : vector<256x256xi32>
          %29 = "tpu.iota"() {dimensions = array<i32: 1>} : () -> vector<256x256xi32>
          %30 = vector.broadcast %1 : i32 to vector<256x256xi32>
          %31 = arith.addi %29, %30 : vector<256x256xi32>
          %cst_9 = arith.constant dense<0> : vector<256x256xi32>
          %32 = arith.addi %28, %cst_9 : vector<256x256xi32>
          %33 = arith.cmpi sle, %31, %32 : vector<256x256xi32>
          %cst_10 = arith.constant dense<64> : vector<256x256xi32>
          %34 = arith.subi %28, %cst_10 : vector<256x256xi32>
          %35 = arith.cmpi sge, %31, %34 : vector<256x256xi32>
          %36 = arith.andi %33, %35 : vector<256x256xi1>
          %cst_11 = arith.constant dense<-2.38197633E+38> : vector<256x256xf32>
          %37 = arith.select %36, %25, %cst_11 : vector<256x256xi1>, vector<256x256xf32>
          %cst_12 = arith.constant dense<0xFF800000> : vector<256xf32>
          %38 = vector.multi_reduction <maximumf>, %37, %cst_12 [1] : vector<256x256xf32> to vector<256xf32>
          %39 = vector.shape_cast %38 : vector<256xf32> to vector<256x1xf32>
          %40 = vector.broadcast %39 : vector<256x1xf32> to vector<256x128xf32>
          %41 = arith.maximumf %19, %40 : vector<256x128xf32>
          %42 = "tpu.concatenate"(%41, %41) {dimension = 1 : i32} : (vector<256x128xf32>, vector<256x128xf32>) -> vector<256x256xf32>
          %43 = arith.subf %37, %42 : vector<256x256xf32>
          %44 = math.exp %43 : vector<256x256xf32>
          %45 = arith.subf %19, %41 : vector<256x128xf32>
          %46 = math.exp %45 : vector<256x128xf32>
          %47 = arith.mulf %46, %20 : vector<256x128xf32>
          %cst_13 = arith.constant dense<0.000000e+00> : vector<256xf32>
          %48 = vector.multi_reduction <add>, %44, %cst_13 [1] : vector<256x256xf32> to vector<256xf32>
          %49 = vector.shape_cast %48 : vector<256xf32> to vector<256x1xf32>
          %50 = vector.broadcast %49 : vector<256x1xf32> to vector<256x128xf32>
          %51 = arith.addf %47, %50 : vector<256x128xf32>
          %52 = arith.mulf %46, %21 : vector<256x128xf32>
          %53 = arith.truncf %44 : vector<256x256xf32> to vector<256x256xbf16>
          %c0_14 = arith.constant 0 : index
          %c0_15 = arith.constant 0 : index
          %c0_16 = arith.constant 0 : index
          %c0_17 = arith.constant 0 : index
          %54 = vector.load %arg6[%c0_14, %c0_15, %c0_16, %c0_17] : memref<1x1x256x128xbf16>, vector<1x1x256x128xbf16>
          %55 = vector.shape_cast %54 : vector<1x1x256x128xbf16> to vector<256x128xbf16>
          %cst_18 = arith.constant dense<0.000000e+00> : vector<256x128xf32>
          %56 = "flywheel.matmul"(%53, %55, %cst_18) {transpose_rhs = false} : (vector<256x256xbf16>, vector<256x128xbf16>, vector<256x128xf32>) -> vector<256x128xf32>
          %57 = arith.addf %52, %56 : vector<256x128xf32>
          "tpu.vector_store"(%51, %arg9, %c0, %c0) {add = false, operandSegmentSizes = array<i32: 1, 1, 2, 0>, strides = array<i32>} : (vector<256x128xf32>, memref<256x128xf32>, index, index) -> ()
          "tpu.vector_store"(%57, %arg10, %c0, %c0) {add = false, operandSegmentSizes = array<i32: 1, 1, 2, 0>, strides = array<i32>} : (vector<256x128xf32>, memref<256x128xf32>, index, index) -> ()
          "tpu.vector_store"(%41, %arg8, %c0, %c0) {add = false, operandSegmentSizes = array<i32: 1, 1, 2, 0>, strides = array<i32>} : (vector<256x128xf32>, memref<256x128xf32>, index, index) -> ()
        }
        %true = arith.constant true
        %16 = arith.xori %14, %true : i1
        scf.if %16 {
          %17 = vector.load %arg4[%c0, %c0, %c0, %c0] : memref<1x1x256x128xbf16>, vector<1x1x256x128xbf16>
          %18 = vector.shape_cast %17 : vector<1x1x256x128xbf16> to vector<256x128xbf16>
          %19 = vector.load %arg8[%c0, %c0] : memref<256x128xf32>, vector<256x128xf32>
          %20 = vector.load %arg9[%c0, %c0] : memref<256x128xf32>, vector<256x128xf32>
          %21 = vector.load %arg10[%c0, %c0] : memref<256x128xf32>, vector<256x128xf32>
          %c0_4 = arith.constant 0 : index
          %c0_5 = arith.constant 0 : index
          %c0_6 = arith.constant 0 : index
          %c0_7 = arith.constant 0 : index
          %22 = vector.load %arg5[%c0_4, %c0_5, %c0_6, %c0_7] : memref<1x1x256x128xbf16>, vector<1x1x256x128xbf16>
          %23 = vector.shape_cast %22 : vector<1x1x256x128xbf16> to vector<256x128xbf16>
          %cst = arith.constant dense<0.000000e+00> : vector<256x256xf32>
          %24 = "flywheel.matmul"(%18, %23, %cst) {transpose_rhs = true} : (vector<256x128xbf16>, vector<256x128xbf16>, vector<256x256xf32>) -> vector<256x256xf32>
          %cst_8 = arith.constant dense<1.250000e-01> : vector<256x256xf32>
          %25 = arith.mulf %24, %cst_8 : vector<256x256xf32>
          %cst_9 = arith.constant dense<0xFF800000> : vector<256xf32>
          %26 = vector.multi_reduction <maximumf>, %25, %cst_9 [1] : vector<256x256xf32> to vector<256xf32>
          %27 = vector.shape_cast %26 : vector<256xf32> to vector<256x1xf32>
          %28 = vector.broadcast %27 : vector<256x1xf32> to vector<256x128xf32>
          %29 = arith.maximumf %19, %28 : vector<256x128xf32>
          %30 = "tpu.concatenate"(%29, %29) {dimension = 1 : i32} : (vector<256x128xf32>, vector<256x128xf32>) -> vector<256x256xf32>
          %31 = arith.subf %25, %30 : vector<256x256xf32>
          %32 = math.exp %31 : vector<256x256xf32>
          %33 = arith.subf %19, %29 : vector<256x128xf32>
          %34 = math.exp %33 : vector<256x128xf32>
          %35 = arith.mulf %34, %20 : vector<256x128xf32>
          %cst_10 = arith.constant dense<0.000000e+00> : vector<256xf32>
          %36 = vector.multi_reduction <add>, %32, %cst_10 [1] : vector<256x256xf32> to vector<256xf32>
          %37 = vector.shape_cast %36 : vector<256xf32> to vector<256x1xf32>
          %38 = vector.broadcast %37 : vector<256x1xf32> to vector<256x128xf32>
          %39 = arith.addf %35, %38 : vector<256x128xf32>
          %40 = arith.mulf %34, %21 : vector<256x128xf32>
          %41 = arith.truncf %32 : vector<256x256xf32> to vector<256x256xbf16>
          %c0_11 = arith.constant 0 : index
          %c0_12 = arith.constant 0 : index
          %c0_13 = arith.constant 0 : index
          %c0_14 = arith.constant 0 : index
          %42 = vector.load %arg6[%c0_11, %c0_12, %c0_13, %c0_14] : memref<1x1x256x128xbf16>, vector<1x1x256x128xbf16>
          %43 = vector.shape_cast %42 : vector<1x1x256x128xbf16> to vector<256x128xbf16>
          %cst_15 = arith.constant dense<0.000000e+00> : vector<256x128xf32>
          %44 = "flywheel.matmul"(%41, %43, %cst_15) {transpose_rhs = false} : (vector<256x256xbf16>, vector<256x128xbf16>, vector<256x128xf32>) -> vector<256x128xf32>
          %45 = arith.addf %40, %44 : vector<256x128xf32>
          "tpu.vector_store"(%39, %arg9, %c0, %c0) {add = false, operandSegmentSizes = array<i32: 1, 1, 2, 0>, strides = array<i32>} : (vector<256x128xf32>, memref<256x128xf32>, index, index) -> ()
          "tpu.vector_store"(%45, %arg10, %c0, %c0) {add = false, operandSegmentSizes = array<i32: 1, 1, 2, 0>, strides = array<i32>} : (vector<256x128xf32>, memref<256x128xf32>, index, index) -> ()
          "tpu.vector_store"(%29, %arg8, %c0, %c0) {add = false, operandSegmentSizes = array<i32: 1, 1, 2, 0>, strides = array<i32>} : (vector<256x128xf32>, memref<256x128xf32>, index, index) -> ()
        }
      }
      %c0_i32_3 = arith.constant 0 : i32
      %15 = arith.cmpi eq, %arg3, %c0_i32_3 : i32
      scf.if %15 {
        %16 = vector.load %arg10[%c0, %c0] : memref<256x128xf32>, vector<256x128xf32>
        %17 = vector.load %arg9[%c0, %c0] : memref<256x128xf32>, vector<256x128xf32>
        %18 = arith.divf %16, %17 : vector<256x128xf32>
        %19 = arith.truncf %18 : vector<256x128xf32> to vector<256x128xbf16>
        %20 = vector.shape_cast %19 : vector<256x128xbf16> to vector<1x1x256x128xbf16>
        "tpu.vector_store"(%20, %arg7, %c0, %c0, %c0, %c0) {add = false, operandSegmentSizes = array<i32: 1, 1, 4, 0>, strides = array<i32>} : (vector<1x1x256x128xbf16>, memref<1x1x256x128xbf16>, index, index, index, index) -> ()
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
      %c64_i32 = arith.constant 64 : i32
      %0 = arith.muli %arg2, %c256_i32 : i32
      %1 = arith.subi %0, %c64_i32 : i32
      %2 = arith.maxsi %1, %c0_i32 : i32
      %3 = arith.divsi %2, %c256_i32_0 : i32
      %4 = arith.maxsi %arg3, %3 : i32
      %c1_i32 = arith.constant 1 : i32
      %c-1_i32 = arith.constant -1 : i32
      %c0_i32_1 = arith.constant 0 : i32
      %5 = arith.addi %arg2, %c1_i32 : i32
      %6 = arith.muli %5, %c256_i32 : i32
      %7 = arith.addi %6, %c-1_i32 : i32
      %8 = arith.divsi %7, %c256_i32_0 : i32
      %9 = arith.minsi %8, %c0_i32_1 : i32
      %10 = arith.minsi %4, %9 : i32
      %11 = arith.addi %10, %c0_i32 : i32
      return %arg0, %arg1, %11, %c0_i32 : i32, i32, i32, i32
    }
  }
}

