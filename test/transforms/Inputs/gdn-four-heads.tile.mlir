// Tile IR of Gated DeltaNet, bf16, four value heads: all four and both chunks per grid step, in blocks of 128 rows (two heads). Made by: sed 's/x2x128xbf16/x4x128xbf16/g; s/x2xf32/x4xf32/g; s/1x2x128x128xf32/1x4x128x128xf32/g' test/Inputs/gdn-kernel-bf16.mlir | flywheel-opt --pass-pipeline='builtin.module(flywheel-layout,flywheel-tile{gdn-heads=4 gdn-chunks-per-step=2})' | mlir-opt-22 --allow-unregistered-dialect
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
    func.func @gated_delta_kernel(%arg0: i32, %arg1: i32, %arg2: i32, %arg3: memref<1x1x128x128xbf16>, %arg4: memref<1x1x128x128xbf16>, %arg5: memref<1x4x128x128xbf16>, %arg6: memref<1x1x2x2x256xf32>, %arg7: memref<1x1x2x1x256xf32>, %arg8: memref<1x128x512xbf16>, %arg9: memref<1x4x128x128xf32>, %arg10: memref<4x128x128xf32>) attributes {dimension_semantics = [#tpu.dimension_semantics<parallel>, #tpu.dimension_semantics<parallel>, #tpu.dimension_semantics<arbitrary>], iteration_bounds = array<i64: 1, 1, 1>, scalar_prefetch = 0 : i64, scratch_operands = 1 : i64, tpu.core_type = #tpu.core_type<tc>, window_params = [{transform_indices = @key_chunks, window_bounds = array<i64: 1, 1, 128, 128>}, {transform_indices = @key_chunks, window_bounds = array<i64: 1, 1, 128, 128>}, {transform_indices = @value_chunks, window_bounds = array<i64: 1, 4, 128, 128>}, {transform_indices = @gate_chunks, window_bounds = array<i64: 1, 1, 2, 2, 256>}, {transform_indices = @gate_chunks, window_bounds = array<i64: 1, 1, 2, 1, 256>}, {transform_indices = @value_tokens, window_bounds = array<i64: 1, 128, 512>}, {transform_indices = @states, window_bounds = array<i64: 1, 4, 128, 128>}]} {
      %c0_i32 = arith.constant 0 : i32
      %0 = arith.cmpi eq, %arg2, %c0_i32 : i32
      scf.if %0 {
        %cst_189 = arith.constant dense<0.000000e+00> : vector<128x128xf32>
        %c0_190 = arith.constant 0 : index
        %c0_191 = arith.constant 0 : index
        %c0_192 = arith.constant 0 : index
        %409 = vector.shape_cast %cst_189 : vector<128x128xf32> to vector<1x128x128xf32>
        "tpu.vector_store"(%409, %arg10, %c0_190, %c0_191, %c0_192) {add = false, operandSegmentSizes = array<i32: 1, 1, 3, 0>, strides = array<i32>} : (vector<1x128x128xf32>, memref<4x128x128xf32>, index, index, index) -> ()
        %cst_193 = arith.constant dense<0.000000e+00> : vector<128x128xf32>
        %c1_194 = arith.constant 1 : index
        %c0_195 = arith.constant 0 : index
        %c0_196 = arith.constant 0 : index
        %410 = vector.shape_cast %cst_193 : vector<128x128xf32> to vector<1x128x128xf32>
        "tpu.vector_store"(%410, %arg10, %c1_194, %c0_195, %c0_196) {add = false, operandSegmentSizes = array<i32: 1, 1, 3, 0>, strides = array<i32>} : (vector<1x128x128xf32>, memref<4x128x128xf32>, index, index, index) -> ()
        %cst_197 = arith.constant dense<0.000000e+00> : vector<128x128xf32>
        %c2_198 = arith.constant 2 : index
        %c0_199 = arith.constant 0 : index
        %c0_200 = arith.constant 0 : index
        %411 = vector.shape_cast %cst_197 : vector<128x128xf32> to vector<1x128x128xf32>
        "tpu.vector_store"(%411, %arg10, %c2_198, %c0_199, %c0_200) {add = false, operandSegmentSizes = array<i32: 1, 1, 3, 0>, strides = array<i32>} : (vector<1x128x128xf32>, memref<4x128x128xf32>, index, index, index) -> ()
        %cst_201 = arith.constant dense<0.000000e+00> : vector<128x128xf32>
        %c3_202 = arith.constant 3 : index
        %c0_203 = arith.constant 0 : index
        %c0_204 = arith.constant 0 : index
        %412 = vector.shape_cast %cst_201 : vector<128x128xf32> to vector<1x128x128xf32>
        "tpu.vector_store"(%412, %arg10, %c3_202, %c0_203, %c0_204) {add = false, operandSegmentSizes = array<i32: 1, 1, 3, 0>, strides = array<i32>} : (vector<1x128x128xf32>, memref<4x128x128xf32>, index, index, index) -> ()
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
      %20 = vector.load %arg3[%c0_13, %c0_14, %c0_15, %c0_16] : memref<1x1x128x128xbf16>, vector<1x1x64x128xbf16>
      %c0_17 = arith.constant 0 : index
      %c0_18 = arith.constant 0 : index
      %c0_19 = arith.constant 0 : index
      %c0_20 = arith.constant 0 : index
      %21 = vector.load %arg4[%c0_17, %c0_18, %c0_19, %c0_20] : memref<1x1x128x128xbf16>, vector<1x1x64x128xbf16>
      %22 = vector.broadcast %20 : vector<1x1x64x128xbf16> to vector<1x4x64x128xbf16>
      %23 = vector.shape_cast %22 : vector<1x4x64x128xbf16> to vector<256x128xbf16>
      %24 = vector.broadcast %21 : vector<1x1x64x128xbf16> to vector<1x4x64x128xbf16>
      %25 = vector.shape_cast %24 : vector<1x4x64x128xbf16> to vector<256x128xbf16>
      %c0_21 = arith.constant 0 : index
      %c0_22 = arith.constant 0 : index
      %c0_23 = arith.constant 0 : index
      %c0_24 = arith.constant 0 : index
      %26 = vector.load %arg4[%c0_21, %c0_22, %c0_23, %c0_24] : memref<1x1x128x128xbf16>, vector<1x1x64x128xbf16>
      %27 = vector.shape_cast %26 : vector<1x1x64x128xbf16> to vector<64x128xbf16>
      %28 = arith.extf %27 : vector<64x128xbf16> to vector<64x128xf32>
      %29 = vector.transpose %28, [1, 0] : vector<64x128xf32> to vector<128x64xf32>
      %30 = vector.extract_strided_slice %23 {offsets = [0, 0], sizes = [128, 128], strides = [1, 1]} : vector<256x128xbf16> to vector<128x128xbf16>
      %31 = vector.extract_strided_slice %25 {offsets = [0, 0], sizes = [128, 128], strides = [1, 1]} : vector<256x128xbf16> to vector<128x128xbf16>
      %cst_25 = arith.constant dense<0.000000e+00> : vector<128x128xf32>
      %32 = "flywheel.matmul"(%31, %31, %cst_25) {transpose_rhs = true} : (vector<128x128xbf16>, vector<128x128xbf16>, vector<128x128xf32>) -> vector<128x128xf32>
      %cst_26 = arith.constant dense<0.000000e+00> : vector<128x128xf32>
      %33 = "flywheel.matmul"(%30, %31, %cst_26) {transpose_rhs = true} : (vector<128x128xbf16>, vector<128x128xbf16>, vector<128x128xf32>) -> vector<128x128xf32>
      %34 = arith.extf %30 : vector<128x128xbf16> to vector<128x128xf32>
      %35 = arith.extf %31 : vector<128x128xbf16> to vector<128x128xf32>
      %c0_27 = arith.constant 0 : index
      %c0_28 = arith.constant 0 : index
      %c0_29 = arith.constant 0 : index
      %c0_30 = arith.constant 0 : index
      %36 = vector.load %arg5[%c0_27, %c0_28, %c0_29, %c0_30] : memref<1x4x128x128xbf16>, vector<1x2x64x128xbf16>
      %37 = vector.shape_cast %36 : vector<1x2x64x128xbf16> to vector<128x128xbf16>
      %c0_31 = arith.constant 0 : index
      %c0_32 = arith.constant 0 : index
      %c0_33 = arith.constant 0 : index
      %c0_34 = arith.constant 0 : index
      %c0_35 = arith.constant 0 : index
      %38 = vector.load %arg6[%c0_31, %c0_32, %c0_33, %c0_34, %c0_35] : memref<1x1x2x2x256xf32>, vector<1x1x1x1x128xf32>
      %39 = vector.shape_cast %38 : vector<1x1x1x1x128xf32> to vector<1x128xf32>
      %c0_36 = arith.constant 0 : index
      %c0_37 = arith.constant 0 : index
      %c0_38 = arith.constant 0 : index
      %c1_39 = arith.constant 1 : index
      %c0_40 = arith.constant 0 : index
      %40 = vector.load %arg6[%c0_36, %c0_37, %c0_38, %c1_39, %c0_40] : memref<1x1x2x2x256xf32>, vector<1x1x1x1x128xf32>
      %41 = vector.shape_cast %40 : vector<1x1x1x1x128xf32> to vector<1x128xf32>
      %c0_41 = arith.constant 0 : index
      %c0_42 = arith.constant 0 : index
      %c0_43 = arith.constant 0 : index
      %c0_44 = arith.constant 0 : index
      %c0_45 = arith.constant 0 : index
      %42 = vector.load %arg7[%c0_41, %c0_42, %c0_43, %c0_44, %c0_45] : memref<1x1x2x1x256xf32>, vector<1x1x1x1x128xf32>
      %43 = vector.shape_cast %42 : vector<1x1x1x1x128xf32> to vector<1x128xf32>
      %44 = math.exp %39 : vector<1x128xf32>
      %45 = arith.subf %41, %39 : vector<1x128xf32>
      %46 = math.exp %45 : vector<1x128xf32>
      %47 = math.exp %41 : vector<1x128xf32>
      %48 = arith.mulf %43, %44 : vector<1x128xf32>
      %49 = arith.mulf %44, %cst_4 : vector<1x128xf32>
      %50 = vector.broadcast %39 : vector<1x128xf32> to vector<128x128xf32>
      %51 = vector.transpose %50, [1, 0] : vector<128x128xf32> to vector<128x128xf32>
      %52 = vector.broadcast %39 : vector<1x128xf32> to vector<128x128xf32>
      %53 = arith.subf %51, %52 : vector<128x128xf32>
      %54 = arith.select %9, %53, %cst_2 : vector<128x128xi1>, vector<128x128xf32>
      %55 = math.exp %54 : vector<128x128xf32>
      %56 = vector.broadcast %43 : vector<1x128xf32> to vector<128x128xf32>
      %57 = vector.transpose %56, [1, 0] : vector<128x128xf32> to vector<128x128xf32>
      %58 = arith.mulf %32, %55 : vector<128x128xf32>
      %59 = arith.mulf %58, %57 : vector<128x128xf32>
      %60 = arith.select %10, %59, %cst_1 : vector<128x128xi1>, vector<128x128xf32>
      %c0_46 = arith.constant 0 : index
      %c63 = arith.constant 63 : index
      %c1_47 = arith.constant 1 : index
      %61 = scf.for %arg11 = %c0_46 to %c63 step %c1_47 iter_args(%arg12 = %11) -> (vector<128x128xf32>) {
        %cst_189 = arith.constant dense<0.000000e+00> : vector<128x128xf32>
        %409 = "flywheel.matmul"(%60, %arg12, %cst_189) {precision = "bf16x3", transpose_rhs = false} : (vector<128x128xf32>, vector<128x128xf32>, vector<128x128xf32>) -> vector<128x128xf32>
        %410 = arith.subf %11, %409 : vector<128x128xf32>
        scf.yield %410 : vector<128x128xf32>
      }
      %62 = arith.extf %37 : vector<128x128xbf16> to vector<128x128xf32>
      %63 = vector.broadcast %43 : vector<1x128xf32> to vector<128x128xf32>
      %64 = vector.transpose %63, [1, 0] : vector<128x128xf32> to vector<128x128xf32>
      %65 = arith.mulf %64, %62 : vector<128x128xf32>
      %66 = vector.broadcast %48 : vector<1x128xf32> to vector<128x128xf32>
      %67 = vector.transpose %66, [1, 0] : vector<128x128xf32> to vector<128x128xf32>
      %68 = arith.mulf %67, %35 : vector<128x128xf32>
      %69 = "tpu.concatenate"(%65, %68) {dimension = 1 : i32} : (vector<128x128xf32>, vector<128x128xf32>) -> vector<128x256xf32>
      %cst_48 = arith.constant dense<0.000000e+00> : vector<128x256xf32>
      %70 = "flywheel.matmul"(%61, %69, %cst_48) {precision = "bf16x3", transpose_rhs = false} : (vector<128x128xf32>, vector<128x256xf32>, vector<128x256xf32>) -> vector<128x256xf32>
      %71 = vector.extract_strided_slice %70 {offsets = [0, 0], sizes = [128, 128], strides = [1, 1]} : vector<128x256xf32> to vector<128x128xf32>
      %72 = vector.extract_strided_slice %70 {offsets = [0, 128], sizes = [128, 128], strides = [1, 1]} : vector<128x256xf32> to vector<128x128xf32>
      %73 = vector.broadcast %49 : vector<1x128xf32> to vector<128x128xf32>
      %74 = vector.transpose %73, [1, 0] : vector<128x128xf32> to vector<128x128xf32>
      %75 = arith.mulf %74, %34 : vector<128x128xf32>
      %76 = vector.broadcast %46 : vector<1x128xf32> to vector<128x128xf32>
      %77 = vector.transpose %76, [1, 0] : vector<128x128xf32> to vector<128x128xf32>
      %78 = vector.broadcast %47 : vector<1x128xf32> to vector<128x128xf32>
      %79 = vector.transpose %78, [1, 0] : vector<128x128xf32> to vector<128x128xf32>
      %80 = arith.mulf %33, %55 : vector<128x128xf32>
      %81 = arith.mulf %80, %cst_3 : vector<128x128xf32>
      %82 = vector.extract_strided_slice %23 {offsets = [128, 0], sizes = [128, 128], strides = [1, 1]} : vector<256x128xbf16> to vector<128x128xbf16>
      %83 = vector.extract_strided_slice %25 {offsets = [128, 0], sizes = [128, 128], strides = [1, 1]} : vector<256x128xbf16> to vector<128x128xbf16>
      %cst_49 = arith.constant dense<0.000000e+00> : vector<128x128xf32>
      %84 = "flywheel.matmul"(%83, %83, %cst_49) {transpose_rhs = true} : (vector<128x128xbf16>, vector<128x128xbf16>, vector<128x128xf32>) -> vector<128x128xf32>
      %cst_50 = arith.constant dense<0.000000e+00> : vector<128x128xf32>
      %85 = "flywheel.matmul"(%82, %83, %cst_50) {transpose_rhs = true} : (vector<128x128xbf16>, vector<128x128xbf16>, vector<128x128xf32>) -> vector<128x128xf32>
      %86 = arith.extf %82 : vector<128x128xbf16> to vector<128x128xf32>
      %87 = arith.extf %83 : vector<128x128xbf16> to vector<128x128xf32>
      %c0_51 = arith.constant 0 : index
      %c2_52 = arith.constant 2 : index
      %c0_53 = arith.constant 0 : index
      %c0_54 = arith.constant 0 : index
      %88 = vector.load %arg5[%c0_51, %c2_52, %c0_53, %c0_54] : memref<1x4x128x128xbf16>, vector<1x2x64x128xbf16>
      %89 = vector.shape_cast %88 : vector<1x2x64x128xbf16> to vector<128x128xbf16>
      %c0_55 = arith.constant 0 : index
      %c0_56 = arith.constant 0 : index
      %c0_57 = arith.constant 0 : index
      %c0_58 = arith.constant 0 : index
      %c128 = arith.constant 128 : index
      %90 = vector.load %arg6[%c0_55, %c0_56, %c0_57, %c0_58, %c128] : memref<1x1x2x2x256xf32>, vector<1x1x1x1x128xf32>
      %91 = vector.shape_cast %90 : vector<1x1x1x1x128xf32> to vector<1x128xf32>
      %c0_59 = arith.constant 0 : index
      %c0_60 = arith.constant 0 : index
      %c0_61 = arith.constant 0 : index
      %c1_62 = arith.constant 1 : index
      %c128_63 = arith.constant 128 : index
      %92 = vector.load %arg6[%c0_59, %c0_60, %c0_61, %c1_62, %c128_63] : memref<1x1x2x2x256xf32>, vector<1x1x1x1x128xf32>
      %93 = vector.shape_cast %92 : vector<1x1x1x1x128xf32> to vector<1x128xf32>
      %c0_64 = arith.constant 0 : index
      %c0_65 = arith.constant 0 : index
      %c0_66 = arith.constant 0 : index
      %c0_67 = arith.constant 0 : index
      %c128_68 = arith.constant 128 : index
      %94 = vector.load %arg7[%c0_64, %c0_65, %c0_66, %c0_67, %c128_68] : memref<1x1x2x1x256xf32>, vector<1x1x1x1x128xf32>
      %95 = vector.shape_cast %94 : vector<1x1x1x1x128xf32> to vector<1x128xf32>
      %96 = math.exp %91 : vector<1x128xf32>
      %97 = arith.subf %93, %91 : vector<1x128xf32>
      %98 = math.exp %97 : vector<1x128xf32>
      %99 = math.exp %93 : vector<1x128xf32>
      %100 = arith.mulf %95, %96 : vector<1x128xf32>
      %101 = arith.mulf %96, %cst_4 : vector<1x128xf32>
      %102 = vector.broadcast %91 : vector<1x128xf32> to vector<128x128xf32>
      %103 = vector.transpose %102, [1, 0] : vector<128x128xf32> to vector<128x128xf32>
      %104 = vector.broadcast %91 : vector<1x128xf32> to vector<128x128xf32>
      %105 = arith.subf %103, %104 : vector<128x128xf32>
      %106 = arith.select %9, %105, %cst_2 : vector<128x128xi1>, vector<128x128xf32>
      %107 = math.exp %106 : vector<128x128xf32>
      %108 = vector.broadcast %95 : vector<1x128xf32> to vector<128x128xf32>
      %109 = vector.transpose %108, [1, 0] : vector<128x128xf32> to vector<128x128xf32>
      %110 = arith.mulf %84, %107 : vector<128x128xf32>
      %111 = arith.mulf %110, %109 : vector<128x128xf32>
      %112 = arith.select %10, %111, %cst_1 : vector<128x128xi1>, vector<128x128xf32>
      %c0_69 = arith.constant 0 : index
      %c63_70 = arith.constant 63 : index
      %c1_71 = arith.constant 1 : index
      %113 = scf.for %arg11 = %c0_69 to %c63_70 step %c1_71 iter_args(%arg12 = %11) -> (vector<128x128xf32>) {
        %cst_189 = arith.constant dense<0.000000e+00> : vector<128x128xf32>
        %409 = "flywheel.matmul"(%112, %arg12, %cst_189) {precision = "bf16x3", transpose_rhs = false} : (vector<128x128xf32>, vector<128x128xf32>, vector<128x128xf32>) -> vector<128x128xf32>
        %410 = arith.subf %11, %409 : vector<128x128xf32>
        scf.yield %410 : vector<128x128xf32>
      }
      %114 = arith.extf %89 : vector<128x128xbf16> to vector<128x128xf32>
      %115 = vector.broadcast %95 : vector<1x128xf32> to vector<128x128xf32>
      %116 = vector.transpose %115, [1, 0] : vector<128x128xf32> to vector<128x128xf32>
      %117 = arith.mulf %116, %114 : vector<128x128xf32>
      %118 = vector.broadcast %100 : vector<1x128xf32> to vector<128x128xf32>
      %119 = vector.transpose %118, [1, 0] : vector<128x128xf32> to vector<128x128xf32>
      %120 = arith.mulf %119, %87 : vector<128x128xf32>
      %121 = "tpu.concatenate"(%117, %120) {dimension = 1 : i32} : (vector<128x128xf32>, vector<128x128xf32>) -> vector<128x256xf32>
      %cst_72 = arith.constant dense<0.000000e+00> : vector<128x256xf32>
      %122 = "flywheel.matmul"(%113, %121, %cst_72) {precision = "bf16x3", transpose_rhs = false} : (vector<128x128xf32>, vector<128x256xf32>, vector<128x256xf32>) -> vector<128x256xf32>
      %123 = vector.extract_strided_slice %122 {offsets = [0, 0], sizes = [128, 128], strides = [1, 1]} : vector<128x256xf32> to vector<128x128xf32>
      %124 = vector.extract_strided_slice %122 {offsets = [0, 128], sizes = [128, 128], strides = [1, 1]} : vector<128x256xf32> to vector<128x128xf32>
      %125 = vector.broadcast %101 : vector<1x128xf32> to vector<128x128xf32>
      %126 = vector.transpose %125, [1, 0] : vector<128x128xf32> to vector<128x128xf32>
      %127 = arith.mulf %126, %86 : vector<128x128xf32>
      %128 = vector.broadcast %98 : vector<1x128xf32> to vector<128x128xf32>
      %129 = vector.transpose %128, [1, 0] : vector<128x128xf32> to vector<128x128xf32>
      %130 = vector.broadcast %99 : vector<1x128xf32> to vector<128x128xf32>
      %131 = vector.transpose %130, [1, 0] : vector<128x128xf32> to vector<128x128xf32>
      %132 = arith.mulf %85, %107 : vector<128x128xf32>
      %133 = arith.mulf %132, %cst_3 : vector<128x128xf32>
      %134 = vector.extract_strided_slice %72 {offsets = [0, 0], sizes = [64, 128], strides = [1, 1]} : vector<128x128xf32> to vector<64x128xf32>
      %135 = vector.extract_strided_slice %75 {offsets = [0, 0], sizes = [64, 128], strides = [1, 1]} : vector<128x128xf32> to vector<64x128xf32>
      %136 = "tpu.concatenate"(%134, %135) {dimension = 0 : i32} : (vector<64x128xf32>, vector<64x128xf32>) -> vector<128x128xf32>
      %cst_73 = arith.constant dense<0.000000e+00> : vector<128x128xf32>
      %137 = "flywheel.matmul"(%136, %13, %cst_73) {precision = "bf16x3", transpose_rhs = false} : (vector<128x128xf32>, vector<128x128xf32>, vector<128x128xf32>) -> vector<128x128xf32>
      %138 = vector.extract_strided_slice %137 {offsets = [64, 0], sizes = [64, 128], strides = [1, 1]} : vector<128x128xf32> to vector<64x128xf32>
      %139 = vector.extract_strided_slice %137 {offsets = [0, 0], sizes = [64, 128], strides = [1, 1]} : vector<128x128xf32> to vector<64x128xf32>
      %140 = vector.extract_strided_slice %71 {offsets = [0, 0], sizes = [64, 128], strides = [1, 1]} : vector<128x128xf32> to vector<64x128xf32>
      %141 = arith.subf %140, %139 : vector<64x128xf32>
      %142 = vector.extract_strided_slice %72 {offsets = [64, 0], sizes = [64, 128], strides = [1, 1]} : vector<128x128xf32> to vector<64x128xf32>
      %143 = vector.extract_strided_slice %75 {offsets = [64, 0], sizes = [64, 128], strides = [1, 1]} : vector<128x128xf32> to vector<64x128xf32>
      %144 = "tpu.concatenate"(%142, %143) {dimension = 0 : i32} : (vector<64x128xf32>, vector<64x128xf32>) -> vector<128x128xf32>
      %cst_74 = arith.constant dense<0.000000e+00> : vector<128x128xf32>
      %145 = "flywheel.matmul"(%144, %15, %cst_74) {precision = "bf16x3", transpose_rhs = false} : (vector<128x128xf32>, vector<128x128xf32>, vector<128x128xf32>) -> vector<128x128xf32>
      %146 = vector.extract_strided_slice %145 {offsets = [64, 0], sizes = [64, 128], strides = [1, 1]} : vector<128x128xf32> to vector<64x128xf32>
      %147 = vector.extract_strided_slice %145 {offsets = [0, 0], sizes = [64, 128], strides = [1, 1]} : vector<128x128xf32> to vector<64x128xf32>
      %148 = vector.extract_strided_slice %71 {offsets = [64, 0], sizes = [64, 128], strides = [1, 1]} : vector<128x128xf32> to vector<64x128xf32>
      %149 = arith.subf %148, %147 : vector<64x128xf32>
      %150 = vector.extract_strided_slice %124 {offsets = [0, 0], sizes = [64, 128], strides = [1, 1]} : vector<128x128xf32> to vector<64x128xf32>
      %151 = vector.extract_strided_slice %127 {offsets = [0, 0], sizes = [64, 128], strides = [1, 1]} : vector<128x128xf32> to vector<64x128xf32>
      %152 = "tpu.concatenate"(%150, %151) {dimension = 0 : i32} : (vector<64x128xf32>, vector<64x128xf32>) -> vector<128x128xf32>
      %cst_75 = arith.constant dense<0.000000e+00> : vector<128x128xf32>
      %153 = "flywheel.matmul"(%152, %17, %cst_75) {precision = "bf16x3", transpose_rhs = false} : (vector<128x128xf32>, vector<128x128xf32>, vector<128x128xf32>) -> vector<128x128xf32>
      %154 = vector.extract_strided_slice %153 {offsets = [64, 0], sizes = [64, 128], strides = [1, 1]} : vector<128x128xf32> to vector<64x128xf32>
      %155 = vector.extract_strided_slice %153 {offsets = [0, 0], sizes = [64, 128], strides = [1, 1]} : vector<128x128xf32> to vector<64x128xf32>
      %156 = vector.extract_strided_slice %123 {offsets = [0, 0], sizes = [64, 128], strides = [1, 1]} : vector<128x128xf32> to vector<64x128xf32>
      %157 = arith.subf %156, %155 : vector<64x128xf32>
      %158 = vector.extract_strided_slice %124 {offsets = [64, 0], sizes = [64, 128], strides = [1, 1]} : vector<128x128xf32> to vector<64x128xf32>
      %159 = vector.extract_strided_slice %127 {offsets = [64, 0], sizes = [64, 128], strides = [1, 1]} : vector<128x128xf32> to vector<64x128xf32>
      %160 = "tpu.concatenate"(%158, %159) {dimension = 0 : i32} : (vector<64x128xf32>, vector<64x128xf32>) -> vector<128x128xf32>
      %cst_76 = arith.constant dense<0.000000e+00> : vector<128x128xf32>
      %161 = "flywheel.matmul"(%160, %19, %cst_76) {precision = "bf16x3", transpose_rhs = false} : (vector<128x128xf32>, vector<128x128xf32>, vector<128x128xf32>) -> vector<128x128xf32>
      %162 = vector.extract_strided_slice %161 {offsets = [64, 0], sizes = [64, 128], strides = [1, 1]} : vector<128x128xf32> to vector<64x128xf32>
      %163 = vector.extract_strided_slice %161 {offsets = [0, 0], sizes = [64, 128], strides = [1, 1]} : vector<128x128xf32> to vector<64x128xf32>
      %164 = vector.extract_strided_slice %123 {offsets = [64, 0], sizes = [64, 128], strides = [1, 1]} : vector<128x128xf32> to vector<64x128xf32>
      %165 = arith.subf %164, %163 : vector<64x128xf32>
      %166 = "tpu.concatenate"(%141, %149) {dimension = 0 : i32} : (vector<64x128xf32>, vector<64x128xf32>) -> vector<128x128xf32>
      %167 = "tpu.concatenate"(%157, %165) {dimension = 0 : i32} : (vector<64x128xf32>, vector<64x128xf32>) -> vector<128x128xf32>
      %168 = "tpu.concatenate"(%138, %146) {dimension = 0 : i32} : (vector<64x128xf32>, vector<64x128xf32>) -> vector<128x128xf32>
      %169 = "tpu.concatenate"(%154, %162) {dimension = 0 : i32} : (vector<64x128xf32>, vector<64x128xf32>) -> vector<128x128xf32>
      %cst_77 = arith.constant dense<0.000000e+00> : vector<128x128xf32>
      %170 = "flywheel.matmul"(%81, %166, %cst_77) {precision = "bf16x3", transpose_rhs = false} : (vector<128x128xf32>, vector<128x128xf32>, vector<128x128xf32>) -> vector<128x128xf32>
      %171 = arith.addf %168, %170 : vector<128x128xf32>
      %172 = vector.extract_strided_slice %171 {offsets = [0, 0], sizes = [64, 128], strides = [1, 1]} : vector<128x128xf32> to vector<64x128xf32>
      %173 = arith.truncf %172 : vector<64x128xf32> to vector<64x128xbf16>
      %c0_78 = arith.constant 0 : index
      %c0_79 = arith.constant 0 : index
      %c0_80 = arith.constant 0 : index
      %174 = vector.shape_cast %173 : vector<64x128xbf16> to vector<1x64x128xbf16>
      "tpu.vector_store"(%174, %arg8, %c0_78, %c0_79, %c0_80) {add = false, operandSegmentSizes = array<i32: 1, 1, 3, 0>, strides = array<i32>} : (vector<1x64x128xbf16>, memref<1x128x512xbf16>, index, index, index) -> ()
      %175 = vector.extract_strided_slice %171 {offsets = [64, 0], sizes = [64, 128], strides = [1, 1]} : vector<128x128xf32> to vector<64x128xf32>
      %176 = arith.truncf %175 : vector<64x128xf32> to vector<64x128xbf16>
      %c0_81 = arith.constant 0 : index
      %c0_82 = arith.constant 0 : index
      %c128_83 = arith.constant 128 : index
      %177 = vector.shape_cast %176 : vector<64x128xbf16> to vector<1x64x128xbf16>
      "tpu.vector_store"(%177, %arg8, %c0_81, %c0_82, %c128_83) {add = false, operandSegmentSizes = array<i32: 1, 1, 3, 0>, strides = array<i32>} : (vector<1x64x128xbf16>, memref<1x128x512xbf16>, index, index, index) -> ()
      %178 = arith.mulf %77, %166 : vector<128x128xf32>
      %cst_84 = arith.constant dense<0.000000e+00> : vector<128x128xf32>
      %179 = "flywheel.matmul"(%133, %167, %cst_84) {precision = "bf16x3", transpose_rhs = false} : (vector<128x128xf32>, vector<128x128xf32>, vector<128x128xf32>) -> vector<128x128xf32>
      %180 = arith.addf %169, %179 : vector<128x128xf32>
      %181 = vector.extract_strided_slice %180 {offsets = [0, 0], sizes = [64, 128], strides = [1, 1]} : vector<128x128xf32> to vector<64x128xf32>
      %182 = arith.truncf %181 : vector<64x128xf32> to vector<64x128xbf16>
      %c0_85 = arith.constant 0 : index
      %c0_86 = arith.constant 0 : index
      %c256 = arith.constant 256 : index
      %183 = vector.shape_cast %182 : vector<64x128xbf16> to vector<1x64x128xbf16>
      "tpu.vector_store"(%183, %arg8, %c0_85, %c0_86, %c256) {add = false, operandSegmentSizes = array<i32: 1, 1, 3, 0>, strides = array<i32>} : (vector<1x64x128xbf16>, memref<1x128x512xbf16>, index, index, index) -> ()
      %184 = vector.extract_strided_slice %180 {offsets = [64, 0], sizes = [64, 128], strides = [1, 1]} : vector<128x128xf32> to vector<64x128xf32>
      %185 = arith.truncf %184 : vector<64x128xf32> to vector<64x128xbf16>
      %c0_87 = arith.constant 0 : index
      %c0_88 = arith.constant 0 : index
      %c384 = arith.constant 384 : index
      %186 = vector.shape_cast %185 : vector<64x128xbf16> to vector<1x64x128xbf16>
      "tpu.vector_store"(%186, %arg8, %c0_87, %c0_88, %c384) {add = false, operandSegmentSizes = array<i32: 1, 1, 3, 0>, strides = array<i32>} : (vector<1x64x128xbf16>, memref<1x128x512xbf16>, index, index, index) -> ()
      %187 = arith.mulf %129, %167 : vector<128x128xf32>
      %188 = vector.extract_strided_slice %178 {offsets = [0, 0], sizes = [64, 128], strides = [1, 1]} : vector<128x128xf32> to vector<64x128xf32>
      %cst_89 = arith.constant dense<0.000000e+00> : vector<128x128xf32>
      %189 = "flywheel.matmul"(%29, %188, %cst_89) {precision = "bf16x3", transpose_rhs = false} : (vector<128x64xf32>, vector<64x128xf32>, vector<128x128xf32>) -> vector<128x128xf32>
      %190 = vector.extract_strided_slice %79 {offsets = [0, 0], sizes = [1, 128], strides = [1, 1]} : vector<128x128xf32> to vector<1x128xf32>
      %191 = vector.broadcast %190 : vector<1x128xf32> to vector<128x128xf32>
      %192 = arith.mulf %191, %13 : vector<128x128xf32>
      %193 = arith.addf %192, %189 : vector<128x128xf32>
      %194 = vector.extract_strided_slice %178 {offsets = [64, 0], sizes = [64, 128], strides = [1, 1]} : vector<128x128xf32> to vector<64x128xf32>
      %cst_90 = arith.constant dense<0.000000e+00> : vector<128x128xf32>
      %195 = "flywheel.matmul"(%29, %194, %cst_90) {precision = "bf16x3", transpose_rhs = false} : (vector<128x64xf32>, vector<64x128xf32>, vector<128x128xf32>) -> vector<128x128xf32>
      %196 = vector.extract_strided_slice %79 {offsets = [64, 0], sizes = [1, 128], strides = [1, 1]} : vector<128x128xf32> to vector<1x128xf32>
      %197 = vector.broadcast %196 : vector<1x128xf32> to vector<128x128xf32>
      %198 = arith.mulf %197, %15 : vector<128x128xf32>
      %199 = arith.addf %198, %195 : vector<128x128xf32>
      %200 = vector.extract_strided_slice %187 {offsets = [0, 0], sizes = [64, 128], strides = [1, 1]} : vector<128x128xf32> to vector<64x128xf32>
      %cst_91 = arith.constant dense<0.000000e+00> : vector<128x128xf32>
      %201 = "flywheel.matmul"(%29, %200, %cst_91) {precision = "bf16x3", transpose_rhs = false} : (vector<128x64xf32>, vector<64x128xf32>, vector<128x128xf32>) -> vector<128x128xf32>
      %202 = vector.extract_strided_slice %131 {offsets = [0, 0], sizes = [1, 128], strides = [1, 1]} : vector<128x128xf32> to vector<1x128xf32>
      %203 = vector.broadcast %202 : vector<1x128xf32> to vector<128x128xf32>
      %204 = arith.mulf %203, %17 : vector<128x128xf32>
      %205 = arith.addf %204, %201 : vector<128x128xf32>
      %206 = vector.extract_strided_slice %187 {offsets = [64, 0], sizes = [64, 128], strides = [1, 1]} : vector<128x128xf32> to vector<64x128xf32>
      %cst_92 = arith.constant dense<0.000000e+00> : vector<128x128xf32>
      %207 = "flywheel.matmul"(%29, %206, %cst_92) {precision = "bf16x3", transpose_rhs = false} : (vector<128x64xf32>, vector<64x128xf32>, vector<128x128xf32>) -> vector<128x128xf32>
      %208 = vector.extract_strided_slice %131 {offsets = [64, 0], sizes = [1, 128], strides = [1, 1]} : vector<128x128xf32> to vector<1x128xf32>
      %209 = vector.broadcast %208 : vector<1x128xf32> to vector<128x128xf32>
      %210 = arith.mulf %209, %19 : vector<128x128xf32>
      %211 = arith.addf %210, %207 : vector<128x128xf32>
      %c0_93 = arith.constant 0 : index
      %c0_94 = arith.constant 0 : index
      %c64 = arith.constant 64 : index
      %c0_95 = arith.constant 0 : index
      %212 = vector.load %arg3[%c0_93, %c0_94, %c64, %c0_95] : memref<1x1x128x128xbf16>, vector<1x1x64x128xbf16>
      %c0_96 = arith.constant 0 : index
      %c0_97 = arith.constant 0 : index
      %c64_98 = arith.constant 64 : index
      %c0_99 = arith.constant 0 : index
      %213 = vector.load %arg4[%c0_96, %c0_97, %c64_98, %c0_99] : memref<1x1x128x128xbf16>, vector<1x1x64x128xbf16>
      %214 = vector.broadcast %212 : vector<1x1x64x128xbf16> to vector<1x4x64x128xbf16>
      %215 = vector.shape_cast %214 : vector<1x4x64x128xbf16> to vector<256x128xbf16>
      %216 = vector.broadcast %213 : vector<1x1x64x128xbf16> to vector<1x4x64x128xbf16>
      %217 = vector.shape_cast %216 : vector<1x4x64x128xbf16> to vector<256x128xbf16>
      %c0_100 = arith.constant 0 : index
      %c0_101 = arith.constant 0 : index
      %c64_102 = arith.constant 64 : index
      %c0_103 = arith.constant 0 : index
      %218 = vector.load %arg4[%c0_100, %c0_101, %c64_102, %c0_103] : memref<1x1x128x128xbf16>, vector<1x1x64x128xbf16>
      %219 = vector.shape_cast %218 : vector<1x1x64x128xbf16> to vector<64x128xbf16>
      %220 = arith.extf %219 : vector<64x128xbf16> to vector<64x128xf32>
      %221 = vector.transpose %220, [1, 0] : vector<64x128xf32> to vector<128x64xf32>
      %222 = vector.extract_strided_slice %215 {offsets = [0, 0], sizes = [128, 128], strides = [1, 1]} : vector<256x128xbf16> to vector<128x128xbf16>
      %223 = vector.extract_strided_slice %217 {offsets = [0, 0], sizes = [128, 128], strides = [1, 1]} : vector<256x128xbf16> to vector<128x128xbf16>
      %cst_104 = arith.constant dense<0.000000e+00> : vector<128x128xf32>
      %224 = "flywheel.matmul"(%223, %223, %cst_104) {transpose_rhs = true} : (vector<128x128xbf16>, vector<128x128xbf16>, vector<128x128xf32>) -> vector<128x128xf32>
      %cst_105 = arith.constant dense<0.000000e+00> : vector<128x128xf32>
      %225 = "flywheel.matmul"(%222, %223, %cst_105) {transpose_rhs = true} : (vector<128x128xbf16>, vector<128x128xbf16>, vector<128x128xf32>) -> vector<128x128xf32>
      %226 = arith.extf %222 : vector<128x128xbf16> to vector<128x128xf32>
      %227 = arith.extf %223 : vector<128x128xbf16> to vector<128x128xf32>
      %c0_106 = arith.constant 0 : index
      %c0_107 = arith.constant 0 : index
      %c64_108 = arith.constant 64 : index
      %c0_109 = arith.constant 0 : index
      %228 = vector.load %arg5[%c0_106, %c0_107, %c64_108, %c0_109] : memref<1x4x128x128xbf16>, vector<1x2x64x128xbf16>
      %229 = vector.shape_cast %228 : vector<1x2x64x128xbf16> to vector<128x128xbf16>
      %c0_110 = arith.constant 0 : index
      %c0_111 = arith.constant 0 : index
      %c1_112 = arith.constant 1 : index
      %c0_113 = arith.constant 0 : index
      %c0_114 = arith.constant 0 : index
      %230 = vector.load %arg6[%c0_110, %c0_111, %c1_112, %c0_113, %c0_114] : memref<1x1x2x2x256xf32>, vector<1x1x1x1x128xf32>
      %231 = vector.shape_cast %230 : vector<1x1x1x1x128xf32> to vector<1x128xf32>
      %c0_115 = arith.constant 0 : index
      %c0_116 = arith.constant 0 : index
      %c1_117 = arith.constant 1 : index
      %c1_118 = arith.constant 1 : index
      %c0_119 = arith.constant 0 : index
      %232 = vector.load %arg6[%c0_115, %c0_116, %c1_117, %c1_118, %c0_119] : memref<1x1x2x2x256xf32>, vector<1x1x1x1x128xf32>
      %233 = vector.shape_cast %232 : vector<1x1x1x1x128xf32> to vector<1x128xf32>
      %c0_120 = arith.constant 0 : index
      %c0_121 = arith.constant 0 : index
      %c1_122 = arith.constant 1 : index
      %c0_123 = arith.constant 0 : index
      %c0_124 = arith.constant 0 : index
      %234 = vector.load %arg7[%c0_120, %c0_121, %c1_122, %c0_123, %c0_124] : memref<1x1x2x1x256xf32>, vector<1x1x1x1x128xf32>
      %235 = vector.shape_cast %234 : vector<1x1x1x1x128xf32> to vector<1x128xf32>
      %236 = math.exp %231 : vector<1x128xf32>
      %237 = arith.subf %233, %231 : vector<1x128xf32>
      %238 = math.exp %237 : vector<1x128xf32>
      %239 = math.exp %233 : vector<1x128xf32>
      %240 = arith.mulf %235, %236 : vector<1x128xf32>
      %241 = arith.mulf %236, %cst_4 : vector<1x128xf32>
      %242 = vector.broadcast %231 : vector<1x128xf32> to vector<128x128xf32>
      %243 = vector.transpose %242, [1, 0] : vector<128x128xf32> to vector<128x128xf32>
      %244 = vector.broadcast %231 : vector<1x128xf32> to vector<128x128xf32>
      %245 = arith.subf %243, %244 : vector<128x128xf32>
      %246 = arith.select %9, %245, %cst_2 : vector<128x128xi1>, vector<128x128xf32>
      %247 = math.exp %246 : vector<128x128xf32>
      %248 = vector.broadcast %235 : vector<1x128xf32> to vector<128x128xf32>
      %249 = vector.transpose %248, [1, 0] : vector<128x128xf32> to vector<128x128xf32>
      %250 = arith.mulf %224, %247 : vector<128x128xf32>
      %251 = arith.mulf %250, %249 : vector<128x128xf32>
      %252 = arith.select %10, %251, %cst_1 : vector<128x128xi1>, vector<128x128xf32>
      %c0_125 = arith.constant 0 : index
      %c63_126 = arith.constant 63 : index
      %c1_127 = arith.constant 1 : index
      %253 = scf.for %arg11 = %c0_125 to %c63_126 step %c1_127 iter_args(%arg12 = %11) -> (vector<128x128xf32>) {
        %cst_189 = arith.constant dense<0.000000e+00> : vector<128x128xf32>
        %409 = "flywheel.matmul"(%252, %arg12, %cst_189) {precision = "bf16x3", transpose_rhs = false} : (vector<128x128xf32>, vector<128x128xf32>, vector<128x128xf32>) -> vector<128x128xf32>
        %410 = arith.subf %11, %409 : vector<128x128xf32>
        scf.yield %410 : vector<128x128xf32>
      }
      %254 = arith.extf %229 : vector<128x128xbf16> to vector<128x128xf32>
      %255 = vector.broadcast %235 : vector<1x128xf32> to vector<128x128xf32>
      %256 = vector.transpose %255, [1, 0] : vector<128x128xf32> to vector<128x128xf32>
      %257 = arith.mulf %256, %254 : vector<128x128xf32>
      %258 = vector.broadcast %240 : vector<1x128xf32> to vector<128x128xf32>
      %259 = vector.transpose %258, [1, 0] : vector<128x128xf32> to vector<128x128xf32>
      %260 = arith.mulf %259, %227 : vector<128x128xf32>
      %261 = "tpu.concatenate"(%257, %260) {dimension = 1 : i32} : (vector<128x128xf32>, vector<128x128xf32>) -> vector<128x256xf32>
      %cst_128 = arith.constant dense<0.000000e+00> : vector<128x256xf32>
      %262 = "flywheel.matmul"(%253, %261, %cst_128) {precision = "bf16x3", transpose_rhs = false} : (vector<128x128xf32>, vector<128x256xf32>, vector<128x256xf32>) -> vector<128x256xf32>
      %263 = vector.extract_strided_slice %262 {offsets = [0, 0], sizes = [128, 128], strides = [1, 1]} : vector<128x256xf32> to vector<128x128xf32>
      %264 = vector.extract_strided_slice %262 {offsets = [0, 128], sizes = [128, 128], strides = [1, 1]} : vector<128x256xf32> to vector<128x128xf32>
      %265 = vector.broadcast %241 : vector<1x128xf32> to vector<128x128xf32>
      %266 = vector.transpose %265, [1, 0] : vector<128x128xf32> to vector<128x128xf32>
      %267 = arith.mulf %266, %226 : vector<128x128xf32>
      %268 = vector.broadcast %238 : vector<1x128xf32> to vector<128x128xf32>
      %269 = vector.transpose %268, [1, 0] : vector<128x128xf32> to vector<128x128xf32>
      %270 = vector.broadcast %239 : vector<1x128xf32> to vector<128x128xf32>
      %271 = vector.transpose %270, [1, 0] : vector<128x128xf32> to vector<128x128xf32>
      %272 = arith.mulf %225, %247 : vector<128x128xf32>
      %273 = arith.mulf %272, %cst_3 : vector<128x128xf32>
      %274 = vector.extract_strided_slice %215 {offsets = [128, 0], sizes = [128, 128], strides = [1, 1]} : vector<256x128xbf16> to vector<128x128xbf16>
      %275 = vector.extract_strided_slice %217 {offsets = [128, 0], sizes = [128, 128], strides = [1, 1]} : vector<256x128xbf16> to vector<128x128xbf16>
      %cst_129 = arith.constant dense<0.000000e+00> : vector<128x128xf32>
      %276 = "flywheel.matmul"(%275, %275, %cst_129) {transpose_rhs = true} : (vector<128x128xbf16>, vector<128x128xbf16>, vector<128x128xf32>) -> vector<128x128xf32>
      %cst_130 = arith.constant dense<0.000000e+00> : vector<128x128xf32>
      %277 = "flywheel.matmul"(%274, %275, %cst_130) {transpose_rhs = true} : (vector<128x128xbf16>, vector<128x128xbf16>, vector<128x128xf32>) -> vector<128x128xf32>
      %278 = arith.extf %274 : vector<128x128xbf16> to vector<128x128xf32>
      %279 = arith.extf %275 : vector<128x128xbf16> to vector<128x128xf32>
      %c0_131 = arith.constant 0 : index
      %c2_132 = arith.constant 2 : index
      %c64_133 = arith.constant 64 : index
      %c0_134 = arith.constant 0 : index
      %280 = vector.load %arg5[%c0_131, %c2_132, %c64_133, %c0_134] : memref<1x4x128x128xbf16>, vector<1x2x64x128xbf16>
      %281 = vector.shape_cast %280 : vector<1x2x64x128xbf16> to vector<128x128xbf16>
      %c0_135 = arith.constant 0 : index
      %c0_136 = arith.constant 0 : index
      %c1_137 = arith.constant 1 : index
      %c0_138 = arith.constant 0 : index
      %c128_139 = arith.constant 128 : index
      %282 = vector.load %arg6[%c0_135, %c0_136, %c1_137, %c0_138, %c128_139] : memref<1x1x2x2x256xf32>, vector<1x1x1x1x128xf32>
      %283 = vector.shape_cast %282 : vector<1x1x1x1x128xf32> to vector<1x128xf32>
      %c0_140 = arith.constant 0 : index
      %c0_141 = arith.constant 0 : index
      %c1_142 = arith.constant 1 : index
      %c1_143 = arith.constant 1 : index
      %c128_144 = arith.constant 128 : index
      %284 = vector.load %arg6[%c0_140, %c0_141, %c1_142, %c1_143, %c128_144] : memref<1x1x2x2x256xf32>, vector<1x1x1x1x128xf32>
      %285 = vector.shape_cast %284 : vector<1x1x1x1x128xf32> to vector<1x128xf32>
      %c0_145 = arith.constant 0 : index
      %c0_146 = arith.constant 0 : index
      %c1_147 = arith.constant 1 : index
      %c0_148 = arith.constant 0 : index
      %c128_149 = arith.constant 128 : index
      %286 = vector.load %arg7[%c0_145, %c0_146, %c1_147, %c0_148, %c128_149] : memref<1x1x2x1x256xf32>, vector<1x1x1x1x128xf32>
      %287 = vector.shape_cast %286 : vector<1x1x1x1x128xf32> to vector<1x128xf32>
      %288 = math.exp %283 : vector<1x128xf32>
      %289 = arith.subf %285, %283 : vector<1x128xf32>
      %290 = math.exp %289 : vector<1x128xf32>
      %291 = math.exp %285 : vector<1x128xf32>
      %292 = arith.mulf %287, %288 : vector<1x128xf32>
      %293 = arith.mulf %288, %cst_4 : vector<1x128xf32>
      %294 = vector.broadcast %283 : vector<1x128xf32> to vector<128x128xf32>
      %295 = vector.transpose %294, [1, 0] : vector<128x128xf32> to vector<128x128xf32>
      %296 = vector.broadcast %283 : vector<1x128xf32> to vector<128x128xf32>
      %297 = arith.subf %295, %296 : vector<128x128xf32>
      %298 = arith.select %9, %297, %cst_2 : vector<128x128xi1>, vector<128x128xf32>
      %299 = math.exp %298 : vector<128x128xf32>
      %300 = vector.broadcast %287 : vector<1x128xf32> to vector<128x128xf32>
      %301 = vector.transpose %300, [1, 0] : vector<128x128xf32> to vector<128x128xf32>
      %302 = arith.mulf %276, %299 : vector<128x128xf32>
      %303 = arith.mulf %302, %301 : vector<128x128xf32>
      %304 = arith.select %10, %303, %cst_1 : vector<128x128xi1>, vector<128x128xf32>
      %c0_150 = arith.constant 0 : index
      %c63_151 = arith.constant 63 : index
      %c1_152 = arith.constant 1 : index
      %305 = scf.for %arg11 = %c0_150 to %c63_151 step %c1_152 iter_args(%arg12 = %11) -> (vector<128x128xf32>) {
        %cst_189 = arith.constant dense<0.000000e+00> : vector<128x128xf32>
        %409 = "flywheel.matmul"(%304, %arg12, %cst_189) {precision = "bf16x3", transpose_rhs = false} : (vector<128x128xf32>, vector<128x128xf32>, vector<128x128xf32>) -> vector<128x128xf32>
        %410 = arith.subf %11, %409 : vector<128x128xf32>
        scf.yield %410 : vector<128x128xf32>
      }
      %306 = arith.extf %281 : vector<128x128xbf16> to vector<128x128xf32>
      %307 = vector.broadcast %287 : vector<1x128xf32> to vector<128x128xf32>
      %308 = vector.transpose %307, [1, 0] : vector<128x128xf32> to vector<128x128xf32>
      %309 = arith.mulf %308, %306 : vector<128x128xf32>
      %310 = vector.broadcast %292 : vector<1x128xf32> to vector<128x128xf32>
      %311 = vector.transpose %310, [1, 0] : vector<128x128xf32> to vector<128x128xf32>
      %312 = arith.mulf %311, %279 : vector<128x128xf32>
      %313 = "tpu.concatenate"(%309, %312) {dimension = 1 : i32} : (vector<128x128xf32>, vector<128x128xf32>) -> vector<128x256xf32>
      %cst_153 = arith.constant dense<0.000000e+00> : vector<128x256xf32>
      %314 = "flywheel.matmul"(%305, %313, %cst_153) {precision = "bf16x3", transpose_rhs = false} : (vector<128x128xf32>, vector<128x256xf32>, vector<128x256xf32>) -> vector<128x256xf32>
      %315 = vector.extract_strided_slice %314 {offsets = [0, 0], sizes = [128, 128], strides = [1, 1]} : vector<128x256xf32> to vector<128x128xf32>
      %316 = vector.extract_strided_slice %314 {offsets = [0, 128], sizes = [128, 128], strides = [1, 1]} : vector<128x256xf32> to vector<128x128xf32>
      %317 = vector.broadcast %293 : vector<1x128xf32> to vector<128x128xf32>
      %318 = vector.transpose %317, [1, 0] : vector<128x128xf32> to vector<128x128xf32>
      %319 = arith.mulf %318, %278 : vector<128x128xf32>
      %320 = vector.broadcast %290 : vector<1x128xf32> to vector<128x128xf32>
      %321 = vector.transpose %320, [1, 0] : vector<128x128xf32> to vector<128x128xf32>
      %322 = vector.broadcast %291 : vector<1x128xf32> to vector<128x128xf32>
      %323 = vector.transpose %322, [1, 0] : vector<128x128xf32> to vector<128x128xf32>
      %324 = arith.mulf %277, %299 : vector<128x128xf32>
      %325 = arith.mulf %324, %cst_3 : vector<128x128xf32>
      %326 = vector.extract_strided_slice %264 {offsets = [0, 0], sizes = [64, 128], strides = [1, 1]} : vector<128x128xf32> to vector<64x128xf32>
      %327 = vector.extract_strided_slice %267 {offsets = [0, 0], sizes = [64, 128], strides = [1, 1]} : vector<128x128xf32> to vector<64x128xf32>
      %328 = "tpu.concatenate"(%326, %327) {dimension = 0 : i32} : (vector<64x128xf32>, vector<64x128xf32>) -> vector<128x128xf32>
      %cst_154 = arith.constant dense<0.000000e+00> : vector<128x128xf32>
      %329 = "flywheel.matmul"(%328, %193, %cst_154) {precision = "bf16x3", transpose_rhs = false} : (vector<128x128xf32>, vector<128x128xf32>, vector<128x128xf32>) -> vector<128x128xf32>
      %330 = vector.extract_strided_slice %329 {offsets = [64, 0], sizes = [64, 128], strides = [1, 1]} : vector<128x128xf32> to vector<64x128xf32>
      %331 = vector.extract_strided_slice %329 {offsets = [0, 0], sizes = [64, 128], strides = [1, 1]} : vector<128x128xf32> to vector<64x128xf32>
      %332 = vector.extract_strided_slice %263 {offsets = [0, 0], sizes = [64, 128], strides = [1, 1]} : vector<128x128xf32> to vector<64x128xf32>
      %333 = arith.subf %332, %331 : vector<64x128xf32>
      %334 = vector.extract_strided_slice %264 {offsets = [64, 0], sizes = [64, 128], strides = [1, 1]} : vector<128x128xf32> to vector<64x128xf32>
      %335 = vector.extract_strided_slice %267 {offsets = [64, 0], sizes = [64, 128], strides = [1, 1]} : vector<128x128xf32> to vector<64x128xf32>
      %336 = "tpu.concatenate"(%334, %335) {dimension = 0 : i32} : (vector<64x128xf32>, vector<64x128xf32>) -> vector<128x128xf32>
      %cst_155 = arith.constant dense<0.000000e+00> : vector<128x128xf32>
      %337 = "flywheel.matmul"(%336, %199, %cst_155) {precision = "bf16x3", transpose_rhs = false} : (vector<128x128xf32>, vector<128x128xf32>, vector<128x128xf32>) -> vector<128x128xf32>
      %338 = vector.extract_strided_slice %337 {offsets = [64, 0], sizes = [64, 128], strides = [1, 1]} : vector<128x128xf32> to vector<64x128xf32>
      %339 = vector.extract_strided_slice %337 {offsets = [0, 0], sizes = [64, 128], strides = [1, 1]} : vector<128x128xf32> to vector<64x128xf32>
      %340 = vector.extract_strided_slice %263 {offsets = [64, 0], sizes = [64, 128], strides = [1, 1]} : vector<128x128xf32> to vector<64x128xf32>
      %341 = arith.subf %340, %339 : vector<64x128xf32>
      %342 = vector.extract_strided_slice %316 {offsets = [0, 0], sizes = [64, 128], strides = [1, 1]} : vector<128x128xf32> to vector<64x128xf32>
      %343 = vector.extract_strided_slice %319 {offsets = [0, 0], sizes = [64, 128], strides = [1, 1]} : vector<128x128xf32> to vector<64x128xf32>
      %344 = "tpu.concatenate"(%342, %343) {dimension = 0 : i32} : (vector<64x128xf32>, vector<64x128xf32>) -> vector<128x128xf32>
      %cst_156 = arith.constant dense<0.000000e+00> : vector<128x128xf32>
      %345 = "flywheel.matmul"(%344, %205, %cst_156) {precision = "bf16x3", transpose_rhs = false} : (vector<128x128xf32>, vector<128x128xf32>, vector<128x128xf32>) -> vector<128x128xf32>
      %346 = vector.extract_strided_slice %345 {offsets = [64, 0], sizes = [64, 128], strides = [1, 1]} : vector<128x128xf32> to vector<64x128xf32>
      %347 = vector.extract_strided_slice %345 {offsets = [0, 0], sizes = [64, 128], strides = [1, 1]} : vector<128x128xf32> to vector<64x128xf32>
      %348 = vector.extract_strided_slice %315 {offsets = [0, 0], sizes = [64, 128], strides = [1, 1]} : vector<128x128xf32> to vector<64x128xf32>
      %349 = arith.subf %348, %347 : vector<64x128xf32>
      %350 = vector.extract_strided_slice %316 {offsets = [64, 0], sizes = [64, 128], strides = [1, 1]} : vector<128x128xf32> to vector<64x128xf32>
      %351 = vector.extract_strided_slice %319 {offsets = [64, 0], sizes = [64, 128], strides = [1, 1]} : vector<128x128xf32> to vector<64x128xf32>
      %352 = "tpu.concatenate"(%350, %351) {dimension = 0 : i32} : (vector<64x128xf32>, vector<64x128xf32>) -> vector<128x128xf32>
      %cst_157 = arith.constant dense<0.000000e+00> : vector<128x128xf32>
      %353 = "flywheel.matmul"(%352, %211, %cst_157) {precision = "bf16x3", transpose_rhs = false} : (vector<128x128xf32>, vector<128x128xf32>, vector<128x128xf32>) -> vector<128x128xf32>
      %354 = vector.extract_strided_slice %353 {offsets = [64, 0], sizes = [64, 128], strides = [1, 1]} : vector<128x128xf32> to vector<64x128xf32>
      %355 = vector.extract_strided_slice %353 {offsets = [0, 0], sizes = [64, 128], strides = [1, 1]} : vector<128x128xf32> to vector<64x128xf32>
      %356 = vector.extract_strided_slice %315 {offsets = [64, 0], sizes = [64, 128], strides = [1, 1]} : vector<128x128xf32> to vector<64x128xf32>
      %357 = arith.subf %356, %355 : vector<64x128xf32>
      %358 = "tpu.concatenate"(%333, %341) {dimension = 0 : i32} : (vector<64x128xf32>, vector<64x128xf32>) -> vector<128x128xf32>
      %359 = "tpu.concatenate"(%349, %357) {dimension = 0 : i32} : (vector<64x128xf32>, vector<64x128xf32>) -> vector<128x128xf32>
      %360 = "tpu.concatenate"(%330, %338) {dimension = 0 : i32} : (vector<64x128xf32>, vector<64x128xf32>) -> vector<128x128xf32>
      %361 = "tpu.concatenate"(%346, %354) {dimension = 0 : i32} : (vector<64x128xf32>, vector<64x128xf32>) -> vector<128x128xf32>
      %cst_158 = arith.constant dense<0.000000e+00> : vector<128x128xf32>
      %362 = "flywheel.matmul"(%273, %358, %cst_158) {precision = "bf16x3", transpose_rhs = false} : (vector<128x128xf32>, vector<128x128xf32>, vector<128x128xf32>) -> vector<128x128xf32>
      %363 = arith.addf %360, %362 : vector<128x128xf32>
      %364 = vector.extract_strided_slice %363 {offsets = [0, 0], sizes = [64, 128], strides = [1, 1]} : vector<128x128xf32> to vector<64x128xf32>
      %365 = arith.truncf %364 : vector<64x128xf32> to vector<64x128xbf16>
      %c0_159 = arith.constant 0 : index
      %c64_160 = arith.constant 64 : index
      %c0_161 = arith.constant 0 : index
      %366 = vector.shape_cast %365 : vector<64x128xbf16> to vector<1x64x128xbf16>
      "tpu.vector_store"(%366, %arg8, %c0_159, %c64_160, %c0_161) {add = false, operandSegmentSizes = array<i32: 1, 1, 3, 0>, strides = array<i32>} : (vector<1x64x128xbf16>, memref<1x128x512xbf16>, index, index, index) -> ()
      %367 = vector.extract_strided_slice %363 {offsets = [64, 0], sizes = [64, 128], strides = [1, 1]} : vector<128x128xf32> to vector<64x128xf32>
      %368 = arith.truncf %367 : vector<64x128xf32> to vector<64x128xbf16>
      %c0_162 = arith.constant 0 : index
      %c64_163 = arith.constant 64 : index
      %c128_164 = arith.constant 128 : index
      %369 = vector.shape_cast %368 : vector<64x128xbf16> to vector<1x64x128xbf16>
      "tpu.vector_store"(%369, %arg8, %c0_162, %c64_163, %c128_164) {add = false, operandSegmentSizes = array<i32: 1, 1, 3, 0>, strides = array<i32>} : (vector<1x64x128xbf16>, memref<1x128x512xbf16>, index, index, index) -> ()
      %370 = arith.mulf %269, %358 : vector<128x128xf32>
      %cst_165 = arith.constant dense<0.000000e+00> : vector<128x128xf32>
      %371 = "flywheel.matmul"(%325, %359, %cst_165) {precision = "bf16x3", transpose_rhs = false} : (vector<128x128xf32>, vector<128x128xf32>, vector<128x128xf32>) -> vector<128x128xf32>
      %372 = arith.addf %361, %371 : vector<128x128xf32>
      %373 = vector.extract_strided_slice %372 {offsets = [0, 0], sizes = [64, 128], strides = [1, 1]} : vector<128x128xf32> to vector<64x128xf32>
      %374 = arith.truncf %373 : vector<64x128xf32> to vector<64x128xbf16>
      %c0_166 = arith.constant 0 : index
      %c64_167 = arith.constant 64 : index
      %c256_168 = arith.constant 256 : index
      %375 = vector.shape_cast %374 : vector<64x128xbf16> to vector<1x64x128xbf16>
      "tpu.vector_store"(%375, %arg8, %c0_166, %c64_167, %c256_168) {add = false, operandSegmentSizes = array<i32: 1, 1, 3, 0>, strides = array<i32>} : (vector<1x64x128xbf16>, memref<1x128x512xbf16>, index, index, index) -> ()
      %376 = vector.extract_strided_slice %372 {offsets = [64, 0], sizes = [64, 128], strides = [1, 1]} : vector<128x128xf32> to vector<64x128xf32>
      %377 = arith.truncf %376 : vector<64x128xf32> to vector<64x128xbf16>
      %c0_169 = arith.constant 0 : index
      %c64_170 = arith.constant 64 : index
      %c384_171 = arith.constant 384 : index
      %378 = vector.shape_cast %377 : vector<64x128xbf16> to vector<1x64x128xbf16>
      "tpu.vector_store"(%378, %arg8, %c0_169, %c64_170, %c384_171) {add = false, operandSegmentSizes = array<i32: 1, 1, 3, 0>, strides = array<i32>} : (vector<1x64x128xbf16>, memref<1x128x512xbf16>, index, index, index) -> ()
      %379 = arith.mulf %321, %359 : vector<128x128xf32>
      %380 = vector.extract_strided_slice %370 {offsets = [0, 0], sizes = [64, 128], strides = [1, 1]} : vector<128x128xf32> to vector<64x128xf32>
      %cst_172 = arith.constant dense<0.000000e+00> : vector<128x128xf32>
      %381 = "flywheel.matmul"(%221, %380, %cst_172) {precision = "bf16x3", transpose_rhs = false} : (vector<128x64xf32>, vector<64x128xf32>, vector<128x128xf32>) -> vector<128x128xf32>
      %382 = vector.extract_strided_slice %271 {offsets = [0, 0], sizes = [1, 128], strides = [1, 1]} : vector<128x128xf32> to vector<1x128xf32>
      %383 = vector.broadcast %382 : vector<1x128xf32> to vector<128x128xf32>
      %384 = arith.mulf %383, %193 : vector<128x128xf32>
      %385 = arith.addf %384, %381 : vector<128x128xf32>
      %386 = vector.extract_strided_slice %370 {offsets = [64, 0], sizes = [64, 128], strides = [1, 1]} : vector<128x128xf32> to vector<64x128xf32>
      %cst_173 = arith.constant dense<0.000000e+00> : vector<128x128xf32>
      %387 = "flywheel.matmul"(%221, %386, %cst_173) {precision = "bf16x3", transpose_rhs = false} : (vector<128x64xf32>, vector<64x128xf32>, vector<128x128xf32>) -> vector<128x128xf32>
      %388 = vector.extract_strided_slice %271 {offsets = [64, 0], sizes = [1, 128], strides = [1, 1]} : vector<128x128xf32> to vector<1x128xf32>
      %389 = vector.broadcast %388 : vector<1x128xf32> to vector<128x128xf32>
      %390 = arith.mulf %389, %199 : vector<128x128xf32>
      %391 = arith.addf %390, %387 : vector<128x128xf32>
      %392 = vector.extract_strided_slice %379 {offsets = [0, 0], sizes = [64, 128], strides = [1, 1]} : vector<128x128xf32> to vector<64x128xf32>
      %cst_174 = arith.constant dense<0.000000e+00> : vector<128x128xf32>
      %393 = "flywheel.matmul"(%221, %392, %cst_174) {precision = "bf16x3", transpose_rhs = false} : (vector<128x64xf32>, vector<64x128xf32>, vector<128x128xf32>) -> vector<128x128xf32>
      %394 = vector.extract_strided_slice %323 {offsets = [0, 0], sizes = [1, 128], strides = [1, 1]} : vector<128x128xf32> to vector<1x128xf32>
      %395 = vector.broadcast %394 : vector<1x128xf32> to vector<128x128xf32>
      %396 = arith.mulf %395, %205 : vector<128x128xf32>
      %397 = arith.addf %396, %393 : vector<128x128xf32>
      %398 = vector.extract_strided_slice %379 {offsets = [64, 0], sizes = [64, 128], strides = [1, 1]} : vector<128x128xf32> to vector<64x128xf32>
      %cst_175 = arith.constant dense<0.000000e+00> : vector<128x128xf32>
      %399 = "flywheel.matmul"(%221, %398, %cst_175) {precision = "bf16x3", transpose_rhs = false} : (vector<128x64xf32>, vector<64x128xf32>, vector<128x128xf32>) -> vector<128x128xf32>
      %400 = vector.extract_strided_slice %323 {offsets = [64, 0], sizes = [1, 128], strides = [1, 1]} : vector<128x128xf32> to vector<1x128xf32>
      %401 = vector.broadcast %400 : vector<1x128xf32> to vector<128x128xf32>
      %402 = arith.mulf %401, %211 : vector<128x128xf32>
      %403 = arith.addf %402, %399 : vector<128x128xf32>
      %c0_176 = arith.constant 0 : index
      %c0_177 = arith.constant 0 : index
      %c0_178 = arith.constant 0 : index
      %404 = vector.shape_cast %385 : vector<128x128xf32> to vector<1x128x128xf32>
      "tpu.vector_store"(%404, %arg10, %c0_176, %c0_177, %c0_178) {add = false, operandSegmentSizes = array<i32: 1, 1, 3, 0>, strides = array<i32>} : (vector<1x128x128xf32>, memref<4x128x128xf32>, index, index, index) -> ()
      %c1_179 = arith.constant 1 : index
      %c0_180 = arith.constant 0 : index
      %c0_181 = arith.constant 0 : index
      %405 = vector.shape_cast %391 : vector<128x128xf32> to vector<1x128x128xf32>
      "tpu.vector_store"(%405, %arg10, %c1_179, %c0_180, %c0_181) {add = false, operandSegmentSizes = array<i32: 1, 1, 3, 0>, strides = array<i32>} : (vector<1x128x128xf32>, memref<4x128x128xf32>, index, index, index) -> ()
      %c2_182 = arith.constant 2 : index
      %c0_183 = arith.constant 0 : index
      %c0_184 = arith.constant 0 : index
      %406 = vector.shape_cast %397 : vector<128x128xf32> to vector<1x128x128xf32>
      "tpu.vector_store"(%406, %arg10, %c2_182, %c0_183, %c0_184) {add = false, operandSegmentSizes = array<i32: 1, 1, 3, 0>, strides = array<i32>} : (vector<1x128x128xf32>, memref<4x128x128xf32>, index, index, index) -> ()
      %c3_185 = arith.constant 3 : index
      %c0_186 = arith.constant 0 : index
      %c0_187 = arith.constant 0 : index
      %407 = vector.shape_cast %403 : vector<128x128xf32> to vector<1x128x128xf32>
      "tpu.vector_store"(%407, %arg10, %c3_185, %c0_186, %c0_187) {add = false, operandSegmentSizes = array<i32: 1, 1, 3, 0>, strides = array<i32>} : (vector<1x128x128xf32>, memref<4x128x128xf32>, index, index, index) -> ()
      %c0_i32_188 = arith.constant 0 : i32
      %408 = arith.cmpi eq, %arg2, %c0_i32_188 : i32
      scf.if %408 {
        %c0_189 = arith.constant 0 : index
        %c0_190 = arith.constant 0 : index
        %c0_191 = arith.constant 0 : index
        %c0_192 = arith.constant 0 : index
        %409 = vector.shape_cast %385 : vector<128x128xf32> to vector<1x1x128x128xf32>
        "tpu.vector_store"(%409, %arg9, %c0_189, %c0_190, %c0_191, %c0_192) {add = false, operandSegmentSizes = array<i32: 1, 1, 4, 0>, strides = array<i32>} : (vector<1x1x128x128xf32>, memref<1x4x128x128xf32>, index, index, index, index) -> ()
        %c0_193 = arith.constant 0 : index
        %c1_194 = arith.constant 1 : index
        %c0_195 = arith.constant 0 : index
        %c0_196 = arith.constant 0 : index
        %410 = vector.shape_cast %391 : vector<128x128xf32> to vector<1x1x128x128xf32>
        "tpu.vector_store"(%410, %arg9, %c0_193, %c1_194, %c0_195, %c0_196) {add = false, operandSegmentSizes = array<i32: 1, 1, 4, 0>, strides = array<i32>} : (vector<1x1x128x128xf32>, memref<1x4x128x128xf32>, index, index, index, index) -> ()
        %c0_197 = arith.constant 0 : index
        %c2_198 = arith.constant 2 : index
        %c0_199 = arith.constant 0 : index
        %c0_200 = arith.constant 0 : index
        %411 = vector.shape_cast %397 : vector<128x128xf32> to vector<1x1x128x128xf32>
        "tpu.vector_store"(%411, %arg9, %c0_197, %c2_198, %c0_199, %c0_200) {add = false, operandSegmentSizes = array<i32: 1, 1, 4, 0>, strides = array<i32>} : (vector<1x1x128x128xf32>, memref<1x4x128x128xf32>, index, index, index, index) -> ()
        %c0_201 = arith.constant 0 : index
        %c3_202 = arith.constant 3 : index
        %c0_203 = arith.constant 0 : index
        %c0_204 = arith.constant 0 : index
        %412 = vector.shape_cast %403 : vector<128x128xf32> to vector<1x1x128x128xf32>
        "tpu.vector_store"(%412, %arg9, %c0_201, %c3_202, %c0_203, %c0_204) {add = false, operandSegmentSizes = array<i32: 1, 1, 4, 0>, strides = array<i32>} : (vector<1x1x128x128xf32>, memref<1x4x128x128xf32>, index, index, index, index) -> ()
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

