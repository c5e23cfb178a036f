// Tile IR of causal MHA in BNTH, bf16, 1024 tokens: blocks of 256 x 256, each in two key sub-blocks. Made by: sed 's/x256x/x1024x/g' test/Inputs/attention-bnth-causal-bf16.mlir | flywheel-opt --pass-pipeline='builtin.module(flywheel-tile{causal-block-q=256 causal-block-kv=256 key-splits=2})' | mlir-opt-22 --allow-unregistered-dialect
module {
  func.func @main(%arg0: tensor<1x2x1024x128xbf16>, %arg1: tensor<1x2x1024x128xbf16>, %arg2: tensor<1x2x1024x128xbf16>) -> tensor<1x2x1024x128xbf16> {
    %0 = "flywheel.attention_kernel"(%arg0, %arg1, %arg2) {bytes_accessed = 2097152 : i64, flops = 671088640 : i64, kernel = @flywheel_kernel_0, operandSegmentSizes = array<i32: 1, 1, 1, 0, 0>, transcendentals = 1315840 : i64} : (tensor<1x2x1024x128xbf16>, tensor<1x2x1024x128xbf16>, tensor<1x2x1024x128xbf16>) -> tensor<1x2x1024x128xbf16>
    return %0 : tensor<1x2x1024x128xbf16>
  }
  module @flywheel_kernel_0 attributes {stable_mosaic.version = 15 : i64} {
    func.func @kernel(%arg0: i32, %arg1: i32, %arg2: i32, %arg3: i32, %arg4: memref<1x1x256x128xbf16>, %arg5: memref<1x1x256x128xbf16>, %arg6: memref<1x1x256x128xbf16>, %arg7: memref<1x1x256x128xbf16>, %arg8: memref<256x128xf32>, %arg9: memref<256x128xf32>, %arg10: memref<256x128xf32>) attributes {dimension_semantics = [#tpu.dimension_semantics<parallel>, #tpu.dimension_semantics<parallel>, #tpu.dimension_semantics<parallel>, #tpu.dimension_semantics<arbitrary>], iteration_bounds = array<i64: 1, 2, 4, 4>, scalar_prefetch = 0 : i64, scratch_operands = 3 : i64, tpu.core_type = #tpu.core_type<tc>, window_params = [{transform_indices = @q_blocks, window_bounds = array<i64: 1, 1, 256, 128>}, {transform_indices = @kv_blocks, window_bounds = array<i64: 1, 1, 256, 128>}, {transform_indices = @kv_blocks, window_bounds = array<i64: 1, 1, 256, 128>}, {transform_indices = @q_blocks, window_bounds = array<i64: 1, 1, 256, 128>}]} {
      %c0 = arith.constant 0 : index
      %c0_i32 = arith.constant 0 : i32
      %0 = arith.cmpi eq, %arg3, %c0_i32 : i32
      scf.if %0 {
        %cst = arith.constant dense<0xFF800000> : vector<256x128xf32>
        "tpu.vector_store"(%cst, %arg8, %c0, %c0) {add = false, operandSegmentSizes = array<i32: 1, 1, 2, 0>, strides = array<i32>} : (vector<256x128xf32>, memref<256x128xf32>, index, index) -> ()
        %cst_3 = arith.constant dense<0.000000e+00> : vector<256x128xf32>
        "tpu.vector_store"(%cst_3, %arg9, %c0, %c0) {add = false, operandSegmentSizes = array<i32: 1, 1, 2, 0>, strides = array<i32>} : (vector<256x128xf32>, memref<256x128xf32>, index, index) -> ()
        %cst_4 = arith.constant dense<0.000000e+00> : vector<256x128xf32>
        "tpu.vector_store"(%cst_4, %arg10, %c0, %c0) {add = false, operandSegmentSizes = array<i32: 1, 1, 2, 0>, strides = array<i32>} : (vector<256x128xf32>, memref<256x128xf32>, index, index) -> ()
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
          %c0_3 = arith.constant 0 : index
          %c0_4 = arith.constant 0 : index
          %c0_5 = arith.constant 0 : index
          %c0_6 = arith.constant 0 : index
          %16 = vector.load %arg5[%c0_3, %c0_4, %c0_5, %c0_6] : memref<1x1x256x128xbf16>, vector<1x1x128x128xbf16>
          %17 = vector.shape_cast %16 : vector<1x1x128x128xbf16> to vector<128x128xbf16>
          %cst = arith.constant dense<0.000000e+00> : vector<256x128xf32>
          %18 = "flywheel.matmul"(%12, %17, %cst) {transpose_rhs = true} : (vector<256x128xbf16>, vector<128x128xbf16>, vector<256x128xf32>) -> vector<256x128xf32>
          %cst_7 = arith.constant dense<1.250000e-01> : vector<256x128xf32>
          %19 = arith.mulf %18, %cst_7 : vector<256x128xf32>
          %20 = "tpu.iota"() {dimensions = array<i32: 0>} : () -> vector<256x128xi32>
          %21 = vector.broadcast %3 : i32 to vector<256x128xi32>
          %22 = arith.addi %20, %21 : vector<256x128xi32>
          %23 = "tpu.iota"() {dimensions = array<i32: 1>} : () -> vector<256x128xi32>
          %24 = vector.broadcast %1 : i32 to vector<256x128xi32>
          %25 = arith.addi %23, %24 : vector<256x128xi32>
          %cst_8 = arith.constant dense<0> : vector<256x128xi32>
          %26 = arith.addi %22, %cst_8 : vector<256x128xi32>
          %27 = arith.cmpi sle, %25, %26 : vector<256x128xi32>
          %cst_9 = arith.constant dense<-2.38197633E+38> : vector<256x128xf32>
          %28 = arith.select %27, %19, %cst_9 : vector<256x128xi1>, vector<256x128xf32>
          %cst_10 = arith.constant dense<0xFF800000> : vector<256xf32>
          %29 = vector.multi_reduction <maximumf>, %28, %cst_10 [1] : vector<256x128xf32> to vector<256xf32>
          %30 = vector.shape_cast %29 : vector<256xf32> to vector<256x1xf32>
          %31 = vector.broadcast %30 : vector<256x1xf32> to vector<256x128xf32>
          %32 = arith.maximumf %13, %31 : vector<256x128xf32>
          %33 = arith.subf %28, %32 : vector<256x128xf32>
          %34 = math.exp %33 : vector<256x128xf32>
          %35 = arith.subf %13, %32 : vector<256x128xf32>
          %36 = math.exp %35 : vector<256x128xf32>
          %37 = arith.mulf %36, %14 : vector<256x128xf32>
          %cst_11 = arith.constant dense<0.000000e+00> : vector<256xf32>
          %38 = vector.multi_reduction <add>, %34, %cst_11 [1] : vector<256x128xf32> to vector<256xf32>
          %39 = vector.shape_cast %38 : vector<256xf32> to vector<256x1xf32>
          %40 = vector.broadcast %39 : vector<256x1xf32> to vector<256x128xf32>
          %41 = arith.addf %37, %40 : vector<256x128xf32>
          %42 = arith.mulf %36, %15 : vector<256x128xf32>
          %43 = arith.truncf %34 : vector<256x128xf32> to vector<256x128xbf16>
          %c0_12 = arith.constant 0 : index
          %c0_13 = arith.constant 0 : index
          %c0_14 = arith.constant 0 : index
          %c0_15 = arith.constant 0 : index
          %44 = vector.load %arg6[%c0_12, %c0_13, %c0_14, %c0_15] : memref<1x1x256x128xbf16>, vector<1x1x128x128xbf16>
          %45 = vector.shape_cast %44 : vector<1x1x128x128xbf16> to vector<128x128xbf16>
          %cst_16 = arith.constant dense<0.000000e+00> : vector<256x128xf32>
          %46 = "flywheel.matmul"(%43, %45, %cst_16) {transpose_rhs = false} : (vector<256x128xbf16>, vector<128x128xbf16>, vector<256x128xf32>) -> vector<256x128xf32>
          %47 = arith.addf %42, %46 : vector<256x128xf32>
          %c0_17 = arith.constant 0 : index
          %c0_18 = arith.constant 0 : index
          %c128 = arith.constant 128 : index
          %c0_19 = arith.constant 0 : index
          %48 = vector.load %arg5[%c0_17, %c0_18, %c128, %c0_19] : memref<1x1x256x128xbf16>, vector<1x1x128x128xbf16>
          %49 = vector.shape_cast %48 : vector<1x1x128x128xbf16> to vector<128x128xbf16>
          %cst_20 = arith.constant dense<0.000000e+00> : vector<256x128xf32>
          %50 = "flywheel.matmul"(%12, %49, %cst_20) {transpose_rhs = true} : (vector<256x128xbf16>, vector<128x128xbf16>, vector<256x128xf32>) -> vector<256x128xf32>
          %cst_21 = arith.constant dense<1.250000e-01> : vector<256x128xf32>
          %51 = arith.mulf %50, %cst_21 : vector<256x128xf32>
          %52 = "tpu.iota"() {dimensions = array<i32: 0>} : () -> vector<256x128xi32>
          %53 = vector.broadcast %3 : i32 to vector<256x128xi32>
          %54 = arith.addi %52, %53 : vector<256x128xi32>
          %55 = "tpu.iota"() {dimensions = array<i32: 1>} : () -> vector<256x128xi32>
          %c128_i32 = arith.constant 128 : i32
          %56 = arith.addi %1, %c128_i32 : i32
          %57 = vector.broadcast %56 : i32 to vector<256x128xi32>
          %58 = arith.addi %55, %57 : vector<256x128xi32>
          %cst_22 = arith.constant dense<0> : vector<256x128xi32>
          %59 = arith.addi %54, %cst_22 : vector<256x128xi32>
          %60 = arith.cmpi sle, %58, %59 : vector<256x128xi32>
          %cst_23 = arith.constant dense<-2.38197633E+38> : vector<256x128xf32>
          %61 = arith.select %60, %51, %cst_23 : vector<256x128xi1>, vector<256x128xf32>
          %cst_24 = arith.constant dense<0xFF800000> : vector<256xf32>
          %62 = vector.multi_reduction <maximumf>, %61, %cst_24 [1] : vector<256x128xf32> to vector<256xf32>
          %63 = vector.shape_cast %62 : vector<256xf32> to vector<256x1xf32>
          %64 = vector.broadcast %63 : vector<256x1xf32> to vector<256x128xf32>
          %65 = arith.maximumf %32, %64 : vector<256x128xf32>
          %66 = arith.subf %61, %65 : vector<256x128xf32>
          %67 = math.exp %66 : vector<256x128xf32>
          %68 = arith.subf %32, %65 : vector<256x128xf32>
          %69 = math.exp %68 : vector<256x128xf32>
          %70 = arith.mulf %69, %41 : vector<256x128xf32>
          %cst_25 = arith.constant dense<0.000000e+00> : vector<256xf32>
          %71 = vector.multi_reduction <add>, %67, %cst_25 [1] : vector<256x128xf32> to vector<256xf32>
          %72 = vector.shape_cast %71 : vector<256xf32> to vector<256x1xf32>
          %73 = vector.broadcast %72 : vector<256x1xf32> to vector<256x128xf32>
          %74 = arith.addf %70, %73 : vector<256x128xf32>
          %75 = arith.mulf %69, %47 : vector<256x128xf32>
          %76 = arith.truncf %67 : vector<256x128xf32> to vector<256x128xbf16>
          %c0_26 = arith.constant 0 : index
          %c0_27 = arith.constant 0 : index
          %c128_28 = arith.constant 128 : index
          %c0_29 = arith.constant 0 : index
          %77 = vector.load %arg6[%c0_26, %c0_27, %c128_28, %c0_29] : memref<1x1x256x128xbf16>, vector<1x1x128x128xbf16>
          %78 = vector.shape_cast %77 : vector<1x1x128x128xbf16> to vector<128x128xbf16>
          %cst_30 = arith.constant dense<0.000000e+00> : vector<256x128xf32>
          %79 = "flywheel.matmul"(%76, %78, %cst_30) {transpose_rhs = false} : (vector<256x128xbf16>, vector<128x128xbf16>, vector<256x128xf32>) -> vector<256x128xf32>
          %80 = arith.addf %75, %79 : vector<256x128xf32>
          "tpu.vector_store"(%74, %arg9, %c0, %c0) {add = false, operandSegmentSizes = array<i32: 1, 1, 2, 0>, strides = array<i32>} : (vector<256x128xf32>, memref<256x128xf32>, index, index) -> ()
          "tpu.vector_store"(%80, %arg10, %c0, %c0) {add = false, operandSegmentSizes = array<i32: 1, 1, 2, 0>, strides = array<i32>} : (vector<256x128xf32>, memref<256x128xf32>, index, index) -> ()
          "tpu.vector_store"(%65, %arg8, %c0, %c0) {add = false, operandSegmentSizes = array<i32: 1, 1, 2, 0>, strides = array<i32>} : (vector<256x128xf32>, memref<256x128xf32>, index, index) -> ()
        }
        %true = arith.constant true
        %10 = arith.xori %8, %true : i1
        scf.if %10 {
          %11 = vector.load %arg4[%c0, %c0, %c0, %c0] : memref<1x1x256x128xbf16>, vector<1x1x256x128xbf16>
          %12 = vector.shape_cast %11 : vector<1x1x256x128xbf16> to vector<256x128xbf16>
          %13 = vector.load %arg8[%c0, %c0] : memref<256x128xf32>, vector<256x128xf32>
          %14 = vector.load %arg9[%c0, %c0] : memref<256x128xf32>, vector<256x128xf32>
          %15 = vector.load %arg10[%c0, %c0] : memref<256x128xf32>, vector<256x128xf32>
          %c0_3 = arith.constant 0 : index
          %c0_4 = arith.constant 0 : index
          %c0_5 = arith.constant 0 : index
          %c0_6 = arith.constant 0 : index
          %16 = vector.load %arg5[%c0_3, %c0_4, %c0_5, %c0_6] : memref<1x1x256x128xbf16>, vector<1x1x128x128xbf16>
          %17 = vector.shape_cast %16 : vector<1x1x128x128xbf16> to vector<128x128xbf16>
          %cst = arith.constant dense<0.000000e+00> : vector<256x128xf32>
          %18 = "flywheel.matmul"(%12, %17, %cst) {transpose_rhs = true} : (vector<256x128xbf16>, vector<128x128xbf16>, vector<256x128xf32>) -> vector<256x128xf32>
          %cst_7 = arith.constant dense<1.250000e-01> : vector<256x128xf32>
          %19 = arith.mulf %18, %cst_7 : vector<256x128xf32>
          %cst_8 = arith.constant dense<0xFF800000> : vector<256xf32>
          %20 = vector.multi_reduction <maximumf>, %19, %cst_8 [1] : vector<256x128xf32> to vector<256xf32>
          %21 = vector.shape_cast %20 : vector<256xf32> to vector<256x1xf32>
          %22 = vector.broadcast %21 : vector<256x1xf32> to vector<256x128xf32>
          %23 = arith.maximumf %13, %22 : vector<256x128xf32>
          %24 = arith.subf %19, %23 : vector<256x128xf32>
          %25 = math.exp %24 : vector<256x128xf32>
          %26 = arith.subf %13, %23 : vector<256x128xf32>
          %27 = math.exp %26 : vector<256x128xf32>
          %28 = arith.mulf %27, %14 : vector<256x128xf32>
          %cst_9 = arith.constant dense<0.000000e+00> : vector<256xf32>
          %29 = vector.multi_reduction <add>, %25, %cst_9 [1] : vector<256x128xf32> to vector<256xf32>
          %30 = vector.shape_cast %29 : vector<256xf32> to vector<256x1xf32>
          %31 = vector.broadcast %30 : vector<256x1xf32> to vector<256x128xf32>
          %32 = arith.addf %28, %31 : vector<256x128xf32>
          %33 = arith.mulf %27, %15 : vector<256x128xf32>
          %34 = arith.truncf %25 : vector<256x128xf32> to vector<256x128xbf16>
          %c0_10 = arith.constant 0 : index
          %c0_11 = arith.constant 0 : index
          %c0_12 = arith.constant 0 : index
          %c0_13 = arith.constant 0 : index
          %35 = vector.load %arg6[%c0_10, %c0_11, %c0_12, %c0_13] : memref<1x1x256x128xbf16>, vector<1x1x128x128xbf16>
          %36 = vector.shape_cast %35 : vector<1x1x128x128xbf16> to vector<128x128xbf16>
          %cst_14 = arith.constant dense<0.000000e+00> : vector<256x128xf32>
          %37 = "flywheel.matmul"(%34, %36, %cst_14) {transpose_rhs = false} : (vector<256x128xbf16>, vector<128x128xbf16>, vector<256x128xf32>) -> vector<256x128xf32>
          %38 = arith.addf %33, %37 : vector<256x128xf32>
          %c0_15 = arith.constant 0 : index
          %c0_16 = arith.constant 0 : index
          %c128 = arith.constant 128 : index
          %c0_17 = arith.constant 0 : index
          %39 = vector.load %arg5[%c0_15, %c0_16, %c128, %c0_17] : memref<1x1x256x128xbf16>, vector<1x1x128x128xbf16>
          %40 = vector.shape_cast %39 : vector<1x1x128x128xbf16> to vector<128x128xbf16>
          %cst_18 = arith.constant dense<0.000000e+00> : vector<256x128xf32>
          %41 = "flywheel.matmul"(%12, %40, %cst_18) {transpose_rhs = true} : (vector<256x128xbf16>, vector<128x128xbf16>, vector<256x128xf32>) -> vector<256x128xf32>
          %cst_19 = arith.constant dense<1.250000e-01> : vector<256x128xf32>
          %42 = arith.mulf %41, %cst_19 : vector<256x128xf32>
          %cst_20 = arith.constant dense<0xFF800000> : vector<256xf32>
          %43 = vector.multi_reduction <maximumf>, %42, %cst_20 [1] : vector<256x128xf32> to vector<256xf32>
          %44 = vector.shape_cast %43 : vector<256xf32> to vector<256x1xf32>
          %45 = vector.broadcast %44 : vector<256x1xf32> to vector<256x128xf32>
          %46 = arith.maximumf %23, %45 : vector<256x128xf32>
          %47 = arith.subf %42, %46 : vector<256x128xf32>
          %48 = math.exp %47 : vector<256x128xf32>
          %49 = arith.subf %23, %46 : vector<256x128xf32>
          %50 = math.exp %49 : vector<256x128xf32>
          %51 = arith.mulf %50, %32 : vector<256x128xf32>
          %cst_21 = arith.constant dense<0.000000e+00> : vector<256xf32>
          %52 = vector.multi_reduction <add>, %48, %cst_21 [1] : vector<256x128xf32> to vector<256xf32>
          %53 = vector.shape_cast %52 : vector<256xf32> to vector<256x1xf32>
          %54 = vector.broadcast %53 : vector<256x1xf32> to vector<256x128xf32>
          %55 = arith.addf %51, %54 : vector<256x128xf32>
          %56 = arith.mulf %50, %38 : vector<256x128xf32>
          %57 = arith.truncf %48 : vector<256x128xf32> to vector<256x128xbf16>
          %c0_22 = arith.constant 0 : index
          %c0_23 = arith.constant 0 : index
          %c128_24 = arith.constant 128 : index
          %c0_25 = arith.constant 0 : index
          %58 = vector.load %arg6[%c0_22, %c0_23, %c128_24, %c0_25] : memref<1x1x256x128xbf16>, vector<1x1x128x128xbf16>
          %59 = vector.shape_cast %58 : vector<1x1x128x128xbf16> to vector<128x128xbf16>
          %cst_26 = arith.constant dense<0.000000e+00> : vector<256x128xf32>
          %60 = "flywheel.matmul"(%57, %59, %cst_26) {transpose_rhs = false} : (vector<256x128xbf16>, vector<128x128xbf16>, vector<256x128xf32>) -> vector<256x128xf32>
          %61 = arith.addf %56, %60 : vector<256x128xf32>
          "tpu.vector_store"(%55, %arg9, %c0, %c0) {add = false, operandSegmentSizes = array<i32: 1, 1, 2, 0>, strides = array<i32>} : (vector<256x128xf32>, memref<256x128xf32>, index, index) -> ()
          "tpu.vector_store"(%61, %arg10, %c0, %c0) {add = false, operandSegmentSizes = array<i32: 1, 1, 2, 0>, strides = array<i32>} : (vector<256x128xf32>, memref<256x128xf32>, index, index) -> ()
          "tpu.vector_store"(%46, %arg8, %c0, %c0) {add = false, operandSegmentSizes = array<i32: 1, 1, 2, 0>, strides = array<i32>} : (vector<256x128xf32>, memref<256x128xf32>, index, index) -> ()
        }
      }
      %c3_i32 = arith.constant 3 : i32
      %9 = arith.cmpi eq, %arg3, %c3_i32 : i32
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
      %c3_i32 = arith.constant 3 : i32
      %0 = arith.addi %arg2, %c1_i32 : i32
      %1 = arith.muli %0, %c256_i32 : i32
      %2 = arith.addi %1, %c-1_i32 : i32
      %3 = arith.divsi %2, %c256_i32_0 : i32
      %4 = arith.minsi %3, %c3_i32 : i32
      %5 = arith.minsi %arg3, %4 : i32
      %6 = arith.addi %5, %c0_i32 : i32
      return %arg0, %arg1, %6, %c0_i32 : i32, i32, i32, i32
    }
  }
}

