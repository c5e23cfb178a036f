// Tile IR of Gated DeltaNet, bf16, three value heads: all three and one chunk per grid step. Made by: sed 's/x2x128xbf16/x3x128xbf16/g; s/x2xf32/x3xf32/g; s/1x2x128x128xf32/1x3x128x128xf32/g' test/Inputs/gdn-kernel-bf16.mlir | flywheel-opt --pass-pipeline='builtin.module(flywheel-layout,flywheel-tile{gdn-heads=3 gdn-chunks-per-step=1})' | mlir-opt-22 --allow-unregistered-dialect
module {
  func.func @main(%arg0: tensor<1x128x1x128xbf16>, %arg1: tensor<1x128x1x128xbf16>, %arg2: tensor<1x128x3x128xbf16>, %arg3: tensor<1x128x3xf32>, %arg4: tensor<1x128x3xf32>) -> (tensor<1x128x3x128xbf16>, tensor<1x3x128x128xf32>) {
    %0 = "stablehlo.reshape"(%arg0) : (tensor<1x128x1x128xbf16>) -> tensor<1x1x128x128xbf16>
    %1 = "stablehlo.reshape"(%arg1) : (tensor<1x128x1x128xbf16>) -> tensor<1x1x128x128xbf16>
    %2 = "stablehlo.reshape"(%arg2) : (tensor<1x128x3x128xbf16>) -> tensor<2x64x3x128xbf16>
    %3 = "stablehlo.transpose"(%2) <{permutation = array<i64: 2, 0, 1, 3>}> : (tensor<2x64x3x128xbf16>) -> tensor<3x2x64x128xbf16>
    %4 = "stablehlo.reshape"(%3) : (tensor<3x2x64x128xbf16>) -> tensor<1x3x128x128xbf16>
    %5 = "stablehlo.reshape"(%arg3) : (tensor<1x128x3xf32>) -> tensor<2x64x3xf32>
    %6 = "stablehlo.transpose"(%5) <{permutation = array<i64: 0, 2, 1>}> : (tensor<2x64x3xf32>) -> tensor<2x3x64xf32>
    %7 = "stablehlo.reshape"(%6) : (tensor<2x3x64xf32>) -> tensor<1x1x2x1x192xf32>
    %8 = "stablehlo.reshape"(%7) : (tensor<1x1x2x1x192xf32>) -> tensor<1x1x2x3x64xf32>
    %9 = "stablehlo.iota"() <{iota_dimension = 0 : i64}> : () -> tensor<64x64xi32>
    %10 = "stablehlo.iota"() <{iota_dimension = 1 : i64}> : () -> tensor<64x64xi32>
    %11 = "stablehlo.compare"(%9, %10) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LE>}> : (tensor<64x64xi32>, tensor<64x64xi32>) -> tensor<64x64xi1>
    %12 = "stablehlo.convert"(%11) : (tensor<64x64xi1>) -> tensor<64x64xf32>
    %13 = "stablehlo.dot_general"(%8, %12) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [4], rhs_contracting_dimensions = [0]>, precision_config = [#stablehlo<precision HIGHEST>, #stablehlo<precision HIGHEST>]}> : (tensor<1x1x2x3x64xf32>, tensor<64x64xf32>) -> tensor<1x1x2x3x64xf32>
    %14 = "stablehlo.slice"(%13) <{limit_indices = array<i64: 1, 1, 2, 3, 64>, start_indices = array<i64: 0, 0, 0, 0, 63>, strides = array<i64: 1, 1, 1, 1, 1>}> : (tensor<1x1x2x3x64xf32>) -> tensor<1x1x2x3x1xf32>
    %15 = "stablehlo.broadcast_in_dim"(%14) <{broadcast_dimensions = array<i64: 0, 1, 2, 3, 4>}> : (tensor<1x1x2x3x1xf32>) -> tensor<1x1x2x3x64xf32>
    %16 = "stablehlo.reshape"(%13) : (tensor<1x1x2x3x64xf32>) -> tensor<1x1x2x1x192xf32>
    %17 = "stablehlo.reshape"(%15) : (tensor<1x1x2x3x64xf32>) -> tensor<1x1x2x1x192xf32>
    %18 = "stablehlo.concatenate"(%16, %17) <{dimension = 3 : i64}> : (tensor<1x1x2x1x192xf32>, tensor<1x1x2x1x192xf32>) -> tensor<1x1x2x2x192xf32>
    %19 = "stablehlo.reshape"(%arg4) : (tensor<1x128x3xf32>) -> tensor<2x64x3xf32>
    %20 = "stablehlo.transpose"(%19) <{permutation = array<i64: 0, 2, 1>}> : (tensor<2x64x3xf32>) -> tensor<2x3x64xf32>
    %21 = "stablehlo.reshape"(%20) : (tensor<2x3x64xf32>) -> tensor<1x1x2x1x192xf32>
    %22:2 = "flywheel.gated_delta_kernel"(%0, %1, %4, %18, %21) {bytes_accessed = 594432 : i64, flops = 69206016 : i64, kernel = @flywheel_kernel_0, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 0, 0>, transcendentals = 25728 : i64} : (tensor<1x1x128x128xbf16>, tensor<1x1x128x128xbf16>, tensor<1x3x128x128xbf16>, tensor<1x1x2x2x192xf32>, tensor<1x1x2x1x192xf32>) -> (tensor<1x128x384xbf16>, tensor<1x3x128x128xf32>)
    %23 = "stablehlo.reshape"(%22#0) : (tensor<1x128x384xbf16>) -> tensor<1x128x3x128xbf16>
    return %23, %22#1 : tensor<1x128x3x128xbf16>, tensor<1x3x128x128xf32>
  }
  module @flywheel_kernel_0 attributes {stable_mosaic.version = 15 : i64} {
    func.func @gated_delta_kernel(%arg0: i32, %arg1: i32, %arg2: i32, %arg3: memref<1x1x64x128xbf16>, %arg4: memref<1x1x64x128xbf16>, %arg5: memref<1x3x64x128xbf16>, %arg6: memref<1x1x1x2x192xf32>, %arg7: memref<1x1x1x1x192xf32>, %arg8: memref<1x64x384xbf16>, %arg9: memref<1x3x128x128xf32>, %arg10: memref<3x128x128xf32>) attributes {dimension_semantics = [#tpu.dimension_semantics<parallel>, #tpu.dimension_semantics<parallel>, #tpu.dimension_semantics<arbitrary>], iteration_bounds = array<i64: 1, 1, 2>, scalar_prefetch = 0 : i64, scratch_operands = 1 : i64, tpu.core_type = #tpu.core_type<tc>, window_params = [{transform_indices = @key_chunks, window_bounds = array<i64: 1, 1, 64, 128>}, {transform_indices = @key_chunks, window_bounds = array<i64: 1, 1, 64, 128>}, {transform_indices = @value_chunks, window_bounds = array<i64: 1, 3, 64, 128>}, {transform_indices = @gate_chunks, window_bounds = array<i64: 1, 1, 1, 2, 192>}, {transform_indices = @gate_chunks, window_bounds = array<i64: 1, 1, 1, 1, 192>}, {transform_indices = @value_tokens, window_bounds = array<i64: 1, 64, 384>}, {transform_indices = @states, window_bounds = array<i64: 1, 3, 128, 128>}]} {
      %c0_i32 = arith.constant 0 : i32
      %0 = arith.cmpi eq, %arg2, %c0_i32 : i32
      scf.if %0 {
        %cst_70 = arith.constant dense<0.000000e+00> : vector<128x128xf32>
        %c0_71 = arith.constant 0 : index
        %c0_72 = arith.constant 0 : index
        %c0_73 = arith.constant 0 : index
        %138 = vector.shape_cast %cst_70 : vector<128x128xf32> to vector<1x128x128xf32>
        "tpu.vector_store"(%138, %arg10, %c0_71, %c0_72, %c0_73) {add = false, operandSegmentSizes = array<i32: 1, 1, 3, 0>, strides = array<i32>} : (vector<1x128x128xf32>, memref<3x128x128xf32>, index, index, index) -> ()
        %cst_74 = arith.constant dense<0.000000e+00> : vector<128x128xf32>
        %c1_75 = arith.constant 1 : index
        %c0_76 = arith.constant 0 : index
        %c0_77 = arith.constant 0 : index
        %139 = vector.shape_cast %cst_74 : vector<128x128xf32> to vector<1x128x128xf32>
        "tpu.vector_store"(%139, %arg10, %c1_75, %c0_76, %c0_77) {add = false, operandSegmentSizes = array<i32: 1, 1, 3, 0>, strides = array<i32>} : (vector<1x128x128xf32>, memref<3x128x128xf32>, index, index, index) -> ()
        %cst_78 = arith.constant dense<0.000000e+00> : vector<128x128xf32>
        %c2_79 = arith.constant 2 : index
        %c0_80 = arith.constant 0 : index
        %c0_81 = arith.constant 0 : index
        %140 = vector.shape_cast %cst_78 : vector<128x128xf32> to vector<1x128x128xf32>
        "tpu.vector_store"(%140, %arg10, %c2_79, %c0_80, %c0_81) {add = false, operandSegmentSizes = array<i32: 1, 1, 3, 0>, strides = array<i32>} : (vector<1x128x128xf32>, memref<3x128x128xf32>, index, index, index) -> ()
      }
      %1 = "tpu.iota"() {dimensions = array<i32: 0>} : () -> vector<192x192xi32>
      %2 = "tpu.iota"() {dimensions = array<i32: 1>} : () -> vector<192x192xi32>
      %3 = arith.cmpi sge, %1, %2 : vector<192x192xi32>
      %4 = arith.cmpi sgt, %1, %2 : vector<192x192xi32>
      %5 = arith.cmpi eq, %1, %2 : vector<192x192xi32>
      %cst = arith.constant dense<64> : vector<192x192xi32>
      %6 = arith.divsi %1, %cst : vector<192x192xi32>
      %7 = arith.divsi %2, %cst : vector<192x192xi32>
      %8 = arith.cmpi eq, %6, %7 : vector<192x192xi32>
      %9 = arith.andi %3, %8 : vector<192x192xi1>
      %10 = arith.andi %4, %8 : vector<192x192xi1>
      %cst_0 = arith.constant dense<1.000000e+00> : vector<192x192xf32>
      %cst_1 = arith.constant dense<0.000000e+00> : vector<192x192xf32>
      %11 = arith.select %5, %cst_0, %cst_1 : vector<192x192xi1>, vector<192x192xf32>
      %cst_2 = arith.constant dense<0xFF800000> : vector<192x192xf32>
      %cst_3 = arith.constant dense<0.0883883461> : vector<192x192xf32>
      %cst_4 = arith.constant dense<0.0883883461> : vector<1x192xf32>
      %c0 = arith.constant 0 : index
      %c0_5 = arith.constant 0 : index
      %c0_6 = arith.constant 0 : index
      %12 = vector.load %arg10[%c0, %c0_5, %c0_6] : memref<3x128x128xf32>, vector<1x128x128xf32>
      %13 = vector.shape_cast %12 : vector<1x128x128xf32> to vector<128x128xf32>
      %c1 = arith.constant 1 : index
      %c0_7 = arith.constant 0 : index
      %c0_8 = arith.constant 0 : index
      %14 = vector.load %arg10[%c1, %c0_7, %c0_8] : memref<3x128x128xf32>, vector<1x128x128xf32>
      %15 = vector.shape_cast %14 : vector<1x128x128xf32> to vector<128x128xf32>
      %c2 = arith.constant 2 : index
      %c0_9 = arith.constant 0 : index
      %c0_10 = arith.constant 0 : index
      %16 = vector.load %arg10[%c2, %c0_9, %c0_10] : memref<3x128x128xf32>, vector<1x128x128xf32>
      %17 = vector.shape_cast %16 : vector<1x128x128xf32> to vector<128x128xf32>
      %c0_11 = arith.constant 0 : index
      %c0_12 = arith.constant 0 : index
      %c0_13 = arith.constant 0 : index
      %c0_14 = arith.constant 0 : index
      %18 = vector.load %arg3[%c0_11, %c0_12, %c0_13, %c0_14] : memref<1x1x64x128xbf16>, vector<1x1x64x128xbf16>
      %c0_15 = arith.constant 0 : index
      %c0_16 = arith.constant 0 : index
      %c0_17 = arith.constant 0 : index
      %c0_18 = arith.constant 0 : index
      %19 = vector.load %arg4[%c0_15, %c0_16, %c0_17, %c0_18] : memref<1x1x64x128xbf16>, vector<1x1x64x128xbf16>
      %20 = vector.broadcast %18 : vector<1x1x64x128xbf16> to vector<1x3x64x128xbf16>
      %21 = vector.shape_cast %20 : vector<1x3x64x128xbf16> to vector<192x128xbf16>
      %22 = vector.broadcast %19 : vector<1x1x64x128xbf16> to vector<1x3x64x128xbf16>
      %23 = vector.shape_cast %22 : vector<1x3x64x128xbf16> to vector<192x128xbf16>
      %c0_19 = arith.constant 0 : index
      %c0_20 = arith.constant 0 : index
      %c0_21 = arith.constant 0 : index
      %c0_22 = arith.constant 0 : index
      %24 = vector.load %arg4[%c0_19, %c0_20, %c0_21, %c0_22] : memref<1x1x64x128xbf16>, vector<1x1x64x128xbf16>
      %25 = vector.shape_cast %24 : vector<1x1x64x128xbf16> to vector<64x128xbf16>
      %26 = arith.extf %25 : vector<64x128xbf16> to vector<64x128xf32>
      %27 = vector.transpose %26, [1, 0] : vector<64x128xf32> to vector<128x64xf32>
      %cst_23 = arith.constant dense<0.000000e+00> : vector<192x192xf32>
      %28 = "flywheel.matmul"(%23, %23, %cst_23) {transpose_rhs = true} : (vector<192x128xbf16>, vector<192x128xbf16>, vector<192x192xf32>) -> vector<192x192xf32>
      %cst_24 = arith.constant dense<0.000000e+00> : vector<192x192xf32>
      %29 = "flywheel.matmul"(%21, %23, %cst_24) {transpose_rhs = true} : (vector<192x128xbf16>, vector<192x128xbf16>, vector<192x192xf32>) -> vector<192x192xf32>
      %30 = arith.extf %21 : vector<192x128xbf16> to vector<192x128xf32>
      %31 = arith.extf %23 : vector<192x128xbf16> to vector<192x128xf32>
      %c0_25 = arith.constant 0 : index
      %c0_26 = arith.constant 0 : index
      %c0_27 = arith.constant 0 : index
      %c0_28 = arith.constant 0 : index
      %32 = vector.load %arg5[%c0_25, %c0_26, %c0_27, %c0_28] : memref<1x3x64x128xbf16>, vector<1x3x64x128xbf16>
      %33 = vector.shape_cast %32 : vector<1x3x64x128xbf16> to vector<192x128xbf16>
      %c0_29 = arith.constant 0 : index
      %c0_30 = arith.constant 0 : index
      %c0_31 = arith.constant 0 : index
      %c0_32 = arith.constant 0 : index
      %c0_33 = arith.constant 0 : index
      %34 = vector.load %arg6[%c0_29, %c0_30, %c0_31, %c0_32, %c0_33] : memref<1x1x1x2x192xf32>, vector<1x1x1x1x192xf32>
      %35 = vector.shape_cast %34 : vector<1x1x1x1x192xf32> to vector<1x192xf32>
      %c0_34 = arith.constant 0 : index
      %c0_35 = arith.constant 0 : index
      %c0_36 = arith.constant 0 : index
      %c1_37 = arith.constant 1 : index
      %c0_38 = arith.constant 0 : index
      %36 = vector.load %arg6[%c0_34, %c0_35, %c0_36, %c1_37, %c0_38] : memref<1x1x1x2x192xf32>, vector<1x1x1x1x192xf32>
      %37 = vector.shape_cast %36 : vector<1x1x1x1x192xf32> to vector<1x192xf32>
      %c0_39 = arith.constant 0 : index
      %c0_40 = arith.constant 0 : index
      %c0_41 = arith.constant 0 : index
      %c0_42 = arith.constant 0 : index
      %c0_43 = arith.constant 0 : index
      %38 = vector.load %arg7[%c0_39, %c0_40, %c0_41, %c0_42, %c0_43] : memref<1x1x1x1x192xf32>, vector<1x1x1x1x192xf32>
      %39 = vector.shape_cast %38 : vector<1x1x1x1x192xf32> to vector<1x192xf32>
      %40 = math.exp %35 : vector<1x192xf32>
      %41 = arith.subf %37, %35 : vector<1x192xf32>
      %42 = math.exp %41 : vector<1x192xf32>
      %43 = math.exp %37 : vector<1x192xf32>
      %44 = arith.mulf %39, %40 : vector<1x192xf32>
      %45 = arith.mulf %40, %cst_4 : vector<1x192xf32>
      %46 = vector.broadcast %35 : vector<1x192xf32> to vector<192x192xf32>
      %47 = vector.transpose %46, [1, 0] : vector<192x192xf32> to vector<192x192xf32>
      %48 = vector.broadcast %35 : vector<1x192xf32> to vector<192x192xf32>
      %49 = arith.subf %47, %48 : vector<192x192xf32>
      %50 = arith.select %9, %49, %cst_2 : vector<192x192xi1>, vector<192x192xf32>
      %51 = math.exp %50 : vector<192x192xf32>
      %52 = vector.broadcast %39 : vector<1x192xf32> to vector<192x192xf32>
      %53 = vector.transpose %52, [1, 0] : vector<192x192xf32> to vector<192x192xf32>
      %54 = arith.mulf %28, %51 : vector<192x192xf32>
      %55 = arith.mulf %54, %53 : vector<192x192xf32>
      %56 = arith.select %10, %55, %cst_1 : vector<192x192xi1>, vector<192x192xf32>
      %c0_44 = arith.constant 0 : index
      %c63 = arith.constant 63 : index
      %c1_45 = arith.constant 1 : index
      %57 = scf.for %arg11 = %c0_44 to %c63 step %c1_45 iter_args(%arg12 = %11) -> (vector<192x192xf32>) {
        %cst_70 = arith.constant dense<0.000000e+00> : vector<192x192xf32>
        %138 = "flywheel.matmul"(%56, %arg12, %cst_70) {precision = "bf16x3", transpose_rhs = false} : (vector<192x192xf32>, vector<192x192xf32>, vector<192x192xf32>) -> vector<192x192xf32>
        %139 = arith.subf %11, %138 : vector<192x192xf32>
        scf.yield %139 : vector<192x192xf32>
      }
      %58 = arith.extf %33 : vector<192x128xbf16> to vector<192x128xf32>
      %59 = vector.broadcast %39 : vector<1x192xf32> to vector<128x192xf32>
      %60 = vector.transpose %59, [1, 0] : vector<128x192xf32> to vector<192x128xf32>
      %61 = arith.mulf %60, %58 : vector<192x128xf32>
      %62 = vector.broadcast %44 : vector<1x192xf32> to vector<128x192xf32>
      %63 = vector.transpose %62, [1, 0] : vector<128x192xf32> to vector<192x128xf32>
      %64 = arith.mulf %63, %31 : vector<192x128xf32>
      %65 = "tpu.concatenate"(%61, %64) {dimension = 1 : i32} : (vector<192x128xf32>, vector<192x128xf32>) -> vector<192x256xf32>
      %cst_46 = arith.constant dense<0.000000e+00> : vector<192x256xf32>
      %66 = "flywheel.matmul"(%57, %65, %cst_46) {precision = "bf16x3", transpose_rhs = false} : (vector<192x192xf32>, vector<192x256xf32>, vector<192x256xf32>) -> vector<192x256xf32>
      %67 = vector.extract_strided_slice %66 {offsets = [0, 0], sizes = [192, 128], strides = [1, 1]} : vector<192x256xf32> to vector<192x128xf32>
      %68 = vector.extract_strided_slice %66 {offsets = [0, 128], sizes = [192, 128], strides = [1, 1]} : vector<192x256xf32> to vector<192x128xf32>
      %69 = vector.broadcast %45 : vector<1x192xf32> to vector<128x192xf32>
      %70 = vector.transpose %69, [1, 0] : vector<128x192xf32> to vector<192x128xf32>
      %71 = arith.mulf %70, %30 : vector<192x128xf32>
      %72 = vector.broadcast %42 : vector<1x192xf32> to vector<128x192xf32>
      %73 = vector.transpose %72, [1, 0] : vector<128x192xf32> to vector<192x128xf32>
      %74 = vector.broadcast %43 : vector<1x192xf32> to vector<128x192xf32>
      %75 = vector.transpose %74, [1, 0] : vector<128x192xf32> to vector<192x128xf32>
      %76 = arith.mulf %29, %51 : vector<192x192xf32>
      %77 = arith.mulf %76, %cst_3 : vector<192x192xf32>
      %78 = vector.extract_strided_slice %68 {offsets = [0, 0], sizes = [64, 128], strides = [1, 1]} : vector<192x128xf32> to vector<64x128xf32>
      %79 = vector.extract_strided_slice %71 {offsets = [0, 0], sizes = [64, 128], strides = [1, 1]} : vector<192x128xf32> to vector<64x128xf32>
      %80 = "tpu.concatenate"(%78, %79) {dimension = 0 : i32} : (vector<64x128xf32>, vector<64x128xf32>) -> vector<128x128xf32>
      %cst_47 = arith.constant dense<0.000000e+00> : vector<128x128xf32>
      %81 = "flywheel.matmul"(%80, %13, %cst_47) {precision = "bf16x3", transpose_rhs = false} : (vector<128x128xf32>, vector<128x128xf32>, vector<128x128xf32>) -> vector<128x128xf32>
      %82 = vector.extract_strided_slice %81 {offsets = [64, 0], sizes = [64, 128], strides = [1, 1]} : vector<128x128xf32> to vector<64x128xf32>
      %83 = vector.extract_strided_slice %81 {offsets = [0, 0], sizes = [64, 128], strides = [1, 1]} : vector<128x128xf32> to vector<64x128xf32>
      %84 = vector.extract_strided_slice %67 {offsets = [0, 0], sizes = [64, 128], strides = [1, 1]} : vector<192x128xf32> to vector<64x128xf32>
      %85 = arith.subf %84, %83 : vector<64x128xf32>
      %86 = vector.extract_strided_slice %68 {offsets = [64, 0], sizes = [64, 128], strides = [1, 1]} : vector<192x128xf32> to vector<64x128xf32>
      %87 = vector.extract_strided_slice %71 {offsets = [64, 0], sizes = [64, 128], strides = [1, 1]} : vector<192x128xf32> to vector<64x128xf32>
      %88 = "tpu.concatenate"(%86, %87) {dimension = 0 : i32} : (vector<64x128xf32>, vector<64x128xf32>) -> vector<128x128xf32>
      %cst_48 = arith.constant dense<0.000000e+00> : vector<128x128xf32>
      %89 = "flywheel.matmul"(%88, %15, %cst_48) {precision = "bf16x3", transpose_rhs = false} : (vector<128x128xf32>, vector<128x128xf32>, vector<128x128xf32>) -> vector<128x128xf32>
      %90 = vector.extract_strided_slice %89 {offsets = [64, 0], sizes = [64, 128], strides = [1, 1]} : vector<128x128xf32> to vector<64x128xf32>
      %91 = vector.extract_strided_slice %89 {offsets = [0, 0], sizes = [64, 128], strides = [1, 1]} : vector<128x128xf32> to vector<64x128xf32>
      %92 = vector.extract_strided_slice %67 {offsets = [64, 0], sizes = [64, 128], strides = [1, 1]} : vector<192x128xf32> to vector<64x128xf32>
      %93 = arith.subf %92, %91 : vector<64x128xf32>
      %94 = vector.extract_strided_slice %68 {offsets = [128, 0], sizes = [64, 128], strides = [1, 1]} : vector<192x128xf32> to vector<64x128xf32>
      %95 = vector.extract_strided_slice %71 {offsets = [128, 0], sizes = [64, 128], strides = [1, 1]} : vector<192x128xf32> to vector<64x128xf32>
      %96 = "tpu.concatenate"(%94, %95) {dimension = 0 : i32} : (vector<64x128xf32>, vector<64x128xf32>) -> vector<128x128xf32>
      %cst_49 = arith.constant dense<0.000000e+00> : vector<128x128xf32>
      %97 = "flywheel.matmul"(%96, %17, %cst_49) {precision = "bf16x3", transpose_rhs = false} : (vector<128x128xf32>, vector<128x128xf32>, vector<128x128xf32>) -> vector<128x128xf32>
      %98 = vector.extract_strided_slice %97 {offsets = [64, 0], sizes = [64, 128], strides = [1, 1]} : vector<128x128xf32> to vector<64x128xf32>
      %99 = vector.extract_strided_slice %97 {offsets = [0, 0], sizes = [64, 128], strides = [1, 1]} : vector<128x128xf32> to vector<64x128xf32>
      %100 = vector.extract_strided_slice %67 {offsets = [128, 0], sizes = [64, 128], strides = [1, 1]} : vector<192x128xf32> to vector<64x128xf32>
      %101 = arith.subf %100, %99 : vector<64x128xf32>
      %102 = "tpu.concatenate"(%85, %93, %101) {dimension = 0 : i32} : (vector<64x128xf32>, vector<64x128xf32>, vector<64x128xf32>) -> vector<192x128xf32>
      %103 = "tpu.concatenate"(%82, %90, %98) {dimension = 0 : i32} : (vector<64x128xf32>, vector<64x128xf32>, vector<64x128xf32>) -> vector<192x128xf32>
      %cst_50 = arith.constant dense<0.000000e+00> : vector<192x128xf32>
      %104 = "flywheel.matmul"(%77, %102, %cst_50) {precision = "bf16x3", transpose_rhs = false} : (vector<192x192xf32>, vector<192x128xf32>, vector<192x128xf32>) -> vector<192x128xf32>
      %105 = arith.addf %103, %104 : vector<192x128xf32>
      %106 = vector.extract_strided_slice %105 {offsets = [0, 0], sizes = [64, 128], strides = [1, 1]} : vector<192x128xf32> to vector<64x128xf32>
      %107 = arith.truncf %106 : vector<64x128xf32> to vector<64x128xbf16>
      %c0_51 = arith.constant 0 : index
      %c0_52 = arith.constant 0 : index
      %c0_53 = arith.constant 0 : index
      %108 = vector.shape_cast %107 : vector<64x128xbf16> to vector<1x64x128xbf16>
      "tpu.vector_store"(%108, %arg8, %c0_51, %c0_52, %c0_53) {add = false, operandSegmentSizes = array<i32: 1, 1, 3, 0>, strides = array<i32>} : (vector<1x64x128xbf16>, memref<1x64x384xbf16>, index, index, index) -> ()
      %109 = vector.extract_strided_slice %105 {offsets = [64, 0], sizes = [64, 128], strides = [1, 1]} : vector<192x128xf32> to vector<64x128xf32>
      %110 = arith.truncf %109 : vector<64x128xf32> to vector<64x128xbf16>
      %c0_54 = arith.constant 0 : index
      %c0_55 = arith.constant 0 : index
      %c128 = arith.constant 128 : index
      %111 = vector.shape_cast %110 : vector<64x128xbf16> to vector<1x64x128xbf16>
      "tpu.vector_store"(%111, %arg8, %c0_54, %c0_55, %c128) {add = false, operandSegmentSizes = array<i32: 1, 1, 3, 0>, strides = array<i32>} : (vector<1x64x128xbf16>, memref<1x64x384xbf16>, index, index, index) -> ()
      %112 = vector.extract_strided_slice %105 {offsets = [128, 0], sizes = [64, 128], strides = [1, 1]} : vector<192x128xf32> to vector<64x128xf32>
      %113 = arith.truncf %112 : vector<64x128xf32> to vector<64x128xbf16>
      %c0_56 = arith.constant 0 : index
      %c0_57 = arith.constant 0 : index
      %c256 = arith.constant 256 : index
      %114 = vector.shape_cast %113 : vector<64x128xbf16> to vector<1x64x128xbf16>
      "tpu.vector_store"(%114, %arg8, %c0_56, %c0_57, %c256) {add = false, operandSegmentSizes = array<i32: 1, 1, 3, 0>, strides = array<i32>} : (vector<1x64x128xbf16>, memref<1x64x384xbf16>, index, index, index) -> ()
      %115 = arith.mulf %73, %102 : vector<192x128xf32>
      %116 = vector.extract_strided_slice %115 {offsets = [0, 0], sizes = [64, 128], strides = [1, 1]} : vector<192x128xf32> to vector<64x128xf32>
      %cst_58 = arith.constant dense<0.000000e+00> : vector<128x128xf32>
      %117 = "flywheel.matmul"(%27, %116, %cst_58) {precision = "bf16x3", transpose_rhs = false} : (vector<128x64xf32>, vector<64x128xf32>, vector<128x128xf32>) -> vector<128x128xf32>
      %118 = vector.extract_strided_slice %75 {offsets = [0, 0], sizes = [1, 128], strides = [1, 1]} : vector<192x128xf32> to vector<1x128xf32>
      %119 = vector.broadcast %118 : vector<1x128xf32> to vector<128x128xf32>
      %120 = arith.mulf %119, %13 : vector<128x128xf32>
      %121 = arith.addf %120, %117 : vector<128x128xf32>
      %122 = vector.extract_strided_slice %115 {offsets = [64, 0], sizes = [64, 128], strides = [1, 1]} : vector<192x128xf32> to vector<64x128xf32>
      %cst_59 = arith.constant dense<0.000000e+00> : vector<128x128xf32>
      %123 = "flywheel.matmul"(%27, %122, %cst_59) {precision = "bf16x3", transpose_rhs = false} : (vector<128x64xf32>, vector<64x128xf32>, vector<128x128xf32>) -> vector<128x128xf32>
      %124 = vector.extract_strided_slice %75 {offsets = [64, 0], sizes = [1, 128], strides = [1, 1]} : vector<192x128xf32> to vector<1x128xf32>
      %125 = vector.broadcast %124 : vector<1x128xf32> to vector<128x128xf32>
      %126 = arith.mulf %125, %15 : vector<128x128xf32>
      %127 = arith.addf %126, %123 : vector<128x128xf32>
      %128 = vector.extract_strided_slice %115 {offsets = [128, 0], sizes = [64, 128], strides = [1, 1]} : vector<192x128xf32> to vector<64x128xf32>
      %cst_60 = arith.constant dense<0.000000e+00> : vector<128x128xf32>
      %129 = "flywheel.matmul"(%27, %128, %cst_60) {precision = "bf16x3", transpose_rhs = false} : (vector<128x64xf32>, vector<64x128xf32>, vector<128x128xf32>) -> vector<128x128xf32>
      %130 = vector.extract_strided_slice %75 {offsets = [128, 0], sizes = [1, 128], strides = [1, 1]} : vector<192x128xf32> to vector<1x128xf32>
      %131 = vector.broadcast %130 : vector<1x128xf32> to vector<128x128xf32>
      %132 = arith.mulf %131, %17 : vector<128x128xf32>
      %133 = arith.addf %132, %129 : vector<128x128xf32>
      %c0_61 = arith.constant 0 : index
      %c0_62 = arith.constant 0 : index
      %c0_63 = arith.constant 0 : index
      %134 = vector.shape_cast %121 : vector<128x128xf32> to vector<1x128x128xf32>
      "tpu.vector_store"(%134, %arg10, %c0_61, %c0_62, %c0_63) {add = false, operandSegmentSizes = array<i32: 1, 1, 3, 0>, strides = array<i32>} : (vector<1x128x128xf32>, memref<3x128x128xf32>, index, index, index) -> ()
      %c1_64 = arith.constant 1 : index
      %c0_65 = arith.constant 0 : index
      %c0_66 = arith.constant 0 : index
      %135 = vector.shape_cast %127 : vector<128x128xf32> to vector<1x128x128xf32>
      "tpu.vector_store"(%135, %arg10, %c1_64, %c0_65, %c0_66) {add = false, operandSegmentSizes = array<i32: 1, 1, 3, 0>, strides = array<i32>} : (vector<1x128x128xf32>, memref<3x128x128xf32>, index, index, index) -> ()
      %c2_67 = arith.constant 2 : index
      %c0_68 = arith.constant 0 : index
      %c0_69 = arith.constant 0 : index
      %136 = vector.shape_cast %133 : vector<128x128xf32> to vector<1x128x128xf32>
      "tpu.vector_store"(%136, %arg10, %c2_67, %c0_68, %c0_69) {add = false, operandSegmentSizes = array<i32: 1, 1, 3, 0>, strides = array<i32>} : (vector<1x128x128xf32>, memref<3x128x128xf32>, index, index, index) -> ()
      %c1_i32 = arith.constant 1 : i32
      %137 = arith.cmpi eq, %arg2, %c1_i32 : i32
      scf.if %137 {
        %c0_70 = arith.constant 0 : index
        %c0_71 = arith.constant 0 : index
        %c0_72 = arith.constant 0 : index
        %c0_73 = arith.constant 0 : index
        %138 = vector.shape_cast %121 : vector<128x128xf32> to vector<1x1x128x128xf32>
        "tpu.vector_store"(%138, %arg9, %c0_70, %c0_71, %c0_72, %c0_73) {add = false, operandSegmentSizes = array<i32: 1, 1, 4, 0>, strides = array<i32>} : (vector<1x1x128x128xf32>, memref<1x3x128x128xf32>, index, index, index, index) -> ()
        %c0_74 = arith.constant 0 : index
        %c1_75 = arith.constant 1 : index
        %c0_76 = arith.constant 0 : index
        %c0_77 = arith.constant 0 : index
        %139 = vector.shape_cast %127 : vector<128x128xf32> to vector<1x1x128x128xf32>
        "tpu.vector_store"(%139, %arg9, %c0_74, %c1_75, %c0_76, %c0_77) {add = false, operandSegmentSizes = array<i32: 1, 1, 4, 0>, strides = array<i32>} : (vector<1x1x128x128xf32>, memref<1x3x128x128xf32>, index, index, index, index) -> ()
        %c0_78 = arith.constant 0 : index
        %c2_79 = arith.constant 2 : index
        %c0_80 = arith.constant 0 : index
        %c0_81 = arith.constant 0 : index
        %140 = vector.shape_cast %133 : vector<128x128xf32> to vector<1x1x128x128xf32>
        "tpu.vector_store"(%140, %arg9, %c0_78, %c2_79, %c0_80, %c0_81) {add = false, operandSegmentSizes = array<i32: 1, 1, 4, 0>, strides = array<i32>} : (vector<1x1x128x128xf32>, memref<1x3x128x128xf32>, index, index, index, index) -> ()
      }
      return
    }
    func.func @key_chunks(%arg0: i32, %arg1: i32, %arg2: i32) -> (i32, i32, i32, i32) {
      %c0_i32 = arith.constant 0 : i32
      %c3_i32 = arith.constant 3 : i32
      %c3_i32_0 = arith.constant 3 : i32
      %c1_i32 = arith.constant 1 : i32
      %0 = arith.muli %arg1, %c3_i32 : i32
      %1 = arith.divsi %0, %c3_i32_0 : i32
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

