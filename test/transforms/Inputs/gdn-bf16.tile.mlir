// Tile IR of Gated DeltaNet, bf16 (two value heads, two chunks of 64): both heads and both chunks in one grid step. Made by: flywheel-opt test/Inputs/gdn-kernel-bf16.mlir --pass-pipeline='builtin.module(flywheel-layout,flywheel-tile)' | mlir-opt-22 --allow-unregistered-dialect
module {
  func.func @main(%arg0: tensor<1x128x1x128xbf16>, %arg1: tensor<1x128x1x128xbf16>, %arg2: tensor<1x128x2x128xbf16>, %arg3: tensor<1x128x2xf32>, %arg4: tensor<1x128x2xf32>) -> (tensor<1x128x2x128xbf16>, tensor<1x2x128x128xf32>) {
    %0 = "stablehlo.reshape"(%arg0) : (tensor<1x128x1x128xbf16>) -> tensor<1x1x128x128xbf16>
    %1 = "stablehlo.reshape"(%arg1) : (tensor<1x128x1x128xbf16>) -> tensor<1x1x128x128xbf16>
    %2 = "stablehlo.reshape"(%arg2) : (tensor<1x128x2x128xbf16>) -> tensor<2x64x2x128xbf16>
    %3 = "stablehlo.transpose"(%2) <{permutation = array<i64: 2, 0, 1, 3>}> : (tensor<2x64x2x128xbf16>) -> tensor<2x2x64x128xbf16>
    %4 = "stablehlo.reshape"(%3) : (tensor<2x2x64x128xbf16>) -> tensor<1x2x128x128xbf16>
    %5 = "stablehlo.reshape"(%arg3) : (tensor<1x128x2xf32>) -> tensor<2x64x2xf32>
    %6 = "stablehlo.transpose"(%5) <{permutation = array<i64: 0, 2, 1>}> : (tensor<2x64x2xf32>) -> tensor<2x2x64xf32>
    %7 = "stablehlo.reshape"(%6) : (tensor<2x2x64xf32>) -> tensor<1x1x2x1x128xf32>
    %8 = "stablehlo.reshape"(%7) : (tensor<1x1x2x1x128xf32>) -> tensor<1x1x2x2x64xf32>
    %9 = "stablehlo.iota"() <{iota_dimension = 0 : i64}> : () -> tensor<64x64xi32>
    %10 = "stablehlo.iota"() <{iota_dimension = 1 : i64}> : () -> tensor<64x64xi32>
    %11 = "stablehlo.compare"(%9, %10) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LE>}> : (tensor<64x64xi32>, tensor<64x64xi32>) -> tensor<64x64xi1>
    %12 = "stablehlo.convert"(%11) : (tensor<64x64xi1>) -> tensor<64x64xf32>
    %13 = "stablehlo.dot_general"(%8, %12) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [4], rhs_contracting_dimensions = [0]>, precision_config = [#stablehlo<precision HIGHEST>, #stablehlo<precision HIGHEST>]}> : (tensor<1x1x2x2x64xf32>, tensor<64x64xf32>) -> tensor<1x1x2x2x64xf32>
    %14 = "stablehlo.slice"(%13) <{limit_indices = array<i64: 1, 1, 2, 2, 64>, start_indices = array<i64: 0, 0, 0, 0, 63>, strides = array<i64: 1, 1, 1, 1, 1>}> : (tensor<1x1x2x2x64xf32>) -> tensor<1x1x2x2x1xf32>
    %15 = "stablehlo.broadcast_in_dim"(%14) <{broadcast_dimensions = array<i64: 0, 1, 2, 3, 4>}> : (tensor<1x1x2x2x1xf32>) -> tensor<1x1x2x2x64xf32>
    %16 = "stablehlo.reshape"(%13) : (tensor<1x1x2x2x64xf32>) -> tensor<1x1x2x1x128xf32>
    %17 = "stablehlo.reshape"(%15) : (tensor<1x1x2x2x64xf32>) -> tensor<1x1x2x1x128xf32>
    %18 = "stablehlo.concatenate"(%16, %17) <{dimension = 3 : i64}> : (tensor<1x1x2x1x128xf32>, tensor<1x1x2x1x128xf32>) -> tensor<1x1x2x2x128xf32>
    %19 = "stablehlo.reshape"(%arg4) : (tensor<1x128x2xf32>) -> tensor<2x64x2xf32>
    %20 = "stablehlo.transpose"(%19) <{permutation = array<i64: 0, 2, 1>}> : (tensor<2x64x2xf32>) -> tensor<2x2x64xf32>
    %21 = "stablehlo.reshape"(%20) : (tensor<2x2x64xf32>) -> tensor<1x1x2x1x128xf32>
    %22:2 = "flywheel.gated_delta_kernel"(%0, %1, %4, %18, %21) {bytes_accessed = 396288 : i64, flops = 46137344 : i64, kernel = @flywheel_kernel_0, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 0, 0>, transcendentals = 17152 : i64} : (tensor<1x1x128x128xbf16>, tensor<1x1x128x128xbf16>, tensor<1x2x128x128xbf16>, tensor<1x1x2x2x128xf32>, tensor<1x1x2x1x128xf32>) -> (tensor<1x128x256xbf16>, tensor<1x2x128x128xf32>)
    %23 = "stablehlo.reshape"(%22#0) : (tensor<1x128x256xbf16>) -> tensor<1x128x2x128xbf16>
    return %23, %22#1 : tensor<1x128x2x128xbf16>, tensor<1x2x128x128xf32>
  }
  module @flywheel_kernel_0 attributes {stable_mosaic.version = 15 : i64} {
    func.func @gated_delta_kernel(%arg0: i32, %arg1: i32, %arg2: i32, %arg3: memref<1x1x128x128xbf16>, %arg4: memref<1x1x128x128xbf16>, %arg5: memref<1x2x128x128xbf16>, %arg6: memref<1x1x2x2x128xf32>, %arg7: memref<1x1x2x1x128xf32>, %arg8: memref<1x128x256xbf16>, %arg9: memref<1x2x128x128xf32>, %arg10: memref<2x128x128xf32>) attributes {dimension_semantics = [#tpu.dimension_semantics<parallel>, #tpu.dimension_semantics<parallel>, #tpu.dimension_semantics<arbitrary>], iteration_bounds = array<i64: 1, 1, 1>, scalar_prefetch = 0 : i64, scratch_operands = 1 : i64, tpu.core_type = #tpu.core_type<tc>, window_params = [{transform_indices = @key_chunks, window_bounds = array<i64: 1, 1, 128, 128>}, {transform_indices = @key_chunks, window_bounds = array<i64: 1, 1, 128, 128>}, {transform_indices = @value_chunks, window_bounds = array<i64: 1, 2, 128, 128>}, {transform_indices = @gate_chunks, window_bounds = array<i64: 1, 1, 2, 2, 128>}, {transform_indices = @gate_chunks, window_bounds = array<i64: 1, 1, 2, 1, 128>}, {transform_indices = @value_tokens, window_bounds = array<i64: 1, 128, 256>}, {transform_indices = @states, window_bounds = array<i64: 1, 2, 128, 128>}]} {
      %c0_i32 = arith.constant 0 : i32
      %0 = arith.cmpi eq, %arg2, %c0_i32 : i32
      scf.if %0 {
        %cst_109 = arith.constant dense<0.000000e+00> : vector<128x128xf32>
        %c0_110 = arith.constant 0 : index
        %c0_111 = arith.constant 0 : index
        %c0_112 = arith.constant 0 : index
        %217 = vector.shape_cast %cst_109 : vector<128x128xf32> to vector<1x128x128xf32>
        "tpu.vector_store"(%217, %arg10, %c0_110, %c0_111, %c0_112) {add = false, operandSegmentSizes = array<i32: 1, 1, 3, 0>, strides = array<i32>} : (vector<1x128x128xf32>, memref<2x128x128xf32>, index, index, index) -> ()
        %cst_113 = arith.constant dense<0.000000e+00> : vector<128x128xf32>
        %c1_114 = arith.constant 1 : index
        %c0_115 = arith.constant 0 : index
        %c0_116 = arith.constant 0 : index
        %218 = vector.shape_cast %cst_113 : vector<128x128xf32> to vector<1x128x128xf32>
        "tpu.vector_store"(%218, %arg10, %c1_114, %c0_115, %c0_116) {add = false, operandSegmentSizes = array<i32: 1, 1, 3, 0>, strides = array<i32>} : (vector<1x128x128xf32>, memref<2x128x128xf32>, index, index, index) -> ()
      }
      %1 = "tpu.iota"() {dimensions = array<i32: 0>} : () -> vector<128x128xi32>
      %2 = "tpu.iota"() {dimensions = array<i32: 1>} : () -> vector<128x128xi32>
      %3 = arith.cmpi sge, %1, %2 : vector<128x128xi32>
      %4 = arith.cmpi sgt, %1, %2 : vector<128x128xi32>
      %5 = arith.cmpi eq, %1, %2 : vector<128x128xi32>
      %cst = arith.constant dense<64> : vector<128x128xi32>
      %6 = arith.divsi %1, %cst : vector<128x128xi32>
      %7 = arith.divsi %2, %cst : vector<128x128xi32>
      %8 = arith.cmpi eq, %6, %7 : vector<128x128xi32>
      %9 = arith.andi %3, %8 : vector<128x128xi1>
      %10 = arith.andi %4, %8 : vector<128x128xi1>
      %cst_0 = arith.constant dense<1.000000e+00> : vector<128x128xf32>
      %cst_1 = arith.constant dense<0.000000e+00> : vector<128x128xf32>
      %11 = arith.select %5, %cst_0, %cst_1 : vector<128x128xi1>, vector<128x128xf32>
      %cst_2 = arith.constant dense<0xFF800000> : vector<128x128xf32>
      %cst_3 = arith.constant dense<0.0883883461> : vector<128x128xf32>
      %cst_4 = arith.constant dense<0.0883883461> : vector<1x128xf32>
      %c0 = arith.constant 0 : index
      %c0_5 = arith.constant 0 : index
      %c0_6 = arith.constant 0 : index
      %12 = vector.load %arg10[%c0, %c0_5, %c0_6] : memref<2x128x128xf32>, vector<1x128x128xf32>
      %13 = vector.shape_cast %12 : vector<1x128x128xf32> to vector<128x128xf32>
      %c1 = arith.constant 1 : index
      %c0_7 = arith.constant 0 : index
      %c0_8 = arith.constant 0 : index
      %14 = vector.load %arg10[%c1, %c0_7, %c0_8] : memref<2x128x128xf32>, vector<1x128x128xf32>
      %15 = vector.shape_cast %14 : vector<1x128x128xf32> to vector<128x128xf32>
      %c0_9 = arith.constant 0 : index
      %c0_10 = arith.constant 0 : index
      %c0_11 = arith.constant 0 : index
      %c0_12 = arith.constant 0 : index
      %16 = vector.load %arg3[%c0_9, %c0_10, %c0_11, %c0_12] : memref<1x1x128x128xbf16>, vector<1x1x64x128xbf16>
      %c0_13 = arith.constant 0 : index
      %c0_14 = arith.constant 0 : index
      %c0_15 = arith.constant 0 : index
      %c0_16 = arith.constant 0 : index
      %17 = vector.load %arg4[%c0_13, %c0_14, %c0_15, %c0_16] : memref<1x1x128x128xbf16>, vector<1x1x64x128xbf16>
      %18 = vector.broadcast %16 : vector<1x1x64x128xbf16> to vector<1x2x64x128xbf16>
      %19 = vector.shape_cast %18 : vector<1x2x64x128xbf16> to vector<128x128xbf16>
      %20 = vector.broadcast %17 : vector<1x1x64x128xbf16> to vector<1x2x64x128xbf16>
      %21 = vector.shape_cast %20 : vector<1x2x64x128xbf16> to vector<128x128xbf16>
      %c0_17 = arith.constant 0 : index
      %c0_18 = arith.constant 0 : index
      %c0_19 = arith.constant 0 : index
      %c0_20 = arith.constant 0 : index
      %22 = vector.load %arg4[%c0_17, %c0_18, %c0_19, %c0_20] : memref<1x1x128x128xbf16>, vector<1x1x64x128xbf16>
      %23 = vector.shape_cast %22 : vector<1x1x64x128xbf16> to vector<64x128xbf16>
      %24 = arith.extf %23 : vector<64x128xbf16> to vector<64x128xf32>
      %25 = vector.transpose %24, [1, 0] : vector<64x128xf32> to vector<128x64xf32>
      %cst_21 = arith.constant dense<0.000000e+00> : vector<128x128xf32>
      %26 = "flywheel.matmul"(%21, %21, %cst_21) {transpose_rhs = true} : (vector<128x128xbf16>, vector<128x128xbf16>, vector<128x128xf32>) -> vector<128x128xf32>
      %cst_22 = arith.constant dense<0.000000e+00> : vector<128x128xf32>
      %27 = "flywheel.matmul"(%19, %21, %cst_22) {transpose_rhs = true} : (vector<128x128xbf16>, vector<128x128xbf16>, vector<128x128xf32>) -> vector<128x128xf32>
      %28 = arith.extf %19 : vector<128x128xbf16> to vector<128x128xf32>
      %29 = arith.extf %21 : vector<128x128xbf16> to vector<128x128xf32>
      %c0_23 = arith.constant 0 : index
      %c0_24 = arith.constant 0 : index
      %c0_25 = arith.constant 0 : index
      %c0_26 = arith.constant 0 : index
      %30 = vector.load %arg5[%c0_23, %c0_24, %c0_25, %c0_26] : memref<1x2x128x128xbf16>, vector<1x2x64x128xbf16>
      %31 = vector.shape_cast %30 : vector<1x2x64x128xbf16> to vector<128x128xbf16>
      %c0_27 = arith.constant 0 : index
      %c0_28 = arith.constant 0 : index
      %c0_29 = arith.constant 0 : index
      %c0_30 = arith.constant 0 : index
      %c0_31 = arith.constant 0 : index
      %32 = vector.load %arg6[%c0_27, %c0_28, %c0_29, %c0_30, %c0_31] : memref<1x1x2x2x128xf32>, vector<1x1x1x1x128xf32>
      %33 = vector.shape_cast %32 : vector<1x1x1x1x128xf32> to vector<1x128xf32>
      %c0_32 = arith.constant 0 : index
      %c0_33 = arith.constant 0 : index
      %c0_34 = arith.constant 0 : index
      %c1_35 = arith.constant 1 : index
      %c0_36 = arith.constant 0 : index
      %34 = vector.load %arg6[%c0_32, %c0_33, %c0_34, %c1_35, %c0_36] : memref<1x1x2x2x128xf32>, vector<1x1x1x1x128xf32>
      %35 = vector.shape_cast %34 : vector<1x1x1x1x128xf32> to vector<1x128xf32>
      %c0_37 = arith.constant 0 : index
      %c0_38 = arith.constant 0 : index
      %c0_39 = arith.constant 0 : index
      %c0_40 = arith.constant 0 : index
      %c0_41 = arith.constant 0 : index
      %36 = vector.load %arg7[%c0_37, %c0_38, %c0_39, %c0_40, %c0_41] : memref<1x1x2x1x128xf32>, vector<1x1x1x1x128xf32>
      %37 = vector.shape_cast %36 : vector<1x1x1x1x128xf32> to vector<1x128xf32>
      %38 = math.exp %33 : vector<1x128xf32>
      %39 = arith.subf %35, %33 : vector<1x128xf32>
      %40 = math.exp %39 : vector<1x128xf32>
      %41 = math.exp %35 : vector<1x128xf32>
      %42 = arith.mulf %37, %38 : vector<1x128xf32>
      %43 = arith.mulf %38, %cst_4 : vector<1x128xf32>
      %44 = vector.broadcast %33 : vector<1x128xf32> to vector<128x128xf32>
      %45 = vector.transpose %44, [1, 0] : vector<128x128xf32> to vector<128x128xf32>
      %46 = vector.broadcast %33 : vector<1x128xf32> to vector<128x128xf32>
      %47 = arith.subf %45, %46 : vector<128x128xf32>
      %48 = arith.select %9, %47, %cst_2 : vector<128x128xi1>, vector<128x128xf32>
      %49 = math.exp %48 : vector<128x128xf32>
      %50 = vector.broadcast %37 : vector<1x128xf32> to vector<128x128xf32>
      %51 = vector.transpose %50, [1, 0] : vector<128x128xf32> to vector<128x128xf32>
      %52 = arith.mulf %26, %49 : vector<128x128xf32>
      %53 = arith.mulf %52, %51 : vector<128x128xf32>
      %54 = arith.select %10, %53, %cst_1 : vector<128x128xi1>, vector<128x128xf32>
      %c0_42 = arith.constant 0 : index
      %c63 = arith.constant 63 : index
      %c1_43 = arith.constant 1 : index
      %55 = scf.for %arg11 = %c0_42 to %c63 step %c1_43 iter_args(%arg12 = %11) -> (vector<128x128xf32>) {
        %cst_109 = arith.constant dense<0.000000e+00> : vector<128x128xf32>
        %217 = "flywheel.matmul"(%54, %arg12, %cst_109) {precision = "bf16x3", transpose_rhs = false} : (vector<128x128xf32>, vector<128x128xf32>, vector<128x128xf32>) -> vector<128x128xf32>
        %218 = arith.subf %11, %217 : vector<128x128xf32>
        scf.yield %218 : vector<128x128xf32>
      }
      %56 = arith.extf %31 : vector<128x128xbf16> to vector<128x128xf32>
      %57 = vector.broadcast %37 : vector<1x128xf32> to vector<128x128xf32>
      %58 = vector.transpose %57, [1, 0] : vector<128x128xf32> to vector<128x128xf32>
      %59 = arith.mulf %58, %56 : vector<128x128xf32>
      %60 = vector.broadcast %42 : vector<1x128xf32> to vector<128x128xf32>
      %61 = vector.transpose %60, [1, 0] : vector<128x128xf32> to vector<128x128xf32>
      %62 = arith.mulf %61, %29 : vector<128x128xf32>
      %63 = "tpu.concatenate"(%59, %62) {dimension = 1 : i32} : (vector<128x128xf32>, vector<128x128xf32>) -> vector<128x256xf32>
      %cst_44 = arith.constant dense<0.000000e+00> : vector<128x256xf32>
      %64 = "flywheel.matmul"(%55, %63, %cst_44) {precision = "bf16x3", transpose_rhs = false} : (vector<128x128xf32>, vector<128x256xf32>, vector<128x256xf32>) -> vector<128x256xf32>
      %65 = vector.extract_strided_slice %64 {offsets = [0, 0], sizes = [128, 128], strides = [1, 1]} : vector<128x256xf32> to vector<128x128xf32>
      %66 = vector.extract_strided_slice %64 {offsets = [0, 128], sizes = [128, 128], strides = [1, 1]} : vector<128x256xf32> to vector<128x128xf32>
      %67 = vector.broadcast %43 : vector<1x128xf32> to vector<128x128xf32>
      %68 = vector.transpose %67, [1, 0] : vector<128x128xf32> to vector<128x128xf32>
      %69 = arith.mulf %68, %28 : vector<128x128xf32>
      %70 = vector.broadcast %40 : vector<1x128xf32> to vector<128x128xf32>
      %71 = vector.transpose %70, [1, 0] : vector<128x128xf32> to vector<128x128xf32>
      %72 = vector.broadcast %41 : vector<1x128xf32> to vector<128x128xf32>
      %73 = vector.transpose %72, [1, 0] : vector<128x128xf32> to vector<128x128xf32>
      %74 = arith.mulf %27, %49 : vector<128x128xf32>
      %75 = arith.mulf %74, %cst_3 : vector<128x128xf32>
      %76 = vector.extract_strided_slice %66 {offsets = [0, 0], sizes = [64, 128], strides = [1, 1]} : vector<128x128xf32> to vector<64x128xf32>
      %77 = vector.extract_strided_slice %69 {offsets = [0, 0], sizes = [64, 128], strides = [1, 1]} : vector<128x128xf32> to vector<64x128xf32>
      %78 = "tpu.concatenate"(%76, %77) {dimension = 0 : i32} : (vector<64x128xf32>, vector<64x128xf32>) -> vector<128x128xf32>
      %cst_45 = arith.constant dense<0.000000e+00> : vector<128x128xf32>
      %79 = "flywheel.matmul"(%78, %13, %cst_45) {precision = "bf16x3", transpose_rhs = false} : (vector<128x128xf32>, vector<128x128xf32>, vector<128x128xf32>) -> vector<128x128xf32>
      %80 = vector.extract_strided_slice %79 {offsets = [64, 0], sizes = [64, 128], strides = [1, 1]} : vector<128x128xf32> to vector<64x128xf32>
      %81 = vector.extract_strided_slice %79 {offsets = [0, 0], sizes = [64, 128], strides = [1, 1]} : vector<128x128xf32> to vector<64x128xf32>
      %82 = vector.extract_strided_slice %65 {offsets = [0, 0], sizes = [64, 128], strides = [1, 1]} : vector<128x128xf32> to vector<64x128xf32>
      %83 = arith.subf %82, %81 : vector<64x128xf32>
      %84 = vector.extract_strided_slice %66 {offsets = [64, 0], sizes = [64, 128], strides = [1, 1]} : vector<128x128xf32> to vector<64x128xf32>
      %85 = vector.extract_strided_slice %69 {offsets = [64, 0], sizes = [64, 128], strides = [1, 1]} : vector<128x128xf32> to vector<64x128xf32>
      %86 = "tpu.concatenate"(%84, %85) {dimension = 0 : i32} : (vector<64x128xf32>, vector<64x128xf32>) -> vector<128x128xf32>
      %cst_46 = arith.constant dense<0.000000e+00> : vector<128x128xf32>
      %87 = "flywheel.matmul"(%86, %15, %cst_46) {precision = "bf16x3", transpose_rhs = false} : (vector<128x128xf32>, vector<128x128xf32>, vector<128x128xf32>) -> vector<128x128xf32>
      %88 = vector.extract_strided_slice %87 {offsets = [64, 0], sizes = [64, 128], strides = [1, 1]} : vector<128x128xf32> to vector<64x128xf32>
      %89 = vector.extract_strided_slice %87 {offsets = [0, 0], sizes = [64, 128], strides = [1, 1]} : vector<128x128xf32> to vector<64x128xf32>
      %90 = vector.extract_strided_slice %65 {offsets = [64, 0], sizes = [64, 128], strides = [1, 1]} : vector<128x128xf32> to vector<64x128xf32>
      %91 = arith.subf %90, %89 : vector<64x128xf32>
      %92 = "tpu.concatenate"(%83, %91) {dimension = 0 : i32} : (vector<64x128xf32>, vector<64x128xf32>) -> vector<128x128xf32>
      %93 = "tpu.concatenate"(%80, %88) {dimension = 0 : i32} : (vector<64x128xf32>, vector<64x128xf32>) -> vector<128x128xf32>
      %cst_47 = arith.constant dense<0.000000e+00> : vector<128x128xf32>
      %94 = "flywheel.matmul"(%75, %92, %cst_47) {precision = "bf16x3", transpose_rhs = false} : (vector<128x128xf32>, vector<128x128xf32>, vector<128x128xf32>) -> vector<128x128xf32>
      %95 = arith.addf %93, %94 : vector<128x128xf32>
      %96 = vector.extract_strided_slice %95 {offsets = [0, 0], sizes = [64, 128], strides = [1, 1]} : vector<128x128xf32> to vector<64x128xf32>
      %97 = arith.truncf %96 : vector<64x128xf32> to vector<64x128xbf16>
      %c0_48 = arith.constant 0 : index
      %c0_49 = arith.constant 0 : index
      %c0_50 = arith.constant 0 : index
      %98 = vector.shape_cast %97 : vector<64x128xbf16> to vector<1x64x128xbf16>
      "tpu.vector_store"(%98, %arg8, %c0_48, %c0_49, %c0_50) {add = false, operandSegmentSizes = array<i32: 1, 1, 3, 0>, strides = array<i32>} : (vector<1x64x128xbf16>, memref<1x128x256xbf16>, index, index, index) -> ()
      %99 = vector.extract_strided_slice %95 {offsets = [64, 0], sizes = [64, 128], strides = [1, 1]} : vector<128x128xf32> to vector<64x128xf32>
      %100 = arith.truncf %99 : vector<64x128xf32> to vector<64x128xbf16>
      %c0_51 = arith.constant 0 : index
      %c0_52 = arith.constant 0 : index
      %c128 = arith.constant 128 : index
      %101 = vector.shape_cast %100 : vector<64x128xbf16> to vector<1x64x128xbf16>
      "tpu.vector_store"(%101, %arg8, %c0_51, %c0_52, %c128) {add = false, operandSegmentSizes = array<i32: 1, 1, 3, 0>, strides = array<i32>} : (vector<1x64x128xbf16>, memref<1x128x256xbf16>, index, index, index) -> ()
      %102 = arith.mulf %71, %92 : vector<128x128xf32>
      %103 = vector.extract_strided_slice %102 {offsets = [0, 0], sizes = [64, 128], strides = [1, 1]} : vector<128x128xf32> to vector<64x128xf32>
      %cst_53 = arith.constant dense<0.000000e+00> : vector<128x128xf32>
      %104 = "flywheel.matmul"(%25, %103, %cst_53) {precision = "bf16x3", transpose_rhs = false} : (vector<128x64xf32>, vector<64x128xf32>, vector<128x128xf32>) -> vector<128x128xf32>
      %105 = vector.extract_strided_slice %73 {offsets = [0, 0], sizes = [1, 128], strides = [1, 1]} : vector<128x128xf32> to vector<1x128xf32>
      %106 = vector.broadcast %105 : vector<1x128xf32> to vector<128x128xf32>
      %107 = arith.mulf %106, %13 : vector<128x128xf32>
      %108 = arith.addf %107, %104 : vector<128x128xf32>
      %109 = vector.extract_strided_slice %102 {offsets = [64, 0], sizes = [64, 128], strides = [1, 1]} : vector<128x128xf32> to vector<64x128xf32>
      %cst_54 = arith.constant dense<0.000000e+00> : vector<128x128xf32>
      %110 = "flywheel.matmul"(%25, %109, %cst_54) {precision = "bf16x3", transpose_rhs = false} : (vector<128x64xf32>, vector<64x128xf32>, vector<128x128xf32>) -> vector<128x128xf32>
      %111 = vector.extract_strided_slice %73 {offsets = [64, 0], sizes = [1, 128], strides = [1, 1]} : vector<128x128xf32> to vector<1x128xf32>
      %112 = vector.broadcast %111 : vector<1x128xf32> to vector<128x128xf32>
      %113 = arith.mulf %112, %15 : vector<128x128xf32>
      %114 = arith.addf %113, %110 : vector<128x128xf32>
      %c0_55 = arith.constant 0 : index
      %c0_56 = arith.constant 0 : index
      %c64 = arith.constant 64 : index
      %c0_57 = arith.constant 0 : index
      %115 = vector.load %arg3[%c0_55, %c0_56, %c64, %c0_57] : memref<1x1x128x128xbf16>, vector<1x1x64x128xbf16>
      %c0_58 = arith.constant 0 : index
      %c0_59 = arith.constant 0 : index
      %c64_60 = arith.constant 64 : index
      %c0_61 = arith.constant 0 : index
      %116 = vector.load %arg4[%c0_58, %c0_59, %c64_60, %c0_61] : memref<1x1x128x128xbf16>, vector<1x1x64x128xbf16>
      %117 = vector.broadcast %115 : vector<1x1x64x128xbf16> to vector<1x2x64x128xbf16>
      %118 = vector.shape_cast %117 : vector<1x2x64x128xbf16> to vector<128x128xbf16>
      %119 = vector.broadcast %116 : vector<1x1x64x128xbf16> to vector<1x2x64x128xbf16>
      %120 = vector.shape_cast %119 : vector<1x2x64x128xbf16> to vector<128x128xbf16>
      %c0_62 = arith.constant 0 : index
      %c0_63 = arith.constant 0 : index
      %c64_64 = arith.constant 64 : index
      %c0_65 = arith.constant 0 : index
      %121 = vector.load %arg4[%c0_62, %c0_63, %c64_64, %c0_65] : memref<1x1x128x128xbf16>, vector<1x1x64x128xbf16>
      %122 = vector.shape_cast %121 : vector<1x1x64x128xbf16> to vector<64x128xbf16>
      %123 = arith.extf %122 : vector<64x128xbf16> to vector<64x128xf32>
      %124 = vector.transpose %123, [1, 0] : vector<64x128xf32> to vector<128x64xf32>
      %cst_66 = arith.constant dense<0.000000e+00> : vector<128x128xf32>
      %125 = "flywheel.matmul"(%120, %120, %cst_66) {transpose_rhs = true} : (vector<128x128xbf16>, vector<128x128xbf16>, vector<128x128xf32>) -> vector<128x128xf32>
      %cst_67 = arith.constant dense<0.000000e+00> : vector<128x128xf32>
      %126 = "flywheel.matmul"(%118, %120, %cst_67) {transpose_rhs = true} : (vector<128x128xbf16>, vector<128x128xbf16>, vector<128x128xf32>) -> vector<128x128xf32>
      %127 = arith.extf %118 : vector<128x128xbf16> to vector<128x128xf32>
      %128 = arith.extf %120 : vector<128x128xbf16> to vector<128x128xf32>
      %c0_68 = arith.constant 0 : index
      %c0_69 = arith.constant 0 : index
      %c64_70 = arith.constant 64 : index
      %c0_71 = arith.constant 0 : index
      %129 = vector.load %arg5[%c0_68, %c0_69, %c64_70, %c0_71] : memref<1x2x128x128xbf16>, vector<1x2x64x128xbf16>
      %130 = vector.shape_cast %129 : vector<1x2x64x128xbf16> to vector<128x128xbf16>
      %c0_72 = arith.constant 0 : index
      %c0_73 = arith.constant 0 : index
      %c1_74 = arith.constant 1 : index
      %c0_75 = arith.constant 0 : index
      %c0_76 = arith.constant 0 : index
      %131 = vector.load %arg6[%c0_72, %c0_73, %c1_74, %c0_75, %c0_76] : memref<1x1x2x2x128xf32>, vector<1x1x1x1x128xf32>
      %132 = vector.shape_cast %131 : vector<1x1x1x1x128xf32> to vector<1x128xf32>
      %c0_77 = arith.constant 0 : index
      %c0_78 = arith.constant 0 : index
      %c1_79 = arith.constant 1 : index
      %c1_80 = arith.constant 1 : index
      %c0_81 = arith.constant 0 : index
      %133 = vector.load %arg6[%c0_77, %c0_78, %c1_79, %c1_80, %c0_81] : memref<1x1x2x2x128xf32>, vector<1x1x1x1x128xf32>
      %134 = vector.shape_cast %133 : vector<1x1x1x1x128xf32> to vector<1x128xf32>
      %c0_82 = arith.constant 0 : index
      %c0_83 = arith.constant 0 : index
      %c1_84 = arith.constant 1 : index
      %c0_85 = arith.constant 0 : index
      %c0_86 = arith.constant 0 : index
      %135 = vector.load %arg7[%c0_82, %c0_83, %c1_84, %c0_85, %c0_86] : memref<1x1x2x1x128xf32>, vector<1x1x1x1x128xf32>
      %136 = vector.shape_cast %135 : vector<1x1x1x1x128xf32> to vector<1x128xf32>
      %137 = math.exp %132 : vector<1x128xf32>
      %138 = arith.subf %134, %132 : vector<1x128xf32>
      %139 = math.exp %138 : vector<1x128xf32>
      %140 = math.exp %134 : vector<1x128xf32>
      %141 = arith.mulf %136, %137 : vector<1x128xf32>
      %142 = arith.mulf %137, %cst_4 : vector<1x128xf32>
      %143 = vector.broadcast %132 : vector<1x128xf32> to vector<128x128xf32>
      %144 = vector.transpose %143, [1, 0] : vector<128x128xf32> to vector<128x128xf32>
      %145 = vector.broadcast %132 : vector<1x128xf32> to vector<128x128xf32>
      %146 = arith.subf %144, %145 : vector<128x128xf32>
      %147 = arith.select %9, %146, %cst_2 : vector<128x128xi1>, vector<128x128xf32>
      %148 = math.exp %147 : vector<128x128xf32>
      %149 = vector.broadcast %136 : vector<1x128xf32> to vector<128x128xf32>
      %150 = vector.transpose %149, [1, 0] : vector<128x128xf32> to vector<128x128xf32>
      %151 = arith.mulf %125, %148 : vector<128x128xf32>
      %152 = arith.mulf %151, %150 : vector<128x128xf32>
      %153 = arith.select %10, %152, %cst_1 : vector<128x128xi1>, vector<128x128xf32>
      %c0_87 = arith.constant 0 : index
      %c63_88 = arith.constant 63 : index
      %c1_89 = arith.constant 1 : index
      %154 = scf.for %arg11 = %c0_87 to %c63_88 step %c1_89 iter_args(%arg12 = %11) -> (vector<128x128xf32>) {
        %cst_109 = arith.constant dense<0.000000e+00> : vector<128x128xf32>
        %217 = "flywheel.matmul"(%153, %arg12, %cst_109) {precision = "bf16x3", transpose_rhs = false} : (vector<128x128xf32>, vector<128x128xf32>, vector<128x128xf32>) -> vector<128x128xf32>
        %218 = arith.subf %11, %217 : vector<128x128xf32>
        scf.yield %218 : vector<128x128xf32>
      }
      %155 = arith.extf %130 : vector<128x128xbf16> to vector<128x128xf32>
      %156 = vector.broadcast %136 : vector<1x128xf32> to vector<128x128xf32>
      %157 = vector.transpose %156, [1, 0] : vector<128x128xf32> to vector<128x128xf32>
      %158 = arith.mulf %157, %155 : vector<128x128xf32>
      %159 = vector.broadcast %141 : vector<1x128xf32> to vector<128x128xf32>
      %160 = vector.transpose %159, [1, 0] : vector<128x128xf32> to vector<128x128xf32>
      %161 = arith.mulf %160, %128 : vector<128x128xf32>
      %162 = "tpu.concatenate"(%158, %161) {dimension = 1 : i32} : (vector<128x128xf32>, vector<128x128xf32>) -> vector<128x256xf32>
      %cst_90 = arith.constant dense<0.000000e+00> : vector<128x256xf32>
      %163 = "flywheel.matmul"(%154, %162, %cst_90) {precision = "bf16x3", transpose_rhs = false} : (vector<128x128xf32>, vector<128x256xf32>, vector<128x256xf32>) -> vector<128x256xf32>
      %164 = vector.extract_strided_slice %163 {offsets = [0, 0], sizes = [128, 128], strides = [1, 1]} : vector<128x256xf32> to vector<128x128xf32>
      %165 = vector.extract_strided_slice %163 {offsets = [0, 128], sizes = [128, 128], strides = [1, 1]} : vector<128x256xf32> to vector<128x128xf32>
      %166 = vector.broadcast %142 : vector<1x128xf32> to vector<128x128xf32>
      %167 = vector.transpose %166, [1, 0] : vector<128x128xf32> to vector<128x128xf32>
      %168 = arith.mulf %167, %127 : vector<128x128xf32>
      %169 = vector.broadcast %139 : vector<1x128xf32> to vector<128x128xf32>
      %170 = vector.transpose %169, [1, 0] : vector<128x128xf32> to vector<128x128xf32>
      %171 = vector.broadcast %140 : vector<1x128xf32> to vector<128x128xf32>
      %172 = vector.transpose %171, [1, 0] : vector<128x128xf32> to vector<128x128xf32>
      %173 = arith.mulf %126, %148 : vector<128x128xf32>
      %174 = arith.mulf %173, %cst_3 : vector<128x128xf32>
      %175 = vector.extract_strided_slice %165 {offsets = [0, 0], sizes = [64, 128], strides = [1, 1]} : vector<128x128xf32> to vector<64x128xf32>
      %176 = vector.extract_strided_slice %168 {offsets = [0, 0], sizes = [64, 128], strides = [1, 1]} : vector<128x128xf32> to vector<64x128xf32>
      %177 = "tpu.concatenate"(%175, %176) {dimension = 0 : i32} : (vector<64x128xf32>, vector<64x128xf32>) -> vector<128x128xf32>
      %cst_91 = arith.constant dense<0.000000e+00> : vector<128x128xf32>
      %178 = "flywheel.matmul"(%177, %108, %cst_91) {precision = "bf16x3", transpose_rhs = false} : (vector<128x128xf32>, vector<128x128xf32>, vector<128x128xf32>) -> vector<128x128xf32>
      %179 = vector.extract_strided_slice %178 {offsets = [64, 0], sizes = [64, 128], strides = [1, 1]} : vector<128x128xf32> to vector<64x128xf32>
      %180 = vector.extract_strided_slice %178 {offsets = [0, 0], sizes = [64, 128], strides = [1, 1]} : vector<128x128xf32> to vector<64x128xf32>
      %181 = vector.extract_strided_slice %164 {offsets = [0, 0], sizes = [64, 128], strides = [1, 1]} : vector<128x128xf32> to vector<64x128xf32>
      %182 = arith.subf %181, %180 : vector<64x128xf32>
      %183 = vector.extract_strided_slice %165 {offsets = [64, 0], sizes = [64, 128], strides = [1, 1]} : vector<128x128xf32> to vector<64x128xf32>
      %184 = vector.extract_strided_slice %168 {offsets = [64, 0], sizes = [64, 128], strides = [1, 1]} : vector<128x128xf32> to vector<64x128xf32>
      %185 = "tpu.concatenate"(%183, %184) {dimension = 0 : i32} : (vector<64x128xf32>, vector<64x128xf32>) -> vector<128x128xf32>
      %cst_92 = arith.constant dense<0.000000e+00> : vector<128x128xf32>
      %186 = "flywheel.matmul"(%185, %114, %cst_92) {precision = "bf16x3", transpose_rhs = false} : (vector<128x128xf32>, vector<128x128xf32>, vector<128x128xf32>) -> vector<128x128xf32>
      %187 = vector.extract_strided_slice %186 {offsets = [64, 0], sizes = [64, 128], strides = [1, 1]} : vector<128x128xf32> to vector<64x128xf32>
      %188 = vector.extract_strided_slice %186 {offsets = [0, 0], sizes = [64, 128], strides = [1, 1]} : vector<128x128xf32> to vector<64x128xf32>
      %189 = vector.extract_strided_slice %164 {offsets = [64, 0], sizes = [64, 128], strides = [1, 1]} : vector<128x128xf32> to vector<64x128xf32>
      %190 = arith.subf %189, %188 : vector<64x128xf32>
      %191 = "tpu.concatenate"(%182, %190) {dimension = 0 : i32} : (vector<64x128xf32>, vector<64x128xf32>) -> vector<128x128xf32>
      %192 = "tpu.concatenate"(%179, %187) {dimension = 0 : i32} : (vector<64x128xf32>, vector<64x128xf32>) -> vector<128x128xf32>
      %cst_93 = arith.constant dense<0.000000e+00> : vector<128x128xf32>
      %193 = "flywheel.matmul"(%174, %191, %cst_93) {precision = "bf16x3", transpose_rhs = false} : (vector<128x128xf32>, vector<128x128xf32>, vector<128x128xf32>) -> vector<128x128xf32>
      %194 = arith.addf %192, %193 : vector<128x128xf32>
      %195 = vector.extract_strided_slice %194 {offsets = [0, 0], sizes = [64, 128], strides = [1, 1]} : vector<128x128xf32> to vector<64x128xf32>
      %196 = arith.truncf %195 : vector<64x128xf32> to vector<64x128xbf16>
      %c0_94 = arith.constant 0 : index
      %c64_95 = arith.constant 64 : index
      %c0_96 = arith.constant 0 : index
      %197 = vector.shape_cast %196 : vector<64x128xbf16> to vector<1x64x128xbf16>
      "tpu.vector_store"(%197, %arg8, %c0_94, %c64_95, %c0_96) {add = false, operandSegmentSizes = array<i32: 1, 1, 3, 0>, strides = array<i32>} : (vector<1x64x128xbf16>, memref<1x128x256xbf16>, index, index, index) -> ()
      %198 = vector.extract_strided_slice %194 {offsets = [64, 0], sizes = [64, 128], strides = [1, 1]} : vector<128x128xf32> to vector<64x128xf32>
      %199 = arith.truncf %198 : vector<64x128xf32> to vector<64x128xbf16>
      %c0_97 = arith.constant 0 : index
      %c64_98 = arith.constant 64 : index
      %c128_99 = arith.constant 128 : index
      %200 = vector.shape_cast %199 : vector<64x128xbf16> to vector<1x64x128xbf16>
      "tpu.vector_store"(%200, %arg8, %c0_97, %c64_98, %c128_99) {add = false, operandSegmentSizes = array<i32: 1, 1, 3, 0>, strides = array<i32>} : (vector<1x64x128xbf16>, memref<1x128x256xbf16>, index, index, index) -> ()
      %201 = arith.mulf %170, %191 : vector<128x128xf32>
      %202 = vector.extract_strided_slice %201 {offsets = [0, 0], sizes = [64, 128], strides = [1, 1]} : vector<128x128xf32> to vector<64x128xf32>
      %cst_100 = arith.constant dense<0.000000e+00> : vector<128x128xf32>
      %203 = "flywheel.matmul"(%124, %202, %cst_100) {precision = "bf16x3", transpose_rhs = false} : (vector<128x64xf32>, vector<64x128xf32>, vector<128x128xf32>) -> vector<128x128xf32>
      %204 = vector.extract_strided_slice %172 {offsets = [0, 0], sizes = [1, 128], strides = [1, 1]} : vector<128x128xf32> to vector<1x128xf32>
      %205 = vector.broadcast %204 : vector<1x128xf32> to vector<128x128xf32>
      %206 = arith.mulf %205, %108 : vector<128x128xf32>
      %207 = arith.addf %206, %203 : vector<128x128xf32>
      %208 = vector.extract_strided_slice %201 {offsets = [64, 0], sizes = [64, 128], strides = [1, 1]} : vector<128x128xf32> to vector<64x128xf32>
      %cst_101 = arith.constant dense<0.000000e+00> : vector<128x128xf32>
      %209 = "flywheel.matmul"(%124, %208, %cst_101) {precision = "bf16x3", transpose_rhs = false} : (vector<128x64xf32>, vector<64x128xf32>, vector<128x128xf32>) -> vector<128x128xf32>
      %210 = vector.extract_strided_slice %172 {offsets = [64, 0], sizes = [1, 128], strides = [1, 1]} : vector<128x128xf32> to vector<1x128xf32>
      %211 = vector.broadcast %210 : vector<1x128xf32> to vector<128x128xf32>
      %212 = arith.mulf %211, %114 : vector<128x128xf32>
      %213 = arith.addf %212, %209 : vector<128x128xf32>
      %c0_102 = arith.constant 0 : index
      %c0_103 = arith.constant 0 : index
      %c0_104 = arith.constant 0 : index
      %214 = vector.shape_cast %207 : vector<128x128xf32> to vector<1x128x128xf32>
      "tpu.vector_store"(%214, %arg10, %c0_102, %c0_103, %c0_104) {add = false, operandSegmentSizes = array<i32: 1, 1, 3, 0>, strides = array<i32>} : (vector<1x128x128xf32>, memref<2x128x128xf32>, index, index, index) -> ()
      %c1_105 = arith.constant 1 : index
      %c0_106 = arith.constant 0 : index
      %c0_107 = arith.constant 0 : index
      %215 = vector.shape_cast %213 : vector<128x128xf32> to vector<1x128x128xf32>
      "tpu.vector_store"(%215, %arg10, %c1_105, %c0_106, %c0_107) {add = false, operandSegmentSizes = array<i32: 1, 1, 3, 0>, strides = array<i32>} : (vector<1x128x128xf32>, memref<2x128x128xf32>, index, index, index) -> ()
      %c0_i32_108 = arith.constant 0 : i32
      %216 = arith.cmpi eq, %arg2, %c0_i32_108 : i32
      scf.if %216 {
        %c0_109 = arith.constant 0 : index
        %c0_110 = arith.constant 0 : index
        %c0_111 = arith.constant 0 : index
        %c0_112 = arith.constant 0 : index
        %217 = vector.shape_cast %207 : vector<128x128xf32> to vector<1x1x128x128xf32>
        "tpu.vector_store"(%217, %arg9, %c0_109, %c0_110, %c0_111, %c0_112) {add = false, operandSegmentSizes = array<i32: 1, 1, 4, 0>, strides = array<i32>} : (vector<1x1x128x128xf32>, memref<1x2x128x128xf32>, index, index, index, index) -> ()
        %c0_113 = arith.constant 0 : index
        %c1_114 = arith.constant 1 : index
        %c0_115 = arith.constant 0 : index
        %c0_116 = arith.constant 0 : index
        %218 = vector.shape_cast %213 : vector<128x128xf32> to vector<1x1x128x128xf32>
        "tpu.vector_store"(%218, %arg9, %c0_113, %c1_114, %c0_115, %c0_116) {add = false, operandSegmentSizes = array<i32: 1, 1, 4, 0>, strides = array<i32>} : (vector<1x1x128x128xf32>, memref<1x2x128x128xf32>, index, index, index, index) -> ()
      }
      return
    }
    func.func @key_chunks(%arg0: i32, %arg1: i32, %arg2: i32) -> (i32, i32, i32, i32) {
      %c0_i32 = arith.constant 0 : i32
      %c2_i32 = arith.constant 2 : i32
      %c2_i32_0 = arith.constant 2 : i32
      %c1_i32 = arith.constant 1 : i32
      %0 = arith.muli %arg1, %c2_i32 : i32
      %1 = arith.divsi %0, %c2_i32_0 : i32
      %2 = arith.divsi %1, %c1_i32 : i32
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

