// Tile IR of Gated DeltaNet, bf16 (two value heads, two chunks of 64): one head and two chunks per grid step, f32 products at Mosaic's fp32. Made by: flywheel-opt test/Inputs/gdn-kernel-bf16.mlir --pass-pipeline='builtin.module(flywheel-layout,flywheel-tile{gdn-heads=1 gdn-precision=fp32})' | mlir-opt-22 --allow-unregistered-dialect
module {
  func.func @main(%arg0: tensor<1x128x1x128xbf16>, %arg1: tensor<1x128x1x128xbf16>, %arg2: tensor<1x128x2x128xbf16>, %arg3: tensor<1x128x2xf32>, %arg4: tensor<1x128x2xf32>) -> (tensor<1x128x2x128xbf16>, tensor<1x2x128x128xf32>) {
    %0 = "stablehlo.reshape"(%arg0) : (tensor<1x128x1x128xbf16>) -> tensor<1x1x128x128xbf16>
    %1 = "stablehlo.reshape"(%arg1) : (tensor<1x128x1x128xbf16>) -> tensor<1x1x128x128xbf16>
    %2 = "stablehlo.reshape"(%arg2) : (tensor<1x128x2x128xbf16>) -> tensor<2x64x2x128xbf16>
    %3 = "stablehlo.transpose"(%2) <{permutation = array<i64: 2, 0, 1, 3>}> : (tensor<2x64x2x128xbf16>) -> tensor<2x2x64x128xbf16>
    %4 = "stablehlo.reshape"(%3) : (tensor<2x2x64x128xbf16>) -> tensor<1x2x128x128xbf16>
    %5 = "stablehlo.reshape"(%arg3) : (tensor<1x128x2xf32>) -> tensor<2x64x2xf32>
    %6 = "stablehlo.transpose"(%5) <{permutation = array<i64: 2, 0, 1>}> : (tensor<2x64x2xf32>) -> tensor<2x2x64xf32>
    %7 = "stablehlo.reshape"(%6) : (tensor<2x2x64xf32>) -> tensor<1x2x2x1x64xf32>
    %8 = "stablehlo.iota"() <{iota_dimension = 0 : i64}> : () -> tensor<64x64xi32>
    %9 = "stablehlo.iota"() <{iota_dimension = 1 : i64}> : () -> tensor<64x64xi32>
    %10 = "stablehlo.compare"(%8, %9) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LE>}> : (tensor<64x64xi32>, tensor<64x64xi32>) -> tensor<64x64xi1>
    %11 = "stablehlo.convert"(%10) : (tensor<64x64xi1>) -> tensor<64x64xf32>
    %12 = "stablehlo.dot_general"(%7, %11) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [4], rhs_contracting_dimensions = [0]>, precision_config = [#stablehlo<precision HIGHEST>, #stablehlo<precision HIGHEST>]}> : (tensor<1x2x2x1x64xf32>, tensor<64x64xf32>) -> tensor<1x2x2x1x64xf32>
    %13 = "stablehlo.slice"(%12) <{limit_indices = array<i64: 1, 2, 2, 1, 64>, start_indices = array<i64: 0, 0, 0, 0, 63>, strides = array<i64: 1, 1, 1, 1, 1>}> : (tensor<1x2x2x1x64xf32>) -> tensor<1x2x2x1x1xf32>
    %14 = "stablehlo.broadcast_in_dim"(%13) <{broadcast_dimensions = array<i64: 0, 1, 2, 3, 4>}> : (tensor<1x2x2x1x1xf32>) -> tensor<1x2x2x1x64xf32>
    %15 = "stablehlo.concatenate"(%12, %14) <{dimension = 3 : i64}> : (tensor<1x2x2x1x64xf32>, tensor<1x2x2x1x64xf32>) -> tensor<1x2x2x2x64xf32>
    %16 = "stablehlo.reshape"(%arg4) : (tensor<1x128x2xf32>) -> tensor<2x64x2xf32>
    %17 = "stablehlo.transpose"(%16) <{permutation = array<i64: 2, 0, 1>}> : (tensor<2x64x2xf32>) -> tensor<2x2x64xf32>
    %18 = "stablehlo.reshape"(%17) : (tensor<2x2x64xf32>) -> tensor<1x2x2x1x64xf32>
    %19:2 = "flywheel.gated_delta_kernel"(%0, %1, %4, %15, %18) {bytes_accessed = 396288 : i64, flops = 46137344 : i64, kernel = @flywheel_kernel_0, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 0, 0>, transcendentals = 17152 : i64} : (tensor<1x1x128x128xbf16>, tensor<1x1x128x128xbf16>, tensor<1x2x128x128xbf16>, tensor<1x2x2x2x64xf32>, tensor<1x2x2x1x64xf32>) -> (tensor<1x128x256xbf16>, tensor<1x2x128x128xf32>)
    %20 = "stablehlo.reshape"(%19#0) : (tensor<1x128x256xbf16>) -> tensor<1x128x2x128xbf16>
    return %20, %19#1 : tensor<1x128x2x128xbf16>, tensor<1x2x128x128xf32>
  }
  module @flywheel_kernel_0 attributes {stable_mosaic.version = 15 : i64} {
    func.func @gated_delta_kernel(%arg0: i32, %arg1: i32, %arg2: i32, %arg3: memref<1x1x128x128xbf16>, %arg4: memref<1x1x128x128xbf16>, %arg5: memref<1x1x128x128xbf16>, %arg6: memref<1x1x2x2x64xf32>, %arg7: memref<1x1x2x1x64xf32>, %arg8: memref<1x128x128xbf16>, %arg9: memref<1x1x128x128xf32>, %arg10: memref<1x128x128xf32>) attributes {dimension_semantics = [#tpu.dimension_semantics<parallel>, #tpu.dimension_semantics<parallel>, #tpu.dimension_semantics<arbitrary>], iteration_bounds = array<i64: 1, 2, 1>, scalar_prefetch = 0 : i64, scratch_operands = 1 : i64, tpu.core_type = #tpu.core_type<tc>, window_params = [{transform_indices = @key_chunks, window_bounds = array<i64: 1, 1, 128, 128>}, {transform_indices = @key_chunks, window_bounds = array<i64: 1, 1, 128, 128>}, {transform_indices = @value_chunks, window_bounds = array<i64: 1, 1, 128, 128>}, {transform_indices = @gate_chunks, window_bounds = array<i64: 1, 1, 2, 2, 64>}, {transform_indices = @gate_chunks, window_bounds = array<i64: 1, 1, 2, 1, 64>}, {transform_indices = @value_tokens, window_bounds = array<i64: 1, 128, 128>}, {transform_indices = @states, window_bounds = array<i64: 1, 1, 128, 128>}]} {
      %c0_i32 = arith.constant 0 : i32
      %0 = arith.cmpi eq, %arg2, %c0_i32 : i32
      scf.if %0 {
        %cst_93 = arith.constant dense<0.000000e+00> : vector<128x128xf32>
        %c0_94 = arith.constant 0 : index
        %c0_95 = arith.constant 0 : index
        %c0_96 = arith.constant 0 : index
        %171 = vector.shape_cast %cst_93 : vector<128x128xf32> to vector<1x128x128xf32>
        "tpu.vector_store"(%171, %arg10, %c0_94, %c0_95, %c0_96) {add = false, operandSegmentSizes = array<i32: 1, 1, 3, 0>, strides = array<i32>} : (vector<1x128x128xf32>, memref<1x128x128xf32>, index, index, index) -> ()
      }
      %1 = "tpu.iota"() {dimensions = array<i32: 0>} : () -> vector<64x64xi32>
      %2 = "tpu.iota"() {dimensions = array<i32: 1>} : () -> vector<64x64xi32>
      %3 = arith.cmpi sge, %1, %2 : vector<64x64xi32>
      %4 = arith.cmpi sgt, %1, %2 : vector<64x64xi32>
      %5 = arith.cmpi eq, %1, %2 : vector<64x64xi32>
      %cst = arith.constant dense<1.000000e+00> : vector<64x64xf32>
      %cst_0 = arith.constant dense<0.000000e+00> : vector<64x64xf32>
      %6 = arith.select %5, %cst, %cst_0 : vector<64x64xi1>, vector<64x64xf32>
      %cst_1 = arith.constant dense<0xFF800000> : vector<64x64xf32>
      %cst_2 = arith.constant dense<0.0883883461> : vector<64x64xf32>
      %cst_3 = arith.constant dense<0.0883883461> : vector<1x64xf32>
      %c0 = arith.constant 0 : index
      %c0_4 = arith.constant 0 : index
      %c0_5 = arith.constant 0 : index
      %7 = vector.load %arg10[%c0, %c0_4, %c0_5] : memref<1x128x128xf32>, vector<1x128x128xf32>
      %8 = vector.shape_cast %7 : vector<1x128x128xf32> to vector<128x128xf32>
      %c0_6 = arith.constant 0 : index
      %c0_7 = arith.constant 0 : index
      %c0_8 = arith.constant 0 : index
      %c0_9 = arith.constant 0 : index
      %9 = vector.load %arg3[%c0_6, %c0_7, %c0_8, %c0_9] : memref<1x1x128x128xbf16>, vector<1x1x64x128xbf16>
      %c0_10 = arith.constant 0 : index
      %c0_11 = arith.constant 0 : index
      %c0_12 = arith.constant 0 : index
      %c0_13 = arith.constant 0 : index
      %10 = vector.load %arg4[%c0_10, %c0_11, %c0_12, %c0_13] : memref<1x1x128x128xbf16>, vector<1x1x64x128xbf16>
      %11 = vector.broadcast %9 : vector<1x1x64x128xbf16> to vector<1x1x64x128xbf16>
      %12 = vector.shape_cast %11 : vector<1x1x64x128xbf16> to vector<64x128xbf16>
      %13 = vector.broadcast %10 : vector<1x1x64x128xbf16> to vector<1x1x64x128xbf16>
      %14 = vector.shape_cast %13 : vector<1x1x64x128xbf16> to vector<64x128xbf16>
      %c0_14 = arith.constant 0 : index
      %c0_15 = arith.constant 0 : index
      %c0_16 = arith.constant 0 : index
      %c0_17 = arith.constant 0 : index
      %15 = vector.load %arg4[%c0_14, %c0_15, %c0_16, %c0_17] : memref<1x1x128x128xbf16>, vector<1x1x64x128xbf16>
      %16 = vector.shape_cast %15 : vector<1x1x64x128xbf16> to vector<64x128xbf16>
      %17 = arith.extf %16 : vector<64x128xbf16> to vector<64x128xf32>
      %18 = vector.transpose %17, [1, 0] : vector<64x128xf32> to vector<128x64xf32>
      %cst_18 = arith.constant dense<0.000000e+00> : vector<64x64xf32>
      %19 = "flywheel.matmul"(%14, %14, %cst_18) {transpose_rhs = true} : (vector<64x128xbf16>, vector<64x128xbf16>, vector<64x64xf32>) -> vector<64x64xf32>
      %cst_19 = arith.constant dense<0.000000e+00> : vector<64x64xf32>
      %20 = "flywheel.matmul"(%12, %14, %cst_19) {transpose_rhs = true} : (vector<64x128xbf16>, vector<64x128xbf16>, vector<64x64xf32>) -> vector<64x64xf32>
      %21 = arith.extf %12 : vector<64x128xbf16> to vector<64x128xf32>
      %22 = arith.extf %14 : vector<64x128xbf16> to vector<64x128xf32>
      %c0_20 = arith.constant 0 : index
      %c0_21 = arith.constant 0 : index
      %c0_22 = arith.constant 0 : index
      %c0_23 = arith.constant 0 : index
      %23 = vector.load %arg5[%c0_20, %c0_21, %c0_22, %c0_23] : memref<1x1x128x128xbf16>, vector<1x1x64x128xbf16>
      %24 = vector.shape_cast %23 : vector<1x1x64x128xbf16> to vector<64x128xbf16>
      %c0_24 = arith.constant 0 : index
      %c0_25 = arith.constant 0 : index
      %c0_26 = arith.constant 0 : index
      %c0_27 = arith.constant 0 : index
      %c0_28 = arith.constant 0 : index
      %25 = vector.load %arg6[%c0_24, %c0_25, %c0_26, %c0_27, %c0_28] : memref<1x1x2x2x64xf32>, vector<1x1x1x1x64xf32>
      %26 = vector.shape_cast %25 : vector<1x1x1x1x64xf32> to vector<1x64xf32>
      %c0_29 = arith.constant 0 : index
      %c0_30 = arith.constant 0 : index
      %c0_31 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c0_32 = arith.constant 0 : index
      %27 = vector.load %arg6[%c0_29, %c0_30, %c0_31, %c1, %c0_32] : memref<1x1x2x2x64xf32>, vector<1x1x1x1x64xf32>
      %28 = vector.shape_cast %27 : vector<1x1x1x1x64xf32> to vector<1x64xf32>
      %c0_33 = arith.constant 0 : index
      %c0_34 = arith.constant 0 : index
      %c0_35 = arith.constant 0 : index
      %c0_36 = arith.constant 0 : index
      %c0_37 = arith.constant 0 : index
      %29 = vector.load %arg7[%c0_33, %c0_34, %c0_35, %c0_36, %c0_37] : memref<1x1x2x1x64xf32>, vector<1x1x1x1x64xf32>
      %30 = vector.shape_cast %29 : vector<1x1x1x1x64xf32> to vector<1x64xf32>
      %31 = math.exp %26 : vector<1x64xf32>
      %32 = arith.subf %28, %26 : vector<1x64xf32>
      %33 = math.exp %32 : vector<1x64xf32>
      %34 = math.exp %28 : vector<1x64xf32>
      %35 = arith.mulf %30, %31 : vector<1x64xf32>
      %36 = arith.mulf %31, %cst_3 : vector<1x64xf32>
      %37 = vector.broadcast %26 : vector<1x64xf32> to vector<64x64xf32>
      %38 = vector.transpose %37, [1, 0] : vector<64x64xf32> to vector<64x64xf32>
      %39 = vector.broadcast %26 : vector<1x64xf32> to vector<64x64xf32>
      %40 = arith.subf %38, %39 : vector<64x64xf32>
      %41 = arith.select %3, %40, %cst_1 : vector<64x64xi1>, vector<64x64xf32>
      %42 = math.exp %41 : vector<64x64xf32>
      %43 = vector.broadcast %30 : vector<1x64xf32> to vector<64x64xf32>
      %44 = vector.transpose %43, [1, 0] : vector<64x64xf32> to vector<64x64xf32>
      %45 = arith.mulf %19, %42 : vector<64x64xf32>
      %46 = arith.mulf %45, %44 : vector<64x64xf32>
      %47 = arith.select %4, %46, %cst_0 : vector<64x64xi1>, vector<64x64xf32>
      %c0_38 = arith.constant 0 : index
      %c63 = arith.constant 63 : index
      %c1_39 = arith.constant 1 : index
      %48 = scf.for %arg11 = %c0_38 to %c63 step %c1_39 iter_args(%arg12 = %6) -> (vector<64x64xf32>) {
        %cst_93 = arith.constant dense<0.000000e+00> : vector<64x64xf32>
        %171 = "flywheel.matmul"(%47, %arg12, %cst_93) {transpose_rhs = false} : (vector<64x64xf32>, vector<64x64xf32>, vector<64x64xf32>) -> vector<64x64xf32>
        %172 = arith.subf %6, %171 : vector<64x64xf32>
        scf.yield %172 : vector<64x64xf32>
      }
      %49 = arith.extf %24 : vector<64x128xbf16> to vector<64x128xf32>
      %50 = vector.broadcast %30 : vector<1x64xf32> to vector<128x64xf32>
      %51 = vector.transpose %50, [1, 0] : vector<128x64xf32> to vector<64x128xf32>
      %52 = arith.mulf %51, %49 : vector<64x128xf32>
      %53 = vector.broadcast %35 : vector<1x64xf32> to vector<128x64xf32>
      %54 = vector.transpose %53, [1, 0] : vector<128x64xf32> to vector<64x128xf32>
      %55 = arith.mulf %54, %22 : vector<64x128xf32>
      %56 = "tpu.concatenate"(%52, %55) {dimension = 1 : i32} : (vector<64x128xf32>, vector<64x128xf32>) -> vector<64x256xf32>
      %cst_40 = arith.constant dense<0.000000e+00> : vector<64x256xf32>
      %57 = "flywheel.matmul"(%48, %56, %cst_40) {transpose_rhs = false} : (vector<64x64xf32>, vector<64x256xf32>, vector<64x256xf32>) -> vector<64x256xf32>
      %58 = vector.extract_strided_slice %57 {offsets = [0, 0], sizes = [64, 128], strides = [1, 1]} : vector<64x256xf32> to vector<64x128xf32>
      %59 = vector.extract_strided_slice %57 {offsets = [0, 128], sizes = [64, 128], strides = [1, 1]} : vector<64x256xf32> to vector<64x128xf32>
      %60 = vector.broadcast %36 : vector<1x64xf32> to vector<128x64xf32>
      %61 = vector.transpose %60, [1, 0] : vector<128x64xf32> to vector<64x128xf32>
      %62 = arith.mulf %61, %21 : vector<64x128xf32>
      %63 = vector.broadcast %33 : vector<1x64xf32> to vector<128x64xf32>
      %64 = vector.transpose %63, [1, 0] : vector<128x64xf32> to vector<64x128xf32>
      %65 = vector.broadcast %34 : vector<1x64xf32> to vector<128x64xf32>
      %66 = vector.transpose %65, [1, 0] : vector<128x64xf32> to vector<64x128xf32>
      %67 = arith.mulf %20, %42 : vector<64x64xf32>
      %68 = arith.mulf %67, %cst_2 : vector<64x64xf32>
      %69 = vector.extract_strided_slice %59 {offsets = [0, 0], sizes = [64, 128], strides = [1, 1]} : vector<64x128xf32> to vector<64x128xf32>
      %70 = vector.extract_strided_slice %62 {offsets = [0, 0], sizes = [64, 128], strides = [1, 1]} : vector<64x128xf32> to vector<64x128xf32>
      %71 = "tpu.concatenate"(%69, %70) {dimension = 0 : i32} : (vector<64x128xf32>, vector<64x128xf32>) -> vector<128x128xf32>
      %cst_41 = arith.constant dense<0.000000e+00> : vector<128x128xf32>
      %72 = "flywheel.matmul"(%71, %8, %cst_41) {transpose_rhs = false} : (vector<128x128xf32>, vector<128x128xf32>, vector<128x128xf32>) -> vector<128x128xf32>
      %73 = vector.extract_strided_slice %72 {offsets = [64, 0], sizes = [64, 128], strides = [1, 1]} : vector<128x128xf32> to vector<64x128xf32>
      %74 = vector.extract_strided_slice %72 {offsets = [0, 0], sizes = [64, 128], strides = [1, 1]} : vector<128x128xf32> to vector<64x128xf32>
      %75 = vector.extract_strided_slice %58 {offsets = [0, 0], sizes = [64, 128], strides = [1, 1]} : vector<64x128xf32> to vector<64x128xf32>
      %76 = arith.subf %75, %74 : vector<64x128xf32>
      %cst_42 = arith.constant dense<0.000000e+00> : vector<64x128xf32>
      %77 = "flywheel.matmul"(%68, %76, %cst_42) {transpose_rhs = false} : (vector<64x64xf32>, vector<64x128xf32>, vector<64x128xf32>) -> vector<64x128xf32>
      %78 = arith.addf %73, %77 : vector<64x128xf32>
      %79 = vector.extract_strided_slice %78 {offsets = [0, 0], sizes = [64, 128], strides = [1, 1]} : vector<64x128xf32> to vector<64x128xf32>
      %80 = arith.truncf %79 : vector<64x128xf32> to vector<64x128xbf16>
      %c0_43 = arith.constant 0 : index
      %c0_44 = arith.constant 0 : index
      %c0_45 = arith.constant 0 : index
      %81 = vector.shape_cast %80 : vector<64x128xbf16> to vector<1x64x128xbf16>
      "tpu.vector_store"(%81, %arg8, %c0_43, %c0_44, %c0_45) {add = false, operandSegmentSizes = array<i32: 1, 1, 3, 0>, strides = array<i32>} : (vector<1x64x128xbf16>, memref<1x128x128xbf16>, index, index, index) -> ()
      %82 = arith.mulf %64, %76 : vector<64x128xf32>
      %83 = vector.extract_strided_slice %82 {offsets = [0, 0], sizes = [64, 128], strides = [1, 1]} : vector<64x128xf32> to vector<64x128xf32>
      %cst_46 = arith.constant dense<0.000000e+00> : vector<128x128xf32>
      %84 = "flywheel.matmul"(%18, %83, %cst_46) {transpose_rhs = false} : (vector<128x64xf32>, vector<64x128xf32>, vector<128x128xf32>) -> vector<128x128xf32>
      %85 = vector.extract_strided_slice %66 {offsets = [0, 0], sizes = [1, 128], strides = [1, 1]} : vector<64x128xf32> to vector<1x128xf32>
      %86 = vector.broadcast %85 : vector<1x128xf32> to vector<128x128xf32>
      %87 = arith.mulf %86, %8 : vector<128x128xf32>
      %88 = arith.addf %87, %84 : vector<128x128xf32>
      %c0_47 = arith.constant 0 : index
      %c0_48 = arith.constant 0 : index
      %c64 = arith.constant 64 : index
      %c0_49 = arith.constant 0 : index
      %89 = vector.load %arg3[%c0_47, %c0_48, %c64, %c0_49] : memref<1x1x128x128xbf16>, vector<1x1x64x128xbf16>
      %c0_50 = arith.constant 0 : index
      %c0_51 = arith.constant 0 : index
      %c64_52 = arith.constant 64 : index
      %c0_53 = arith.constant 0 : index
      %90 = vector.load %arg4[%c0_50, %c0_51, %c64_52, %c0_53] : memref<1x1x128x128xbf16>, vector<1x1x64x128xbf16>
      %91 = vector.broadcast %89 : vector<1x1x64x128xbf16> to vector<1x1x64x128xbf16>
      %92 = vector.shape_cast %91 : vector<1x1x64x128xbf16> to vector<64x128xbf16>
      %93 = vector.broadcast %90 : vector<1x1x64x128xbf16> to vector<1x1x64x128xbf16>
      %94 = vector.shape_cast %93 : vector<1x1x64x128xbf16> to vector<64x128xbf16>
      %c0_54 = arith.constant 0 : index
      %c0_55 = arith.constant 0 : index
      %c64_56 = arith.constant 64 : index
      %c0_57 = arith.constant 0 : index
      %95 = vector.load %arg4[%c0_54, %c0_55, %c64_56, %c0_57] : memref<1x1x128x128xbf16>, vector<1x1x64x128xbf16>
      %96 = vector.shape_cast %95 : vector<1x1x64x128xbf16> to vector<64x128xbf16>
      %97 = arith.extf %96 : vector<64x128xbf16> to vector<64x128xf32>
      %98 = vector.transpose %97, [1, 0] : vector<64x128xf32> to vector<128x64xf32>
      %cst_58 = arith.constant dense<0.000000e+00> : vector<64x64xf32>
      %99 = "flywheel.matmul"(%94, %94, %cst_58) {transpose_rhs = true} : (vector<64x128xbf16>, vector<64x128xbf16>, vector<64x64xf32>) -> vector<64x64xf32>
      %cst_59 = arith.constant dense<0.000000e+00> : vector<64x64xf32>
      %100 = "flywheel.matmul"(%92, %94, %cst_59) {transpose_rhs = true} : (vector<64x128xbf16>, vector<64x128xbf16>, vector<64x64xf32>) -> vector<64x64xf32>
      %101 = arith.extf %92 : vector<64x128xbf16> to vector<64x128xf32>
      %102 = arith.extf %94 : vector<64x128xbf16> to vector<64x128xf32>
      %c0_60 = arith.constant 0 : index
      %c0_61 = arith.constant 0 : index
      %c64_62 = arith.constant 64 : index
      %c0_63 = arith.constant 0 : index
      %103 = vector.load %arg5[%c0_60, %c0_61, %c64_62, %c0_63] : memref<1x1x128x128xbf16>, vector<1x1x64x128xbf16>
      %104 = vector.shape_cast %103 : vector<1x1x64x128xbf16> to vector<64x128xbf16>
      %c0_64 = arith.constant 0 : index
      %c0_65 = arith.constant 0 : index
      %c1_66 = arith.constant 1 : index
      %c0_67 = arith.constant 0 : index
      %c0_68 = arith.constant 0 : index
      %105 = vector.load %arg6[%c0_64, %c0_65, %c1_66, %c0_67, %c0_68] : memref<1x1x2x2x64xf32>, vector<1x1x1x1x64xf32>
      %106 = vector.shape_cast %105 : vector<1x1x1x1x64xf32> to vector<1x64xf32>
      %c0_69 = arith.constant 0 : index
      %c0_70 = arith.constant 0 : index
      %c1_71 = arith.constant 1 : index
      %c1_72 = arith.constant 1 : index
      %c0_73 = arith.constant 0 : index
      %107 = vector.load %arg6[%c0_69, %c0_70, %c1_71, %c1_72, %c0_73] : memref<1x1x2x2x64xf32>, vector<1x1x1x1x64xf32>
      %108 = vector.shape_cast %107 : vector<1x1x1x1x64xf32> to vector<1x64xf32>
      %c0_74 = arith.constant 0 : index
      %c0_75 = arith.constant 0 : index
      %c1_76 = arith.constant 1 : index
      %c0_77 = arith.constant 0 : index
      %c0_78 = arith.constant 0 : index
      %109 = vector.load %arg7[%c0_74, %c0_75, %c1_76, %c0_77, %c0_78] : memref<1x1x2x1x64xf32>, vector<1x1x1x1x64xf32>
      %110 = vector.shape_cast %109 : vector<1x1x1x1x64xf32> to vector<1x64xf32>
      %111 = math.exp %106 : vector<1x64xf32>
      %112 = arith.subf %108, %106 : vector<1x64xf32>
      %113 = math.exp %112 : vector<1x64xf32>
      %114 = math.exp %108 : vector<1x64xf32>
      %115 = arith.mulf %110, %111 : vector<1x64xf32>
      %116 = arith.mulf %111, %cst_3 : vector<1x64xf32>
      %117 = vector.broadcast %106 : vector<1x64xf32> to vector<64x64xf32>
      %118 = vector.transpose %117, [1, 0] : vector<64x64xf32> to vector<64x64xf32>
      %119 = vector.broadcast %106 : vector<1x64xf32> to vector<64x64xf32>
      %120 = arith.subf %118, %119 : vector<64x64xf32>
      %121 = arith.select %3, %120, %cst_1 : vector<64x64xi1>, vector<64x64xf32>
      %122 = math.exp %121 : vector<64x64xf32>
      %123 = vector.broadcast %110 : vector<1x64xf32> to vector<64x64xf32>
      %124 = vector.transpose %123, [1, 0] : vector<64x64xf32> to vector<64x64xf32>
      %125 = arith.mulf %99, %122 : vector<64x64xf32>
      %126 = arith.mulf %125, %124 : vector<64x64xf32>
      %127 = arith.select %4, %126, %cst_0 : vector<64x64xi1>, vector<64x64xf32>
      %c0_79 = arith.constant 0 : index
      %c63_80 = arith.constant 63 : index
      %c1_81 = arith.constant 1 : index
      %128 = scf.for %arg11 = %c0_79 to %c63_80 step %c1_81 iter_args(%arg12 = %6) -> (vector<64x64xf32>) {
        %cst_93 = arith.constant dense<0.000000e+00> : vector<64x64xf32>
        %171 = "flywheel.matmul"(%127, %arg12, %cst_93) {transpose_rhs = false} : (vector<64x64xf32>, vector<64x64xf32>, vector<64x64xf32>) -> vector<64x64xf32>
        %172 = arith.subf %6, %171 : vector<64x64xf32>
        scf.yield %172 : vector<64x64xf32>
      }
      %129 = arith.extf %104 : vector<64x128xbf16> to vector<64x128xf32>
      %130 = vector.broadcast %110 : vector<1x64xf32> to vector<128x64xf32>
      %131 = vector.transpose %130, [1, 0] : vector<128x64xf32> to vector<64x128xf32>
      %132 = arith.mulf %131, %129 : vector<64x128xf32>
      %133 = vector.broadcast %115 : vector<1x64xf32> to vector<128x64xf32>
      %134 = vector.transpose %133, [1, 0] : vector<128x64xf32> to vector<64x128xf32>
      %135 = arith.mulf %134, %102 : vector<64x128xf32>
      %136 = "tpu.concatenate"(%132, %135) {dimension = 1 : i32} : (vector<64x128xf32>, vector<64x128xf32>) -> vector<64x256xf32>
      %cst_82 = arith.constant dense<0.000000e+00> : vector<64x256xf32>
      %137 = "flywheel.matmul"(%128, %136, %cst_82) {transpose_rhs = false} : (vector<64x64xf32>, vector<64x256xf32>, vector<64x256xf32>) -> vector<64x256xf32>
      %138 = vector.extract_strided_slice %137 {offsets = [0, 0], sizes = [64, 128], strides = [1, 1]} : vector<64x256xf32> to vector<64x128xf32>
      %139 = vector.extract_strided_slice %137 {offsets = [0, 128], sizes = [64, 128], strides = [1, 1]} : vector<64x256xf32> to vector<64x128xf32>
      %140 = vector.broadcast %116 : vector<1x64xf32> to vector<128x64xf32>
      %141 = vector.transpose %140, [1, 0] : vector<128x64xf32> to vector<64x128xf32>
      %142 = arith.mulf %141, %101 : vector<64x128xf32>
      %143 = vector.broadcast %113 : vector<1x64xf32> to vector<128x64xf32>
      %144 = vector.transpose %143, [1, 0] : vector<128x64xf32> to vector<64x128xf32>
      %145 = vector.broadcast %114 : vector<1x64xf32> to vector<128x64xf32>
      %146 = vector.transpose %145, [1, 0] : vector<128x64xf32> to vector<64x128xf32>
      %147 = arith.mulf %100, %122 : vector<64x64xf32>
      %148 = arith.mulf %147, %cst_2 : vector<64x64xf32>
      %149 = vector.extract_strided_slice %139 {offsets = [0, 0], sizes = [64, 128], strides = [1, 1]} : vector<64x128xf32> to vector<64x128xf32>
      %150 = vector.extract_strided_slice %142 {offsets = [0, 0], sizes = [64, 128], strides = [1, 1]} : vector<64x128xf32> to vector<64x128xf32>
      %151 = "tpu.concatenate"(%149, %150) {dimension = 0 : i32} : (vector<64x128xf32>, vector<64x128xf32>) -> vector<128x128xf32>
      %cst_83 = arith.constant dense<0.000000e+00> : vector<128x128xf32>
      %152 = "flywheel.matmul"(%151, %88, %cst_83) {transpose_rhs = false} : (vector<128x128xf32>, vector<128x128xf32>, vector<128x128xf32>) -> vector<128x128xf32>
      %153 = vector.extract_strided_slice %152 {offsets = [64, 0], sizes = [64, 128], strides = [1, 1]} : vector<128x128xf32> to vector<64x128xf32>
      %154 = vector.extract_strided_slice %152 {offsets = [0, 0], sizes = [64, 128], strides = [1, 1]} : vector<128x128xf32> to vector<64x128xf32>
      %155 = vector.extract_strided_slice %138 {offsets = [0, 0], sizes = [64, 128], strides = [1, 1]} : vector<64x128xf32> to vector<64x128xf32>
      %156 = arith.subf %155, %154 : vector<64x128xf32>
      %cst_84 = arith.constant dense<0.000000e+00> : vector<64x128xf32>
      %157 = "flywheel.matmul"(%148, %156, %cst_84) {transpose_rhs = false} : (vector<64x64xf32>, vector<64x128xf32>, vector<64x128xf32>) -> vector<64x128xf32>
      %158 = arith.addf %153, %157 : vector<64x128xf32>
      %159 = vector.extract_strided_slice %158 {offsets = [0, 0], sizes = [64, 128], strides = [1, 1]} : vector<64x128xf32> to vector<64x128xf32>
      %160 = arith.truncf %159 : vector<64x128xf32> to vector<64x128xbf16>
      %c0_85 = arith.constant 0 : index
      %c64_86 = arith.constant 64 : index
      %c0_87 = arith.constant 0 : index
      %161 = vector.shape_cast %160 : vector<64x128xbf16> to vector<1x64x128xbf16>
      "tpu.vector_store"(%161, %arg8, %c0_85, %c64_86, %c0_87) {add = false, operandSegmentSizes = array<i32: 1, 1, 3, 0>, strides = array<i32>} : (vector<1x64x128xbf16>, memref<1x128x128xbf16>, index, index, index) -> ()
      %162 = arith.mulf %144, %156 : vector<64x128xf32>
      %163 = vector.extract_strided_slice %162 {offsets = [0, 0], sizes = [64, 128], strides = [1, 1]} : vector<64x128xf32> to vector<64x128xf32>
      %cst_88 = arith.constant dense<0.000000e+00> : vector<128x128xf32>
      %164 = "flywheel.matmul"(%98, %163, %cst_88) {transpose_rhs = false} : (vector<128x64xf32>, vector<64x128xf32>, vector<128x128xf32>) -> vector<128x128xf32>
      %165 = vector.extract_strided_slice %146 {offsets = [0, 0], sizes = [1, 128], strides = [1, 1]} : vector<64x128xf32> to vector<1x128xf32>
      %166 = vector.broadcast %165 : vector<1x128xf32> to vector<128x128xf32>
      %167 = arith.mulf %166, %88 : vector<128x128xf32>
      %168 = arith.addf %167, %164 : vector<128x128xf32>
      %c0_89 = arith.constant 0 : index
      %c0_90 = arith.constant 0 : index
      %c0_91 = arith.constant 0 : index
      %169 = vector.shape_cast %168 : vector<128x128xf32> to vector<1x128x128xf32>
      "tpu.vector_store"(%169, %arg10, %c0_89, %c0_90, %c0_91) {add = false, operandSegmentSizes = array<i32: 1, 1, 3, 0>, strides = array<i32>} : (vector<1x128x128xf32>, memref<1x128x128xf32>, index, index, index) -> ()
      %c0_i32_92 = arith.constant 0 : i32
      %170 = arith.cmpi eq, %arg2, %c0_i32_92 : i32
      scf.if %170 {
        %c0_93 = arith.constant 0 : index
        %c0_94 = arith.constant 0 : index
        %c0_95 = arith.constant 0 : index
        %c0_96 = arith.constant 0 : index
        %171 = vector.shape_cast %168 : vector<128x128xf32> to vector<1x1x128x128xf32>
        "tpu.vector_store"(%171, %arg9, %c0_93, %c0_94, %c0_95, %c0_96) {add = false, operandSegmentSizes = array<i32: 1, 1, 4, 0>, strides = array<i32>} : (vector<1x1x128x128xf32>, memref<1x1x128x128xf32>, index, index, index, index) -> ()
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

