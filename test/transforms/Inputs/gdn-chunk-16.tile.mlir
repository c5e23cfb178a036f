// Tile IR of Gated DeltaNet, bf16, chunks of 16: one value head and one chunk per grid step. Made by: flywheel-opt test/Inputs/gdn-kernel-bf16.mlir --pass-pipeline='builtin.module(flywheel-layout,flywheel-tile{chunk=16 gdn-heads=1 gdn-chunks-per-step=1})' | mlir-opt-22 --allow-unregistered-dialect
module {
  func.func @main(%arg0: tensor<1x128x1x128xbf16>, %arg1: tensor<1x128x1x128xbf16>, %arg2: tensor<1x128x2x128xbf16>, %arg3: tensor<1x128x2xf32>, %arg4: tensor<1x128x2xf32>) -> (tensor<1x128x2x128xbf16>, tensor<1x2x128x128xf32>) {
    %0 = "stablehlo.reshape"(%arg0) : (tensor<1x128x1x128xbf16>) -> tensor<1x1x128x128xbf16>
    %1 = "stablehlo.reshape"(%arg1) : (tensor<1x128x1x128xbf16>) -> tensor<1x1x128x128xbf16>
    %2 = "stablehlo.reshape"(%arg2) : (tensor<1x128x2x128xbf16>) -> tensor<8x16x2x128xbf16>
    %3 = "stablehlo.transpose"(%2) <{permutation = array<i64: 2, 0, 1, 3>}> : (tensor<8x16x2x128xbf16>) -> tensor<2x8x16x128xbf16>
    %4 = "stablehlo.reshape"(%3) : (tensor<2x8x16x128xbf16>) -> tensor<1x2x128x128xbf16>
    %5 = "stablehlo.reshape"(%arg3) : (tensor<1x128x2xf32>) -> tensor<8x16x2xf32>
    %6 = "stablehlo.transpose"(%5) <{permutation = array<i64: 2, 0, 1>}> : (tensor<8x16x2xf32>) -> tensor<2x8x16xf32>
    %7 = "stablehlo.reshape"(%6) : (tensor<2x8x16xf32>) -> tensor<1x2x8x1x16xf32>
    %8 = "stablehlo.iota"() <{iota_dimension = 0 : i64}> : () -> tensor<16x16xi32>
    %9 = "stablehlo.iota"() <{iota_dimension = 1 : i64}> : () -> tensor<16x16xi32>
    %10 = "stablehlo.compare"(%8, %9) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LE>}> : (tensor<16x16xi32>, tensor<16x16xi32>) -> tensor<16x16xi1>
    %11 = "stablehlo.convert"(%10) : (tensor<16x16xi1>) -> tensor<16x16xf32>
    %12 = "stablehlo.dot_general"(%7, %11) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [4], rhs_contracting_dimensions = [0]>, precision_config = [#stablehlo<precision HIGHEST>, #stablehlo<precision HIGHEST>]}> : (tensor<1x2x8x1x16xf32>, tensor<16x16xf32>) -> tensor<1x2x8x1x16xf32>
    %13 = "stablehlo.slice"(%12) <{limit_indices = array<i64: 1, 2, 8, 1, 16>, start_indices = array<i64: 0, 0, 0, 0, 15>, strides = array<i64: 1, 1, 1, 1, 1>}> : (tensor<1x2x8x1x16xf32>) -> tensor<1x2x8x1x1xf32>
    %14 = "stablehlo.broadcast_in_dim"(%13) <{broadcast_dimensions = array<i64: 0, 1, 2, 3, 4>}> : (tensor<1x2x8x1x1xf32>) -> tensor<1x2x8x1x16xf32>
    %15 = "stablehlo.concatenate"(%12, %14) <{dimension = 3 : i64}> : (tensor<1x2x8x1x16xf32>, tensor<1x2x8x1x16xf32>) -> tensor<1x2x8x2x16xf32>
    %16 = "stablehlo.reshape"(%arg4) : (tensor<1x128x2xf32>) -> tensor<8x16x2xf32>
    %17 = "stablehlo.transpose"(%16) <{permutation = array<i64: 2, 0, 1>}> : (tensor<8x16x2xf32>) -> tensor<2x8x16xf32>
    %18 = "stablehlo.reshape"(%17) : (tensor<2x8x16xf32>) -> tensor<1x2x8x1x16xf32>
    %19:2 = "flywheel.gated_delta_kernel"(%0, %1, %4, %15, %18) {bytes_accessed = 396288 : i64, flops = 30408704 : i64, kernel = @flywheel_kernel_0, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 0, 0>, transcendentals = 4864 : i64} : (tensor<1x1x128x128xbf16>, tensor<1x1x128x128xbf16>, tensor<1x2x128x128xbf16>, tensor<1x2x8x2x16xf32>, tensor<1x2x8x1x16xf32>) -> (tensor<1x128x256xbf16>, tensor<1x2x128x128xf32>)
    %20 = "stablehlo.reshape"(%19#0) : (tensor<1x128x256xbf16>) -> tensor<1x128x2x128xbf16>
    return %20, %19#1 : tensor<1x128x2x128xbf16>, tensor<1x2x128x128xf32>
  }
  module @flywheel_kernel_0 attributes {stable_mosaic.version = 15 : i64} {
    func.func @gated_delta_kernel(%arg0: i32, %arg1: i32, %arg2: i32, %arg3: memref<1x1x16x128xbf16>, %arg4: memref<1x1x16x128xbf16>, %arg5: memref<1x1x16x128xbf16>, %arg6: memref<1x1x1x2x16xf32>, %arg7: memref<1x1x1x1x16xf32>, %arg8: memref<1x16x128xbf16>, %arg9: memref<1x1x128x128xf32>, %arg10: memref<1x128x128xf32>) attributes {dimension_semantics = [#tpu.dimension_semantics<parallel>, #tpu.dimension_semantics<parallel>, #tpu.dimension_semantics<arbitrary>], iteration_bounds = array<i64: 1, 2, 8>, scalar_prefetch = 0 : i64, scratch_operands = 1 : i64, tpu.core_type = #tpu.core_type<tc>, window_params = [{transform_indices = @key_chunks, window_bounds = array<i64: 1, 1, 16, 128>}, {transform_indices = @key_chunks, window_bounds = array<i64: 1, 1, 16, 128>}, {transform_indices = @value_chunks, window_bounds = array<i64: 1, 1, 16, 128>}, {transform_indices = @gate_chunks, window_bounds = array<i64: 1, 1, 1, 2, 16>}, {transform_indices = @gate_chunks, window_bounds = array<i64: 1, 1, 1, 1, 16>}, {transform_indices = @value_tokens, window_bounds = array<i64: 1, 16, 128>}, {transform_indices = @states, window_bounds = array<i64: 1, 1, 128, 128>}]} {
      %c0_i32 = arith.constant 0 : i32
      %0 = arith.cmpi eq, %arg2, %c0_i32 : i32
      scf.if %0 {
        %cst_50 = arith.constant dense<0.000000e+00> : vector<128x128xf32>
        %c0_51 = arith.constant 0 : index
        %c0_52 = arith.constant 0 : index
        %c0_53 = arith.constant 0 : index
        %91 = vector.shape_cast %cst_50 : vector<128x128xf32> to vector<1x128x128xf32>
        "tpu.vector_store"(%91, %arg10, %c0_51, %c0_52, %c0_53) {add = false, operandSegmentSizes = array<i32: 1, 1, 3, 0>, strides = array<i32>} : (vector<1x128x128xf32>, memref<1x128x128xf32>, index, index, index) -> ()
      }
      %1 = "tpu.iota"() {dimensions = array<i32: 0>} : () -> vector<16x16xi32>
      %2 = "tpu.iota"() {dimensions = array<i32: 1>} : () -> vector<16x16xi32>
      %3 = arith.cmpi sge, %1, %2 : vector<16x16xi32>
      %4 = arith.cmpi sgt, %1, %2 : vector<16x16xi32>
      %5 = arith.cmpi eq, %1, %2 : vector<16x16xi32>
      %cst = arith.constant dense<1.000000e+00> : vector<16x16xf32>
      %cst_0 = arith.constant dense<0.000000e+00> : vector<16x16xf32>
      %6 = arith.select %5, %cst, %cst_0 : vector<16x16xi1>, vector<16x16xf32>
      %cst_1 = arith.constant dense<0xFF800000> : vector<16x16xf32>
      %cst_2 = arith.constant dense<0.0883883461> : vector<16x16xf32>
      %cst_3 = arith.constant dense<0.0883883461> : vector<1x16xf32>
      %c0 = arith.constant 0 : index
      %c0_4 = arith.constant 0 : index
      %c0_5 = arith.constant 0 : index
      %7 = vector.load %arg10[%c0, %c0_4, %c0_5] : memref<1x128x128xf32>, vector<1x128x128xf32>
      %8 = vector.shape_cast %7 : vector<1x128x128xf32> to vector<128x128xf32>
      %c0_6 = arith.constant 0 : index
      %c0_7 = arith.constant 0 : index
      %c0_8 = arith.constant 0 : index
      %c0_9 = arith.constant 0 : index
      %9 = vector.load %arg3[%c0_6, %c0_7, %c0_8, %c0_9] : memref<1x1x16x128xbf16>, vector<1x1x16x128xbf16>
      %c0_10 = arith.constant 0 : index
      %c0_11 = arith.constant 0 : index
      %c0_12 = arith.constant 0 : index
      %c0_13 = arith.constant 0 : index
      %10 = vector.load %arg4[%c0_10, %c0_11, %c0_12, %c0_13] : memref<1x1x16x128xbf16>, vector<1x1x16x128xbf16>
      %11 = vector.broadcast %9 : vector<1x1x16x128xbf16> to vector<1x1x16x128xbf16>
      %12 = vector.shape_cast %11 : vector<1x1x16x128xbf16> to vector<16x128xbf16>
      %13 = vector.broadcast %10 : vector<1x1x16x128xbf16> to vector<1x1x16x128xbf16>
      %14 = vector.shape_cast %13 : vector<1x1x16x128xbf16> to vector<16x128xbf16>
      %c0_14 = arith.constant 0 : index
      %c0_15 = arith.constant 0 : index
      %c0_16 = arith.constant 0 : index
      %c0_17 = arith.constant 0 : index
      %15 = vector.load %arg4[%c0_14, %c0_15, %c0_16, %c0_17] : memref<1x1x16x128xbf16>, vector<1x1x16x128xbf16>
      %16 = vector.shape_cast %15 : vector<1x1x16x128xbf16> to vector<16x128xbf16>
      %17 = arith.extf %16 : vector<16x128xbf16> to vector<16x128xf32>
      %18 = vector.transpose %17, [1, 0] : vector<16x128xf32> to vector<128x16xf32>
      %cst_18 = arith.constant dense<0.000000e+00> : vector<16x16xf32>
      %19 = "flywheel.matmul"(%14, %14, %cst_18) {transpose_rhs = true} : (vector<16x128xbf16>, vector<16x128xbf16>, vector<16x16xf32>) -> vector<16x16xf32>
      %cst_19 = arith.constant dense<0.000000e+00> : vector<16x16xf32>
      %20 = "flywheel.matmul"(%12, %14, %cst_19) {transpose_rhs = true} : (vector<16x128xbf16>, vector<16x128xbf16>, vector<16x16xf32>) -> vector<16x16xf32>
      %21 = arith.extf %12 : vector<16x128xbf16> to vector<16x128xf32>
      %22 = arith.extf %14 : vector<16x128xbf16> to vector<16x128xf32>
      %c0_20 = arith.constant 0 : index
      %c0_21 = arith.constant 0 : index
      %c0_22 = arith.constant 0 : index
      %c0_23 = arith.constant 0 : index
      %23 = vector.load %arg5[%c0_20, %c0_21, %c0_22, %c0_23] : memref<1x1x16x128xbf16>, vector<1x1x16x128xbf16>
      %24 = vector.shape_cast %23 : vector<1x1x16x128xbf16> to vector<16x128xbf16>
      %c0_24 = arith.constant 0 : index
      %c0_25 = arith.constant 0 : index
      %c0_26 = arith.constant 0 : index
      %c0_27 = arith.constant 0 : index
      %c0_28 = arith.constant 0 : index
      %25 = vector.load %arg6[%c0_24, %c0_25, %c0_26, %c0_27, %c0_28] : memref<1x1x1x2x16xf32>, vector<1x1x1x1x16xf32>
      %26 = vector.shape_cast %25 : vector<1x1x1x1x16xf32> to vector<1x16xf32>
      %c0_29 = arith.constant 0 : index
      %c0_30 = arith.constant 0 : index
      %c0_31 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c0_32 = arith.constant 0 : index
      %27 = vector.load %arg6[%c0_29, %c0_30, %c0_31, %c1, %c0_32] : memref<1x1x1x2x16xf32>, vector<1x1x1x1x16xf32>
      %28 = vector.shape_cast %27 : vector<1x1x1x1x16xf32> to vector<1x16xf32>
      %c0_33 = arith.constant 0 : index
      %c0_34 = arith.constant 0 : index
      %c0_35 = arith.constant 0 : index
      %c0_36 = arith.constant 0 : index
      %c0_37 = arith.constant 0 : index
      %29 = vector.load %arg7[%c0_33, %c0_34, %c0_35, %c0_36, %c0_37] : memref<1x1x1x1x16xf32>, vector<1x1x1x1x16xf32>
      %30 = vector.shape_cast %29 : vector<1x1x1x1x16xf32> to vector<1x16xf32>
      %31 = math.exp %26 : vector<1x16xf32>
      %32 = arith.subf %28, %26 : vector<1x16xf32>
      %33 = math.exp %32 : vector<1x16xf32>
      %34 = math.exp %28 : vector<1x16xf32>
      %35 = arith.mulf %30, %31 : vector<1x16xf32>
      %36 = arith.mulf %31, %cst_3 : vector<1x16xf32>
      %37 = vector.broadcast %26 : vector<1x16xf32> to vector<16x16xf32>
      %38 = vector.transpose %37, [1, 0] : vector<16x16xf32> to vector<16x16xf32>
      %39 = vector.broadcast %26 : vector<1x16xf32> to vector<16x16xf32>
      %40 = arith.subf %38, %39 : vector<16x16xf32>
      %41 = arith.select %3, %40, %cst_1 : vector<16x16xi1>, vector<16x16xf32>
      %42 = math.exp %41 : vector<16x16xf32>
      %43 = vector.broadcast %30 : vector<1x16xf32> to vector<16x16xf32>
      %44 = vector.transpose %43, [1, 0] : vector<16x16xf32> to vector<16x16xf32>
      %45 = arith.mulf %19, %42 : vector<16x16xf32>
      %46 = arith.mulf %45, %44 : vector<16x16xf32>
      %47 = arith.select %4, %46, %cst_0 : vector<16x16xi1>, vector<16x16xf32>
      %c0_38 = arith.constant 0 : index
      %c15 = arith.constant 15 : index
      %c1_39 = arith.constant 1 : index
      %48 = scf.for %arg11 = %c0_38 to %c15 step %c1_39 iter_args(%arg12 = %6) -> (vector<16x16xf32>) {
        %cst_50 = arith.constant dense<0.000000e+00> : vector<16x16xf32>
        %91 = "flywheel.matmul"(%47, %arg12, %cst_50) {precision = "bf16x3", transpose_rhs = false} : (vector<16x16xf32>, vector<16x16xf32>, vector<16x16xf32>) -> vector<16x16xf32>
        %92 = arith.subf %6, %91 : vector<16x16xf32>
        scf.yield %92 : vector<16x16xf32>
      }
      %49 = arith.extf %24 : vector<16x128xbf16> to vector<16x128xf32>
      %50 = vector.broadcast %30 : vector<1x16xf32> to vector<128x16xf32>
      %51 = vector.transpose %50, [1, 0] : vector<128x16xf32> to vector<16x128xf32>
      %52 = arith.mulf %51, %49 : vector<16x128xf32>
      %53 = vector.broadcast %35 : vector<1x16xf32> to vector<128x16xf32>
      %54 = vector.transpose %53, [1, 0] : vector<128x16xf32> to vector<16x128xf32>
      %55 = arith.mulf %54, %22 : vector<16x128xf32>
      %56 = "tpu.concatenate"(%52, %55) {dimension = 1 : i32} : (vector<16x128xf32>, vector<16x128xf32>) -> vector<16x256xf32>
      %cst_40 = arith.constant dense<0.000000e+00> : vector<16x256xf32>
      %57 = "flywheel.matmul"(%48, %56, %cst_40) {precision = "bf16x3", transpose_rhs = false} : (vector<16x16xf32>, vector<16x256xf32>, vector<16x256xf32>) -> vector<16x256xf32>
      %58 = vector.extract_strided_slice %57 {offsets = [0, 0], sizes = [16, 128], strides = [1, 1]} : vector<16x256xf32> to vector<16x128xf32>
      %59 = vector.extract_strided_slice %57 {offsets = [0, 128], sizes = [16, 128], strides = [1, 1]} : vector<16x256xf32> to vector<16x128xf32>
      %60 = vector.broadcast %36 : vector<1x16xf32> to vector<128x16xf32>
      %61 = vector.transpose %60, [1, 0] : vector<128x16xf32> to vector<16x128xf32>
      %62 = arith.mulf %61, %21 : vector<16x128xf32>
      %63 = vector.broadcast %33 : vector<1x16xf32> to vector<128x16xf32>
      %64 = vector.transpose %63, [1, 0] : vector<128x16xf32> to vector<16x128xf32>
      %65 = vector.broadcast %34 : vector<1x16xf32> to vector<128x16xf32>
      %66 = vector.transpose %65, [1, 0] : vector<128x16xf32> to vector<16x128xf32>
      %67 = arith.mulf %20, %42 : vector<16x16xf32>
      %68 = arith.mulf %67, %cst_2 : vector<16x16xf32>
      %69 = vector.extract_strided_slice %59 {offsets = [0, 0], sizes = [16, 128], strides = [1, 1]} : vector<16x128xf32> to vector<16x128xf32>
      %70 = vector.extract_strided_slice %62 {offsets = [0, 0], sizes = [16, 128], strides = [1, 1]} : vector<16x128xf32> to vector<16x128xf32>
      %71 = "tpu.concatenate"(%69, %70) {dimension = 0 : i32} : (vector<16x128xf32>, vector<16x128xf32>) -> vector<32x128xf32>
      %cst_41 = arith.constant dense<0.000000e+00> : vector<32x128xf32>
      %72 = "flywheel.matmul"(%71, %8, %cst_41) {precision = "bf16x3", transpose_rhs = false} : (vector<32x128xf32>, vector<128x128xf32>, vector<32x128xf32>) -> vector<32x128xf32>
      %73 = vector.extract_strided_slice %72 {offsets = [16, 0], sizes = [16, 128], strides = [1, 1]} : vector<32x128xf32> to vector<16x128xf32>
      %74 = vector.extract_strided_slice %72 {offsets = [0, 0], sizes = [16, 128], strides = [1, 1]} : vector<32x128xf32> to vector<16x128xf32>
      %75 = vector.extract_strided_slice %58 {offsets = [0, 0], sizes = [16, 128], strides = [1, 1]} : vector<16x128xf32> to vector<16x128xf32>
      %76 = arith.subf %75, %74 : vector<16x128xf32>
      %cst_42 = arith.constant dense<0.000000e+00> : vector<16x128xf32>
      %77 = "flywheel.matmul"(%68, %76, %cst_42) {precision = "bf16x3", transpose_rhs = false} : (vector<16x16xf32>, vector<16x128xf32>, vector<16x128xf32>) -> vector<16x128xf32>
      %78 = arith.addf %73, %77 : vector<16x128xf32>
      %79 = vector.extract_strided_slice %78 {offsets = [0, 0], sizes = [16, 128], strides = [1, 1]} : vector<16x128xf32> to vector<16x128xf32>
      %80 = arith.truncf %79 : vector<16x128xf32> to vector<16x128xbf16>
      %c0_43 = arith.constant 0 : index
      %c0_44 = arith.constant 0 : index
      %c0_45 = arith.constant 0 : index
      %81 = vector.shape_cast %80 : vector<16x128xbf16> to vector<1x16x128xbf16>
      "tpu.vector_store"(%81, %arg8, %c0_43, %c0_44, %c0_45) {add = false, operandSegmentSizes = array<i32: 1, 1, 3, 0>, strides = array<i32>} : (vector<1x16x128xbf16>, memref<1x16x128xbf16>, index, index, index) -> ()
      %82 = arith.mulf %64, %76 : vector<16x128xf32>
      %83 = vector.extract_strided_slice %82 {offsets = [0, 0], sizes = [16, 128], strides = [1, 1]} : vector<16x128xf32> to vector<16x128xf32>
      %cst_46 = arith.constant dense<0.000000e+00> : vector<128x128xf32>
      %84 = "flywheel.matmul"(%18, %83, %cst_46) {precision = "bf16x3", transpose_rhs = false} : (vector<128x16xf32>, vector<16x128xf32>, vector<128x128xf32>) -> vector<128x128xf32>
      %85 = vector.extract_strided_slice %66 {offsets = [0, 0], sizes = [1, 128], strides = [1, 1]} : vector<16x128xf32> to vector<1x128xf32>
      %86 = vector.broadcast %85 : vector<1x128xf32> to vector<128x128xf32>
      %87 = arith.mulf %86, %8 : vector<128x128xf32>
      %88 = arith.addf %87, %84 : vector<128x128xf32>
      %c0_47 = arith.constant 0 : index
      %c0_48 = arith.constant 0 : index
      %c0_49 = arith.constant 0 : index
      %89 = vector.shape_cast %88 : vector<128x128xf32> to vector<1x128x128xf32>
      "tpu.vector_store"(%89, %arg10, %c0_47, %c0_48, %c0_49) {add = false, operandSegmentSizes = array<i32: 1, 1, 3, 0>, strides = array<i32>} : (vector<1x128x128xf32>, memref<1x128x128xf32>, index, index, index) -> ()
      %c7_i32 = arith.constant 7 : i32
      %90 = arith.cmpi eq, %arg2, %c7_i32 : i32
      scf.if %90 {
        %c0_50 = arith.constant 0 : index
        %c0_51 = arith.constant 0 : index
        %c0_52 = arith.constant 0 : index
        %c0_53 = arith.constant 0 : index
        %91 = vector.shape_cast %88 : vector<128x128xf32> to vector<1x1x128x128xf32>
        "tpu.vector_store"(%91, %arg9, %c0_50, %c0_51, %c0_52, %c0_53) {add = false, operandSegmentSizes = array<i32: 1, 1, 4, 0>, strides = array<i32>} : (vector<1x1x128x128xf32>, memref<1x1x128x128xf32>, index, index, index, index) -> ()
      }
      return
    }
    func.func @key_chunks(%arg0: i32, %arg1: i32, %arg2: i32) -> (i32, i32, i32, i32) {
      %c0_i32 = arith.constant 0 : i32
      %c1_i32 = arith.constant 1 : i32
      %c2_i32 = arith.constant 2 : i32
      %c1_i32_0 = arith.constant 1 : i32
      %0 = arith.muli %arg1, %c1_i32 : i32
      %1 = arith.divsi %0, %c2_i32 : i32
      %2 = arith.divsi %1, %c1_i32_0 : i32
      return %arg0, %2, %arg2, %c0_i32 : i32, i32, i32, i32
    }
    func.func @value_tokens(%arg0: i32, %arg1: i32, %arg2: i32) -> (i32, i32, i32) {
      %c0_i32 = arith.constant 0 : i32
      return %arg0, %arg2, %arg1 : i32, i32, i32
    }
    func.func @value_chunks(%arg0: i32, %arg1: i32, %arg2: i32) -> (i32, i32, i32, i32) {
      %c0_i32 = arith.constant 0 : i32
      return %arg0, %arg1, %arg2, %c0_i32 : i32, i32, i32, i32
    }
    func.func @gate_chunks(%arg0: i32, %arg1: i32, %arg2: i32) -> (i32, i32, i32, i32, i32) {
      %c0_i32 = arith.constant 0 : i32
      return %arg0, %arg1, %arg2, %c0_i32, %c0_i32 : i32, i32, i32, i32, i32
    }
    func.func @states(%arg0: i32, %arg1: i32, %arg2: i32) -> (i32, i32, i32, i32) {
      %c0_i32 = arith.constant 0 : i32
      return %arg0, %arg1, %c0_i32, %c0_i32 : i32, i32, i32, i32
    }
  }
}

