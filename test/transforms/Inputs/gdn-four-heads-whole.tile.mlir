// Tile IR of Gated DeltaNet, bf16, four value heads: all four and one chunk per grid step, in one block of 256 rows. Made by: sed 's/x2x128xbf16/x4x128xbf16/g; s/x2xf32/x4xf32/g; s/1x2x128x128xf32/1x4x128x128xf32/g' test/Inputs/gdn-kernel-bf16.mlir | flywheel-opt --pass-pipeline='builtin.module(flywheel-layout,flywheel-tile{gdn-heads=4 gdn-block-rows=0 gdn-chunks-per-step=1})' | mlir-opt-22 --allow-unregistered-dialect
module {
  func.func @main(%arg0: tensor<1x128x1x128xbf16>, %arg1: tensor<1x128x1x128xbf16>, %arg2: tensor<1x128x4x128xbf16>, %arg3: tensor<1x128x4xf32>, %arg4: tensor<1x128x4xf32>) -> (tensor<1x128x4x128xbf16>, tensor<1x4x128x128xf32>) {
    %0 = "stablehlo.reshape"(%arg0) : (tensor<1x128x1x128xbf16>) -> tensor<1x1x128x128xbf16>
    %1 = "stablehlo.reshape"(%arg1) : (tensor<1x128x1x128xbf16>) -> tensor<1x1x128x128xbf16>
    %2 = "stablehlo.reshape"(%arg2) : (tensor<1x128x4x128xbf16>) -> tensor<2x64x4x128xbf16>
    %3 = "stablehlo.transpose"(%2) <{permutation = array<i64: 2, 0, 1, 3>}> : (tensor<2x64x4x128xbf16>) -> tensor<4x2x64x128xbf16>
    %4 = "stablehlo.reshape"(%3) : (tensor<4x2x64x128xbf16>) -> tensor<1x4x128x128xbf16>
    %5 = "stablehlo.reshape"(%arg3) : (tensor<1x128x4xf32>) -> tensor<2x64x4xf32>
    %6 = "stablehlo.transpose"(%5) <{permutation = array<i64: 0, 2, 1>}> : (tensor<2x64x4xf32>) -> tensor<2x4x64xf32>
    %7 = "stablehlo.reshape"(%6) : (tensor<2x4x64xf32>) -> tensor<1x1x2x1x256xf32>
    %8 = "stablehlo.reshape"(%7) : (tensor<1x1x2x1x256xf32>) -> tensor<1x1x2x4x64xf32>
    %9 = "stablehlo.iota"() <{iota_dimension = 0 : i64}> : () -> tensor<64x64xi32>
    %10 = "stablehlo.iota"() <{iota_dimension = 1 : i64}> : () -> tensor<64x64xi32>
    %11 = "stablehlo.compare"(%9, %10) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LE>}> : (tensor<64x64xi32>, tensor<64x64xi32>) -> tensor<64x64xi1>
    %12 = "stablehlo.convert"(%11) : (tensor<64x64xi1>) -> tensor<64x64xf32>
    %13 = "stablehlo.dot_general"(%8, %12) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [4], rhs_contracting_dimensions = [0]>, precision_config = [#stablehlo<precision HIGHEST>, #stablehlo<precision HIGHEST>]}> : (tensor<1x1x2x4x64xf32>, tensor<64x64xf32>) -> tensor<1x1x2x4x64xf32>
    %14 = "stablehlo.slice"(%13) <{limit_indices = array<i64: 1, 1, 2, 4, 64>, start_indices = array<i64: 0, 0, 0, 0, 63>, strides = array<i64: 1, 1, 1, 1, 1>}> : (tensor<1x1x2x4x64xf32>) -> tensor<1x1x2x4x1xf32>
    %15 = "stablehlo.broadcast_in_dim"(%14) <{broadcast_dimensions = array<i64: 0, 1, 2, 3, 4>}> : (tensor<1x1x2x4x1xf32>) -> tensor<1x1x2x4x64xf32>
    %16 = "stablehlo.reshape"(%13) : (tensor<1x1x2x4x64xf32>) -> tensor<1x1x2x1x256xf32>
    %17 = "stablehlo.reshape"(%15) : (tensor<1x1x2x4x64xf32>) -> tensor<1x1x2x1x256xf32>
    %18 = "stablehlo.concatenate"(%16, %17) <{dimension = 3 : i64}> : (tensor<1x1x2x1x256xf32>, tensor<1x1x2x1x256xf32>) -> tensor<1x1x2x2x256xf32>
    %19 = "stablehlo.reshape"(%arg4) : (tensor<1x128x4xf32>) -> tensor<2x64x4xf32>
    %20 = "stablehlo.transpose"(%19) <{permutation = array<i64: 0, 2, 1>}> : (tensor<2x64x4xf32>) -> tensor<2x4x64xf32>
    %21 = "stablehlo.reshape"(%20) : (tensor<2x4x64xf32>) -> tensor<1x1x2x1x256xf32>
    %22:2 = "flywheel.gated_delta_kernel"(%0, %1, %4, %18, %21) {bytes_accessed = 792576 : i64, flops = 92274688 : i64, kernel = @flywheel_kernel_0, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 0, 0>, transcendentals = 34304 : i64} : (tensor<1x1x128x128xbf16>, tensor<1x1x128x128xbf16>, tensor<1x4x128x128xbf16>, tensor<1x1x2x2x256xf32>, tensor<1x1x2x1x256xf32>) -> (tensor<1x128x512xbf16>, tensor<1x4x128x128xf32>)
    %23 = "stablehlo.reshape"(%22#0) : (tensor<1x128x512xbf16>) -> tensor<1x128x4x128xbf16>
    return %23, %22#1 : tensor<1x128x4x128xbf16>, tensor<1x4x128x128xf32>
  }
  module @flywheel_kernel_0 attributes {stable_mosaic.version = 15 : i64} {
    func.func @gated_delta_kernel(%arg0: i32, %arg1: i32, %arg2: i32, %arg3: memref<1x1x64x128xbf16>, %arg4: memref<1x1x64x128xbf16>, %arg5: memref<1x4x64x128xbf16>, %arg6: memref<1x1x1x2x256xf32>, %arg7: memref<1x1x1x1x256xf32>, %arg8: memref<1x64x512xbf16>, %arg9: memref<1x4x128x128xf32>, %arg10: memref<4x128x128xf32>) attributes {dimension_semantics = [#tpu.dimension_semantics<parallel>, #tpu.dimension_semantics<parallel>, #tpu.dimension_semantics<arbitrary>], iteration_bounds = array<i64: 1, 1, 2>, scalar_prefetch = 0 : i64, scratch_operands = 1 : i64, tpu.core_type = #tpu.core_type<tc>, window_params = [{transform_indices = @key_chunks, window_bounds = array<i64: 1, 1, 64, 128>}, {transform_indices = @key_chunks, window_bounds = array<i64: 1, 1, 64, 128>}, {transform_indices = @value_chunks, window_bounds = array<i64: 1, 4, 64, 128>}, {transform_indices = @gate_chunks, window_bounds = array<i64: 1, 1, 1, 2, 256>}, {transform_indices = @gate_chunks, window_bounds = array<i64: 1, 1, 1, 1, 256>}, {transform_indices = @value_tokens, window_bounds = array<i64: 1, 64, 512>}, {transform_indices = @states, window_bounds = array<i64: 1, 4, 128, 128>}]} {
      %c0_i32 = arith.constant 0 : i32
      %0 = arith.cmpi eq, %arg2, %c0_i32 : i32
      scf.if %0 {
        %cst_79 = arith.constant dense<0.000000e+00> : vector<128x128xf32>
        %c0_80 = arith.constant 0 : index
        %c0_81 = arith.constant 0 : index
        %c0_82 = arith.constant 0 : index
        %158 = vector.shape_cast %cst_79 : vector<128x128xf32> to vector<1x128x128xf32>
        "tpu.vector_store"(%158, %arg10, %c0_80, %c0_81, %c0_82) {add = false, operandSegmentSizes = array<i32: 1, 1, 3, 0>, strides = array<i32>} : (vector<1x128x128xf32>, memref<4x128x128xf32>, index, index, index) -> ()
        %cst_83 = arith.constant dense<0.000000e+00> : vector<128x128xf32>
        %c1_84 = arith.constant 1 : index
        %c0_85 = arith.constant 0 : index
        %c0_86 = arith.constant 0 : index
        %159 = vector.shape_cast %cst_83 : vector<128x128xf32> to vector<1x128x128xf32>
        "tpu.vector_store"(%159, %arg10, %c1_84, %c0_85, %c0_86) {add = false, operandSegmentSizes = array<i32: 1, 1, 3, 0>, strides = array<i32>} : (vector<1x128x128xf32>, memref<4x128x128xf32>, index, index, index) -> ()
        %cst_87 = arith.constant dense<0.000000e+00> : vector<128x128xf32>
        %c2_88 = arith.constant 2 : index
        %c0_89 = arith.constant 0 : index
        %c0_90 = arith.constant 0 : index
        %160 = vector.shape_cast %cst_87 : vector<128x128xf32> to vector<1x128x128xf32>
        "tpu.vector_store"(%160, %arg10, %c2_88, %c0_89, %c0_90) {add = false, operandSegmentSizes = array<i32: 1, 1, 3, 0>, strides = array<i32>} : (vector<1x128x128xf32>, memref<4x128x128xf32>, index, index, index) -> ()
        %cst_91 = arith.constant dense<0.000000e+00> : vector<128x128xf32>
        %c3_92 = arith.constant 3 : index
        %c0_93 = arith.constant 0 : index
        %c0_94 = arith.constant 0 : index
        %161 = vector.shape_cast %cst_91 : vector<128x128xf32> to vector<1x128x128xf32>
        "tpu.vector_store"(%161, %arg10, %c3_92, %c0_93, %c0_94) {add = false, operandSegmentSizes = array<i32: 1, 1, 3, 0>, strides = array<i32>} : (vector<1x128x128xf32>, memref<4x128x128xf32>, index, index, index) -> ()
      }
      %1 = "tpu.iota"() {dimensions = array<i32: 0>} : () -> vector<256x256xi32>
      %2 = "tpu.iota"() {dimensions = array<i32: 1>} : () -> vector<256x256xi32>
      %3 = arith.cmpi sge, %1, %2 : vector<256x256xi32>
      %4 = arith.cmpi sgt, %1, %2 : vector<256x256xi32>
      %5 = arith.cmpi eq, %1, %2 : vector<256x256xi32>
      %cst = arith.constant dense<64> : vector<256x256xi32>
      %6 = arith.divsi %1, %cst : vector<256x256xi32>
      %7 = arith.divsi %2, %cst : vector<256x256xi32>
      %8 = arith.cmpi eq, %6, %7 : vector<256x256xi32>
      %9 = arith.andi %3, %8 : vector<256x256xi1>
      %10 = arith.andi %4, %8 : vector<256x256xi1>
      %cst_0 = arith.constant dense<1.000000e+00> : vector<256x256xf32>
      %cst_1 = arith.constant dense<0.000000e+00> : vector<256x256xf32>
      %11 = arith.select %5, %cst_0, %cst_1 : vector<256x256xi1>, vector<256x256xf32>
      %cst_2 = arith.constant dense<0xFF800000> : vector<256x256xf32>
      %cst_3 = arith.constant dense<0.0883883461> : vector<256x256xf32>
      %cst_4 = arith.constant dense<0.0883883461> : vector<1x256xf32>
      %c0 = arith.constant 0 : index
      %c0_5 = arith.constant 0 : index
      %c0_6 = arith.constant 0 : index
      %12 = vector.load %arg10[%c0, %c0_5, %c0_6] : memref<4x128x128xf32>, vector<1x128x128xf32>
      %13 = vector.shape_cast %12 : vector<1x128x128xf32> to vector<128x128xf32>
      %c1 = arith.constant 1 : index
      %c0_7 = arith.constant 0 : index
      %c0_8 = arith.constant 0 : index
      %14 = vector.load %arg10[%c1, %c0_7, %c0_8] : memref<4x128x128xf32>, vector<1x128x128xf32>
      %15 = vector.shape_cast %14 : vector<1x128x128xf32> to vector<128x128xf32>
      %c2 = arith.constant 2 : index
      %c0_9 = arith.constant 0 : index
      %c0_10 = arith.constant 0 : index
      %16 = vector.load %arg10[%c2, %c0_9, %c0_10] : memref<4x128x128xf32>, vector<1x128x128xf32>
      %17 = vector.shape_cast %16 : vector<1x128x128xf32> to vector<128x128xf32>
      %c3 = arith.constant 3 : index
      %c0_11 = arith.constant 0 : index
      %c0_12 = arith.constant 0 : index
      %18 = vector.load %arg10[%c3, %c0_11, %c0_12] : memref<4x128x128xf32>, vector<1x128x128xf32>
      %19 = vector.shape_cast %18 : vector<1x128x128xf32> to vector<128x128xf32>
      %c0_13 = arith.constant 0 : index
      %c0_14 = arith.constant 0 : index
      %c0_15 = arith.constant 0 : index
      %c0_16 = arith.constant 0 : index
      %20 = vector.load %arg3[%c0_13, %c0_14, %c0_15, %c0_16] : memref<1x1x64x128xbf16>, vector<1x1x64x128xbf16>
      %c0_17 = arith.constant 0 : index
      %c0_18 = arith.constant 0 : index
      %c0_19 = arith.constant 0 : index
      %c0_20 = arith.constant 0 : index
      %21 = vector.load %arg4[%c0_17, %c0_18, %c0_19, %c0_20] : memref<1x1x64x128xbf16>, vector<1x1x64x128xbf16>
      %22 = vector.broadcast %20 : vector<1x1x64x128xbf16> to vector<1x4x64x128xbf16>
      %23 = vector.shape_cast %22 : vector<1x4x64x128xbf16> to vector<256x128xbf16>
      %24 = vector.broadcast %21 : vector<1x1x64x128xbf16> to vector<1x4x64x128xbf16>
      %25 = vector.shape_cast %24 : vector<1x4x64x128xbf16> to vector<256x128xbf16>
      %c0_21 = arith.constant 0 : index
      %c0_22 = arith.constant 0 : index
      %c0_23 = arith.constant 0 : index
      %c0_24 = arith.constant 0 : index
      %26 = vector.load %arg4[%c0_21, %c0_22, %c0_23, %c0_24] : memref<1x1x64x128xbf16>, vector<1x1x64x128xbf16>
      %27 = vector.shape_cast %26 : vector<1x1x64x128xbf16> to vector<64x128xbf16>
      %28 = arith.extf %27 : vector<64x128xbf16> to vector<64x128xf32>
      %29 = vector.transpose %28, [1, 0] : vector<64x128xf32> to vector<128x64xf32>
      %cst_25 = arith.constant dense<0.000000e+00> : vector<256x256xf32>
      %30 = "flywheel.matmul"(%25, %25, %cst_25) {transpose_rhs = true} : (vector<256x128xbf16>, vector<256x128xbf16>, vector<256x256xf32>) -> vector<256x256xf32>
      %cst_26 = arith.constant dense<0.000000e+00> : vector<256x256xf32>
      %31 = "flywheel.matmul"(%23, %25, %cst_26) {transpose_rhs = true} : (vector<256x128xbf16>, vector<256x128xbf16>, vector<256x256xf32>) -> vector<256x256xf32>
      %32 = arith.extf %23 : vector<256x128xbf16> to vector<256x128xf32>
      %33 = arith.extf %25 : vector<256x128xbf16> to vector<256x128xf32>
      %c0_27 = arith.constant 0 : index
      %c0_28 = arith.constant 0 : index
      %c0_29 = arith.constant 0 : index
      %c0_30 = arith.constant 0 : index
      %34 = vector.load %arg5[%c0_27, %c0_28, %c0_29, %c0_30] : memref<1x4x64x128xbf16>, vector<1x4x64x128xbf16>
      %35 = vector.shape_cast %34 : vector<1x4x64x128xbf16> to vector<256x128xbf16>
      %c0_31 = arith.constant 0 : index
      %c0_32 = arith.constant 0 : index
      %c0_33 = arith.constant 0 : index
      %c0_34 = arith.constant 0 : index
      %c0_35 = arith.constant 0 : index
      %36 = vector.load %arg6[%c0_31, %c0_32, %c0_33, %c0_34, %c0_35] : memref<1x1x1x2x256xf32>, vector<1x1x1x1x256xf32>
      %37 = vector.shape_cast %36 : vector<1x1x1x1x256xf32> to vector<1x256xf32>
      %c0_36 = arith.constant 0 : index
      %c0_37 = arith.constant 0 : index
      %c0_38 = arith.constant 0 : index
      %c1_39 = arith.constant 1 : index
      %c0_40 = arith.constant 0 : index
      %38 = vector.load %arg6[%c0_36, %c0_37, %c0_38, %c1_39, %c0_40] : memref<1x1x1x2x256xf32>, vector<1x1x1x1x256xf32>
      %39 = vector.shape_cast %38 : vector<1x1x1x1x256xf32> to vector<1x256xf32>
      %c0_41 = arith.constant 0 : index
      %c0_42 = arith.constant 0 : index
      %c0_43 = arith.constant 0 : index
      %c0_44 = arith.constant 0 : index
      %c0_45 = arith.constant 0 : index
      %40 = vector.load %arg7[%c0_41, %c0_42, %c0_43, %c0_44, %c0_45] : memref<1x1x1x1x256xf32>, vector<1x1x1x1x256xf32>
      %41 = vector.shape_cast %40 : vector<1x1x1x1x256xf32> to vector<1x256xf32>
      %42 = math.exp %37 : vector<1x256xf32>
      %43 = arith.subf %39, %37 : vector<1x256xf32>
      %44 = math.exp %43 : vector<1x256xf32>
      %45 = math.exp %39 : vector<1x256xf32>
      %46 = arith.mulf %41, %42 : vector<1x256xf32>
      %47 = arith.mulf %42, %cst_4 : vector<1x256xf32>
      %48 = vector.broadcast %37 : vector<1x256xf32> to vector<256x256xf32>
      %49 = vector.transpose %48, [1, 0] : vector<256x256xf32> to vector<256x256xf32>
      %50 = vector.broadcast %37 : vector<1x256xf32> to vector<256x256xf32>
      %51 = arith.subf %49, %50 : vector<256x256xf32>
      %52 = arith.select %9, %51, %cst_2 : vector<256x256xi1>, vector<256x256xf32>
      %53 = math.exp %52 : vector<256x256xf32>
      %54 = vector.broadcast %41 : vector<1x256xf32> to vector<256x256xf32>
      %55 = vector.transpose %54, [1, 0] : vector<256x256xf32> to vector<256x256xf32>
      %56 = arith.mulf %30, %53 : vector<256x256xf32>
      %57 = arith.mulf %56, %55 : vector<256x256xf32>
      %58 = arith.select %10, %57, %cst_1 : vector<256x256xi1>, vector<256x256xf32>
      %c0_46 = arith.constant 0 : index
      %c63 = arith.constant 63 : index
      %c1_47 = arith.constant 1 : index
      %59 = scf.for %arg11 = %c0_46 to %c63 step %c1_47 iter_args(%arg12 = %11) -> (vector<256x256xf32>) {
        %cst_79 = arith.constant dense<0.000000e+00> : vector<256x256xf32>
        %158 = "flywheel.matmul"(%58, %arg12, %cst_79) {precision = "bf16x3", transpose_rhs = false} : (vector<256x256xf32>, vector<256x256xf32>, vector<256x256xf32>) -> vector<256x256xf32>
        %159 = arith.subf %11, %158 : vector<256x256xf32>
        scf.yield %159 : vector<256x256xf32>
      }
      %60 = arith.extf %35 : vector<256x128xbf16> to vector<256x128xf32>
      %61 = vector.broadcast %41 : vector<1x256xf32> to vector<128x256xf32>
      %62 = vector.transpose %61, [1, 0] : vector<128x256xf32> to vector<256x128xf32>
      %63 = arith.mulf %62, %60 : vector<256x128xf32>
      %64 = vector.broadcast %46 : vector<1x256xf32> to vector<128x256xf32>
      %65 = vector.transpose %64, [1, 0] : vector<128x256xf32> to vector<256x128xf32>
      %66 = arith.mulf %65, %33 : vector<256x128xf32>
      %67 = "tpu.concatenate"(%63, %66) {dimension = 1 : i32} : (vector<256x128xf32>, vector<256x128xf32>) -> vector<256x256xf32>
      %cst_48 = arith.constant dense<0.000000e+00> : vector<256x256xf32>
      %68 = "flywheel.matmul"(%59, %67, %cst_48) {precision = "bf16x3", transpose_rhs = false} : (vector<256x256xf32>, vector<256x256xf32>, vector<256x256xf32>) -> vector<256x256xf32>
      %69 = vector.extract_strided_slice %68 {offsets = [0, 0], sizes = [256, 128], strides = [1, 1]} : vector<256x256xf32> to vector<256x128xf32>
      %70 = vector.extract_strided_slice %68 {offsets = [0, 128], sizes = [256, 128], strides = [1, 1]} : vector<256x256xf32> to vector<256x128xf32>
      %71 = vector.broadcast %47 : vector<1x256xf32> to vector<128x256xf32>
      %72 = vector.transpose %71, [1, 0] : vector<128x256xf32> to vector<256x128xf32>
      %73 = arith.mulf %72, %32 : vector<256x128xf32>
      %74 = vector.broadcast %44 : vector<1x256xf32> to vector<128x256xf32>
      %75 = vector.transpose %74, [1, 0] : vector<128x256xf32> to vector<256x128xf32>
      %76 = vector.broadcast %45 : vector<1x256xf32> to vector<128x256xf32>
      %77 = vector.transpose %76, [1, 0] : vector<128x256xf32> to vector<256x128xf32>
      %78 = arith.mulf %31, %53 : vector<256x256xf32>
      %79 = arith.mulf %78, %cst_3 : vector<256x256xf32>
      %80 = vector.extract_strided_slice %70 {offsets = [0, 0], sizes = [64, 128], strides = [1, 1]} : vector<256x128xf32> to vector<64x128xf32>
      %81 = vector.extract_strided_slice %73 {offsets = [0, 0], sizes = [64, 128], strides = [1, 1]} : vector<256x128xf32> to vector<64x128xf32>
      %82 = "tpu.concatenate"(%80, %81) {dimension = 0 : i32} : (vector<64x128xf32>, vector<64x128xf32>) -> vector<128x128xf32>
      %cst_49 = arith.constant dense<0.000000e+00> : vector<128x128xf32>
      %83 = "flywheel.matmul"(%82, %13, %cst_49) {precision = "bf16x3", transpose_rhs = false} : (vector<128x128xf32>, vector<128x128xf32>, vector<128x128xf32>) -> vector<128x128xf32>
      %84 = vector.extract_strided_slice %83 {offsets = [64, 0], sizes = [64, 128], strides = [1, 1]} : vector<128x128xf32> to vector<64x128xf32>
      %85 = vector.extract_strided_slice %83 {offsets = [0, 0], sizes = [64, 128], strides = [1, 1]} : vector<128x128xf32> to vector<64x128xf32>
      %86 = vector.extract_strided_slice %69 {offsets = [0, 0], sizes = [64, 128], strides = [1, 1]} : vector<256x128xf32> to vector<64x128xf32>
      %87 = arith.subf %86, %85 : vector<64x128xf32>
      %88 = vector.extract_strided_slice %70 {offsets = [64, 0], sizes = [64, 128], strides = [1, 1]} : vector<256x128xf32> to vector<64x128xf32>
      %89 = vector.extract_strided_slice %73 {offsets = [64, 0], sizes = [64, 128], strides = [1, 1]} : vector<256x128xf32> to vector<64x128xf32>
      %90 = "tpu.concatenate"(%88, %89) {dimension = 0 : i32} : (vector<64x128xf32>, vector<64x128xf32>) -> vector<128x128xf32>
      %cst_50 = arith.constant dense<0.000000e+00> : vector<128x128xf32>
      %91 = "flywheel.matmul"(%90, %15, %cst_50) {precision = "bf16x3", transpose_rhs = false} : (vector<128x128xf32>, vector<128x128xf32>, vector<128x128xf32>) -> vector<128x128xf32>
      %92 = vector.extract_strided_slice %91 {offsets = [64, 0], sizes = [64, 128], strides = [1, 1]} : vector<128x128xf32> to vector<64x128xf32>
      %93 = vector.extract_strided_slice %91 {offsets = [0, 0], sizes = [64, 128], strides = [1, 1]} : vector<128x128xf32> to vector<64x128xf32>
      %94 = vector.extract_strided_slice %69 {offsets = [64, 0], sizes = [64, 128], strides = [1, 1]} : vector<256x128xf32> to vector<64x128xf32>
      %95 = arith.subf %94, %93 : vector<64x128xf32>
      %96 = vector.extract_strided_slice %70 {offsets = [128, 0], sizes = [64, 128], strides = [1, 1]} : vector<256x128xf32> to vector<64x128xf32>
      %97 = vector.extract_strided_slice %73 {offsets = [128, 0], sizes = [64, 128], strides = [1, 1]} : vector<256x128xf32> to vector<64x128xf32>
      %98 = "tpu.concatenate"(%96, %97) {dimension = 0 : i32} : (vector<64x128xf32>, vector<64x128xf32>) -> vector<128x128xf32>
      %cst_51 = arith.constant dense<0.000000e+00> : vector<128x128xf32>
      %99 = "flywheel.matmul"(%98, %17, %cst_51) {precision = "bf16x3", transpose_rhs = false} : (vector<128x128xf32>, vector<128x128xf32>, vector<128x128xf32>) -> vector<128x128xf32>
      %100 = vector.extract_strided_slice %99 {offsets = [64, 0], sizes = [64, 128], strides = [1, 1]} : vector<128x128xf32> to vector<64x128xf32>
      %101 = vector.extract_strided_slice %99 {offsets = [0, 0], sizes = [64, 128], strides = [1, 1]} : vector<128x128xf32> to vector<64x128xf32>
      %102 = vector.extract_strided_slice %69 {offsets = [128, 0], sizes = [64, 128], strides = [1, 1]} : vector<256x128xf32> to vector<64x128xf32>
      %103 = arith.subf %102, %101 : vector<64x128xf32>
      %104 = vector.extract_strided_slice %70 {offsets = [192, 0], sizes = [64, 128], strides = [1, 1]} : vector<256x128xf32> to vector<64x128xf32>
      %105 = vector.extract_strided_slice %73 {offsets = [192, 0], sizes = [64, 128], strides = [1, 1]} : vector<256x128xf32> to vector<64x128xf32>
      %106 = "tpu.concatenate"(%104, %105) {dimension = 0 : i32} : (vector<64x128xf32>, vector<64x128xf32>) -> vector<128x128xf32>
      %cst_52 = arith.constant dense<0.000000e+00> : vector<128x128xf32>
      %107 = "flywheel.matmul"(%106, %19, %cst_52) {precision = "bf16x3", transpose_rhs = false} : (vector<128x128xf32>, vector<128x128xf32>, vector<128x128xf32>) -> vector<128x128xf32>
      %108 = vector.extract_strided_slice %107 {offsets = [64, 0], sizes = [64, 128], strides = [1, 1]} : vector<128x128xf32> to vector<64x128xf32>
      %109 = vector.extract_strided_slice %107 {offsets = [0, 0], sizes = [64, 128], strides = [1, 1]} : vector<128x128xf32> to vector<64x128xf32>
      %110 = vector.extract_strided_slice %69 {offsets = [192, 0], sizes = [64, 128], strides = [1, 1]} : vector<256x128xf32> to vector<64x128xf32>
      %111 = arith.subf %110, %109 : vector<64x128xf32>
      %112 = "tpu.concatenate"(%87, %95, %103, %111) {dimension = 0 : i32} : (vector<64x128xf32>, vector<64x128xf32>, vector<64x128xf32>, vector<64x128xf32>) -> vector<256x128xf32>
      %113 = "tpu.concatenate"(%84, %92, %100, %108) {dimension = 0 : i32} : (vector<64x128xf32>, vector<64x128xf32>, vector<64x128xf32>, vector<64x128xf32>) -> vector<256x128xf32>
      %cst_53 = arith.constant dense<0.000000e+00> : vector<256x128xf32>
      %114 = "flywheel.matmul"(%79, %112, %cst_53) {precision = "bf16x3", transpose_rhs = false} : (vector<256x256xf32>, vector<256x128xf32>, vector<256x128xf32>) -> vector<256x128xf32>
      %115 = arith.addf %113, %114 : vector<256x128xf32>
      %116 = vector.extract_strided_slice %115 {offsets = [0, 0], sizes = [64, 128], strides = [1, 1]} : vector<256x128xf32> to vector<64x128xf32>
      %117 = arith.truncf %116 : vector<64x128xf32> to vector<64x128xbf16>
      %c0_54 = arith.constant 0 : index
      %c0_55 = arith.constant 0 : index
      %c0_56 = arith.constant 0 : index
      %118 = vector.shape_cast %117 : vector<64x128xbf16> to vector<1x64x128xbf16>
      "tpu.vector_store"(%118, %arg8, %c0_54, %c0_55, %c0_56) {add = false, operandSegmentSizes = array<i32: 1, 1, 3, 0>, strides = array<i32>} : (vector<1x64x128xbf16>, memref<1x64x512xbf16>, index, index, index) -> ()
      %119 = vector.extract_strided_slice %115 {offsets = [64, 0], sizes = [64, 128], strides = [1, 1]} : vector<256x128xf32> to vector<64x128xf32>
      %120 = arith.truncf %119 : vector<64x128xf32> to vector<64x128xbf16>
      %c0_57 = arith.constant 0 : index
      %c0_58 = arith.constant 0 : index
      %c128 = arith.constant 128 : index
      %121 = vector.shape_cast %120 : vector<64x128xbf16> to vector<1x64x128xbf16>
      "tpu.vector_store"(%121, %arg8, %c0_57, %c0_58, %c128) {add = false, operandSegmentSizes = array<i32: 1, 1, 3, 0>, strides = array<i32>} : (vector<1x64x128xbf16>, memref<1x64x512xbf16>, index, index, index) -> ()
      %122 = vector.extract_strided_slice %115 {offsets = [128, 0], sizes = [64, 128], strides = [1, 1]} : vector<256x128xf32> to vector<64x128xf32>
      %123 = arith.truncf %122 : vector<64x128xf32> to vector<64x128xbf16>
      %c0_59 = arith.constant 0 : index
      %c0_60 = arith.constant 0 : index
      %c256 = arith.constant 256 : index
      %124 = vector.shape_cast %123 : vector<64x128xbf16> to vector<1x64x128xbf16>
      "tpu.vector_store"(%124, %arg8, %c0_59, %c0_60, %c256) {add = false, operandSegmentSizes = array<i32: 1, 1, 3, 0>, strides = array<i32>} : (vector<1x64x128xbf16>, memref<1x64x512xbf16>, index, index, index) -> ()
      %125 = vector.extract_strided_slice %115 {offsets = [192, 0], sizes = [64, 128], strides = [1, 1]} : vector<256x128xf32> to vector<64x128xf32>
      %126 = arith.truncf %125 : vector<64x128xf32> to vector<64x128xbf16>
      %c0_61 = arith.constant 0 : index
      %c0_62 = arith.constant 0 : index
      %c384 = arith.constant 384 : index
      %127 = vector.shape_cast %126 : vector<64x128xbf16> to vector<1x64x128xbf16>
      "tpu.vector_store"(%127, %arg8, %c0_61, %c0_62, %c384) {add = false, operandSegmentSizes = array<i32: 1, 1, 3, 0>, strides = array<i32>} : (vector<1x64x128xbf16>, memref<1x64x512xbf16>, index, index, index) -> ()
      %128 = arith.mulf %75, %112 : vector<256x128xf32>
      %129 = vector.extract_strided_slice %128 {offsets = [0, 0], sizes = [64, 128], strides = [1, 1]} : vector<256x128xf32> to vector<64x128xf32>
      %cst_63 = arith.constant dense<0.000000e+00> : vector<128x128xf32>
      %130 = "flywheel.matmul"(%29, %129, %cst_63) {precision = "bf16x3", transpose_rhs = false} : (vector<128x64xf32>, vector<64x128xf32>, vector<128x128xf32>) -> vector<128x128xf32>
      %131 = vector.extract_strided_slice %77 {offsets = [0, 0], sizes = [1, 128], strides = [1, 1]} : vector<256x128xf32> to vector<1x128xf32>
      %132 = vector.broadcast %131 : vector<1x128xf32> to vector<128x128xf32>
      %133 = arith.mulf %132, %13 : vector<128x128xf32>
      %134 = arith.addf %133, %130 : vector<128x128xf32>
      %135 = vector.extract_strided_slice %128 {offsets = [64, 0], sizes = [64, 128], strides = [1, 1]} : vector<256x128xf32> to vector<64x128xf32>
      %cst_64 = arith.constant dense<0.000000e+00> : vector<128x128xf32>
      %136 = "flywheel.matmul"(%29, %135, %cst_64) {precision = "bf16x3", transpose_rhs = false} : (vector<128x64xf32>, vector<64x128xf32>, vector<128x128xf32>) -> vector<128x128xf32>
      %137 = vector.extract_strided_slice %77 {offsets = [64, 0], sizes = [1, 128], strides = [1, 1]} : vector<256x128xf32> to vector<1x128xf32>
      %138 = vector.broadcast %137 : vector<1x128xf32> to vector<128x128xf32>
      %139 = arith.mulf %138, %15 : vector<128x128xf32>
      %140 = arith.addf %139, %136 : vector<128x128xf32>
      %141 = vector.extract_strided_slice %128 {offsets = [128, 0], sizes = [64, 128], strides = [1, 1]} : vector<256x128xf32> to vector<64x128xf32>
      %cst_65 = arith.constant dense<0.000000e+00> : vector<128x128xf32>
      %142 = "flywheel.matmul"(%29, %141, %cst_65) {precision = "bf16x3", transpose_rhs = false} : (vector<128x64xf32>, vector<64x128xf32>, vector<128x128xf32>) -> vector<128x128xf32>
      %143 = vector.extract_strided_slice %77 {offsets = [128, 0], sizes = [1, 128], strides = [1, 1]} : vector<256x128xf32> to vector<1x128xf32>
      %144 = vector.broadcast %143 : vector<1x128xf32> to vector<128x128xf32>
      %145 = arith.mulf %144, %17 : vector<128x128xf32>
      %146 = arith.addf %145, %142 : vector<128x128xf32>
      %147 = vector.extract_strided_slice %128 {offsets = [192, 0], sizes = [64, 128], strides = [1, 1]} : vector<256x128xf32> to vector<64x128xf32>
      %cst_66 = arith.constant dense<0.000000e+00> : vector<128x128xf32>
      %148 = "flywheel.matmul"(%29, %147, %cst_66) {precision = "bf16x3", transpose_rhs = false} : (vector<128x64xf32>, vector<64x128xf32>, vector<128x128xf32>) -> vector<128x128xf32>
      %149 = vector.extract_strided_slice %77 {offsets = [192, 0], sizes = [1, 128], strides = [1, 1]} : vector<256x128xf32> to vector<1x128xf32>
      %150 = vector.broadcast %149 : vector<1x128xf32> to vector<128x128xf32>
      %151 = arith.mulf %150, %19 : vector<128x128xf32>
      %152 = arith.addf %151, %148 : vector<128x128xf32>
      %c0_67 = arith.constant 0 : index
      %c0_68 = arith.constant 0 : index
      %c0_69 = arith.constant 0 : index
      %153 = vector.shape_cast %134 : vector<128x128xf32> to vector<1x128x128xf32>
      "tpu.vector_store"(%153, %arg10, %c0_67, %c0_68, %c0_69) {add = false, operandSegmentSizes = array<i32: 1, 1, 3, 0>, strides = array<i32>} : (vector<1x128x128xf32>, memref<4x128x128xf32>, index, index, index) -> ()
      %c1_70 = arith.constant 1 : index
      %c0_71 = arith.constant 0 : index
      %c0_72 = arith.constant 0 : index
      %154 = vector.shape_cast %140 : vector<128x128xf32> to vector<1x128x128xf32>
      "tpu.vector_store"(%154, %arg10, %c1_70, %c0_71, %c0_72) {add = false, operandSegmentSizes = array<i32: 1, 1, 3, 0>, strides = array<i32>} : (vector<1x128x128xf32>, memref<4x128x128xf32>, index, index, index) -> ()
      %c2_73 = arith.constant 2 : index
      %c0_74 = arith.constant 0 : index
      %c0_75 = arith.constant 0 : index
      %155 = vector.shape_cast %146 : vector<128x128xf32> to vector<1x128x128xf32>
      "tpu.vector_store"(%155, %arg10, %c2_73, %c0_74, %c0_75) {add = false, operandSegmentSizes = array<i32: 1, 1, 3, 0>, strides = array<i32>} : (vector<1x128x128xf32>, memref<4x128x128xf32>, index, index, index) -> ()
      %c3_76 = arith.constant 3 : index
      %c0_77 = arith.constant 0 : index
      %c0_78 = arith.constant 0 : index
      %156 = vector.shape_cast %152 : vector<128x128xf32> to vector<1x128x128xf32>
      "tpu.vector_store"(%156, %arg10, %c3_76, %c0_77, %c0_78) {add = false, operandSegmentSizes = array<i32: 1, 1, 3, 0>, strides = array<i32>} : (vector<1x128x128xf32>, memref<4x128x128xf32>, index, index, index) -> ()
      %c1_i32 = arith.constant 1 : i32
      %157 = arith.cmpi eq, %arg2, %c1_i32 : i32
      scf.if %157 {
        %c0_79 = arith.constant 0 : index
        %c0_80 = arith.constant 0 : index
        %c0_81 = arith.constant 0 : index
        %c0_82 = arith.constant 0 : index
        %158 = vector.shape_cast %134 : vector<128x128xf32> to vector<1x1x128x128xf32>
        "tpu.vector_store"(%158, %arg9, %c0_79, %c0_80, %c0_81, %c0_82) {add = false, operandSegmentSizes = array<i32: 1, 1, 4, 0>, strides = array<i32>} : (vector<1x1x128x128xf32>, memref<1x4x128x128xf32>, index, index, index, index) -> ()
        %c0_83 = arith.constant 0 : index
        %c1_84 = arith.constant 1 : index
        %c0_85 = arith.constant 0 : index
        %c0_86 = arith.constant 0 : index
        %159 = vector.shape_cast %140 : vector<128x128xf32> to vector<1x1x128x128xf32>
        "tpu.vector_store"(%159, %arg9, %c0_83, %c1_84, %c0_85, %c0_86) {add = false, operandSegmentSizes = array<i32: 1, 1, 4, 0>, strides = array<i32>} : (vector<1x1x128x128xf32>, memref<1x4x128x128xf32>, index, index, index, index) -> ()
        %c0_87 = arith.constant 0 : index
        %c2_88 = arith.constant 2 : index
        %c0_89 = arith.constant 0 : index
        %c0_90 = arith.constant 0 : index
        %160 = vector.shape_cast %146 : vector<128x128xf32> to vector<1x1x128x128xf32>
        "tpu.vector_store"(%160, %arg9, %c0_87, %c2_88, %c0_89, %c0_90) {add = false, operandSegmentSizes = array<i32: 1, 1, 4, 0>, strides = array<i32>} : (vector<1x1x128x128xf32>, memref<1x4x128x128xf32>, index, index, index, index) -> ()
        %c0_91 = arith.constant 0 : index
        %c3_92 = arith.constant 3 : index
        %c0_93 = arith.constant 0 : index
        %c0_94 = arith.constant 0 : index
        %161 = vector.shape_cast %152 : vector<128x128xf32> to vector<1x1x128x128xf32>
        "tpu.vector_store"(%161, %arg9, %c0_91, %c3_92, %c0_93, %c0_94) {add = false, operandSegmentSizes = array<i32: 1, 1, 4, 0>, strides = array<i32>} : (vector<1x1x128x128xf32>, memref<1x4x128x128xf32>, index, index, index, index) -> ()
      }
      return
    }
    func.func @key_chunks(%arg0: i32, %arg1: i32, %arg2: i32) -> (i32, i32, i32, i32) {
      %c0_i32 = arith.constant 0 : i32
      %c4_i32 = arith.constant 4 : i32
      %c4_i32_0 = arith.constant 4 : i32
      %c1_i32 = arith.constant 1 : i32
      %0 = arith.muli %arg1, %c4_i32 : i32
      %1 = arith.divsi %0, %c4_i32_0 : i32
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

