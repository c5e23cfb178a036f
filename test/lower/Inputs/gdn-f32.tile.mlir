// Tile IR of Gated DeltaNet, f32 (two value heads, two chunks of 64): one head and one chunk per grid step. Made by: sed 's/xbf16>/xf32>/g' test/Inputs/gdn-kernel-bf16.mlir | flywheel-opt --pass-pipeline='builtin.module(flywheel-layout,flywheel-tile{gdn-heads=1 gdn-chunks-per-step=1})' | mlir-opt-22 --allow-unregistered-dialect
module {
  func.func @main(%arg0: tensor<1x128x1x128xf32>, %arg1: tensor<1x128x1x128xf32>, %arg2: tensor<1x128x2x128xf32>, %arg3: tensor<1x128x2xf32>, %arg4: tensor<1x128x2xf32>) -> (tensor<1x128x2x128xf32>, tensor<1x2x128x128xf32>) {
    %0 = "stablehlo.reshape"(%arg0) : (tensor<1x128x1x128xf32>) -> tensor<1x1x128x128xf32>
    %1 = "stablehlo.reshape"(%arg1) : (tensor<1x128x1x128xf32>) -> tensor<1x1x128x128xf32>
    %2 = "stablehlo.reshape"(%arg2) : (tensor<1x128x2x128xf32>) -> tensor<2x64x2x128xf32>
    %3 = "stablehlo.transpose"(%2) <{permutation = array<i64: 2, 0, 1, 3>}> : (tensor<2x64x2x128xf32>) -> tensor<2x2x64x128xf32>
    %4 = "stablehlo.reshape"(%3) : (tensor<2x2x64x128xf32>) -> tensor<1x2x128x128xf32>
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
    %19:2 = "flywheel.gated_delta_kernel"(%0, %1, %4, %15, %18) {bytes_accessed = 658432 : i64, flops = 46137344 : i64, kernel = @flywheel_kernel_0, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 0, 0>, transcendentals = 17152 : i64} : (tensor<1x1x128x128xf32>, tensor<1x1x128x128xf32>, tensor<1x2x128x128xf32>, tensor<1x2x2x2x64xf32>, tensor<1x2x2x1x64xf32>) -> (tensor<1x128x256xf32>, tensor<1x2x128x128xf32>)
    %20 = "stablehlo.reshape"(%19#0) : (tensor<1x128x256xf32>) -> tensor<1x128x2x128xf32>
    return %20, %19#1 : tensor<1x128x2x128xf32>, tensor<1x2x128x128xf32>
  }
  module @flywheel_kernel_0 attributes {stable_mosaic.version = 15 : i64} {
    func.func @gated_delta_kernel(%arg0: i32, %arg1: i32, %arg2: i32, %arg3: memref<1x1x64x128xf32>, %arg4: memref<1x1x64x128xf32>, %arg5: memref<1x1x64x128xf32>, %arg6: memref<1x1x1x2x64xf32>, %arg7: memref<1x1x1x1x64xf32>, %arg8: memref<1x64x128xf32>, %arg9: memref<1x1x128x128xf32>, %arg10: memref<1x128x128xf32>) attributes {dimension_semantics = [#tpu.dimension_semantics<parallel>, #tpu.dimension_semantics<parallel>, #tpu.dimension_semantics<arbitrary>], iteration_bounds = array<i64: 1, 2, 2>, scalar_prefetch = 0 : i64, scratch_operands = 1 : i64, tpu.core_type = #tpu.core_type<tc>, window_params = [{transform_indices = @key_chunks, window_bounds = array<i64: 1, 1, 64, 128>}, {transform_indices = @key_chunks, window_bounds = array<i64: 1, 1, 64, 128>}, {transform_indices = @value_chunks, window_bounds = array<i64: 1, 1, 64, 128>}, {transform_indices = @gate_chunks, window_bounds = array<i64: 1, 1, 1, 2, 64>}, {transform_indices = @gate_chunks, window_bounds = array<i64: 1, 1, 1, 1, 64>}, {transform_indices = @value_tokens, window_bounds = array<i64: 1, 64, 128>}, {transform_indices = @states, window_bounds = array<i64: 1, 1, 128, 128>}]} {
      %c0_i32 = arith.constant 0 : i32
      %0 = arith.cmpi eq, %arg2, %c0_i32 : i32
      scf.if %0 {
        %cst_50 = arith.constant dense<0.000000e+00> : vector<128x128xf32>
        %c0_51 = arith.constant 0 : index
        %c0_52 = arith.constant 0 : index
        %c0_53 = arith.constant 0 : index
        %86 = vector.shape_cast %cst_50 : vector<128x128xf32> to vector<1x128x128xf32>
        "tpu.vector_store"(%86, %arg10, %c0_51, %c0_52, %c0_53) {add = false, operandSegmentSizes = array<i32: 1, 1, 3, 0>, strides = array<i32>} : (vector<1x128x128xf32>, memref<1x128x128xf32>, index, index, index) -> ()
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
      %9 = vector.load %arg3[%c0_6, %c0_7, %c0_8, %c0_9] : memref<1x1x64x128xf32>, vector<1x1x64x128xf32>
      %c0_10 = arith.constant 0 : index
      %c0_11 = arith.constant 0 : index
      %c0_12 = arith.constant 0 : index
      %c0_13 = arith.constant 0 : index
      %10 = vector.load %arg4[%c0_10, %c0_11, %c0_12, %c0_13] : memref<1x1x64x128xf32>, vector<1x1x64x128xf32>
      %11 = vector.broadcast %9 : vector<1x1x64x128xf32> to vector<1x1x64x128xf32>
      %12 = vector.shape_cast %11 : vector<1x1x64x128xf32> to vector<64x128xf32>
      %13 = vector.broadcast %10 : vector<1x1x64x128xf32> to vector<1x1x64x128xf32>
      %14 = vector.shape_cast %13 : vector<1x1x64x128xf32> to vector<64x128xf32>
      %c0_14 = arith.constant 0 : index
      %c0_15 = arith.constant 0 : index
      %c0_16 = arith.constant 0 : index
      %c0_17 = arith.constant 0 : index
      %15 = vector.load %arg4[%c0_14, %c0_15, %c0_16, %c0_17] : memref<1x1x64x128xf32>, vector<1x1x64x128xf32>
      %16 = vector.shape_cast %15 : vector<1x1x64x128xf32> to vector<64x128xf32>
      %17 = vector.transpose %16, [1, 0] : vector<64x128xf32> to vector<128x64xf32>
      %cst_18 = arith.constant dense<0.000000e+00> : vector<64x64xf32>
      %18 = "flywheel.matmul"(%14, %14, %cst_18) {precision = "bf16x3", transpose_rhs = true} : (vector<64x128xf32>, vector<64x128xf32>, vector<64x64xf32>) -> vector<64x64xf32>
      %cst_19 = arith.constant dense<0.000000e+00> : vector<64x64xf32>
      %19 = "flywheel.matmul"(%12, %14, %cst_19) {precision = "bf16x3", transpose_rhs = true} : (vector<64x128xf32>, vector<64x128xf32>, vector<64x64xf32>) -> vector<64x64xf32>
      %c0_20 = arith.constant 0 : index
      %c0_21 = arith.constant 0 : index
      %c0_22 = arith.constant 0 : index
      %c0_23 = arith.constant 0 : index
      %20 = vector.load %arg5[%c0_20, %c0_21, %c0_22, %c0_23] : memref<1x1x64x128xf32>, vector<1x1x64x128xf32>
      %21 = vector.shape_cast %20 : vector<1x1x64x128xf32> to vector<64x128xf32>
      %c0_24 = arith.constant 0 : index
      %c0_25 = arith.constant 0 : index
      %c0_26 = arith.constant 0 : index
      %c0_27 = arith.constant 0 : index
      %c0_28 = arith.constant 0 : index
      %22 = vector.load %arg6[%c0_24, %c0_25, %c0_26, %c0_27, %c0_28] : memref<1x1x1x2x64xf32>, vector<1x1x1x1x64xf32>
      %23 = vector.shape_cast %22 : vector<1x1x1x1x64xf32> to vector<1x64xf32>
      %c0_29 = arith.constant 0 : index
      %c0_30 = arith.constant 0 : index
      %c0_31 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c0_32 = arith.constant 0 : index
      %24 = vector.load %arg6[%c0_29, %c0_30, %c0_31, %c1, %c0_32] : memref<1x1x1x2x64xf32>, vector<1x1x1x1x64xf32>
      %25 = vector.shape_cast %24 : vector<1x1x1x1x64xf32> to vector<1x64xf32>
      %c0_33 = arith.constant 0 : index
      %c0_34 = arith.constant 0 : index
      %c0_35 = arith.constant 0 : index
      %c0_36 = arith.constant 0 : index
      %c0_37 = arith.constant 0 : index
      %26 = vector.load %arg7[%c0_33, %c0_34, %c0_35, %c0_36, %c0_37] : memref<1x1x1x1x64xf32>, vector<1x1x1x1x64xf32>
      %27 = vector.shape_cast %26 : vector<1x1x1x1x64xf32> to vector<1x64xf32>
      %28 = math.exp %23 : vector<1x64xf32>
      %29 = arith.subf %25, %23 : vector<1x64xf32>
      %30 = math.exp %29 : vector<1x64xf32>
      %31 = math.exp %25 : vector<1x64xf32>
      %32 = arith.mulf %27, %28 : vector<1x64xf32>
      %33 = arith.mulf %28, %cst_3 : vector<1x64xf32>
      %34 = vector.broadcast %23 : vector<1x64xf32> to vector<64x64xf32>
      %35 = vector.transpose %34, [1, 0] : vector<64x64xf32> to vector<64x64xf32>
      %36 = vector.broadcast %23 : vector<1x64xf32> to vector<64x64xf32>
      %37 = arith.subf %35, %36 : vector<64x64xf32>
      %38 = arith.select %3, %37, %cst_1 : vector<64x64xi1>, vector<64x64xf32>
      %39 = math.exp %38 : vector<64x64xf32>
      %40 = vector.broadcast %27 : vector<1x64xf32> to vector<64x64xf32>
      %41 = vector.transpose %40, [1, 0] : vector<64x64xf32> to vector<64x64xf32>
      %42 = arith.mulf %18, %39 : vector<64x64xf32>
      %43 = arith.mulf %42, %41 : vector<64x64xf32>
      %44 = arith.select %4, %43, %cst_0 : vector<64x64xi1>, vector<64x64xf32>
      %c0_38 = arith.constant 0 : index
      %c63 = arith.constant 63 : index
      %c1_39 = arith.constant 1 : index
      %45 = scf.for %arg11 = %c0_38 to %c63 step %c1_39 iter_args(%arg12 = %6) -> (vector<64x64xf32>) {
        %cst_50 = arith.constant dense<0.000000e+00> : vector<64x64xf32>
        %86 = "flywheel.matmul"(%44, %arg12, %cst_50) {precision = "bf16x3", transpose_rhs = false} : (vector<64x64xf32>, vector<64x64xf32>, vector<64x64xf32>) -> vector<64x64xf32>
        %87 = arith.subf %6, %86 : vector<64x64xf32>
        scf.yield %87 : vector<64x64xf32>
      }
      %46 = vector.broadcast %27 : vector<1x64xf32> to vector<128x64xf32>
      %47 = vector.transpose %46, [1, 0] : vector<128x64xf32> to vector<64x128xf32>
      %48 = arith.mulf %47, %21 : vector<64x128xf32>
      %49 = vector.broadcast %32 : vector<1x64xf32> to vector<128x64xf32>
      %50 = vector.transpose %49, [1, 0] : vector<128x64xf32> to vector<64x128xf32>
      %51 = arith.mulf %50, %14 : vector<64x128xf32>
      %52 = "tpu.concatenate"(%48, %51) {dimension = 1 : i32} : (vector<64x128xf32>, vector<64x128xf32>) -> vector<64x256xf32>
      %cst_40 = arith.constant dense<0.000000e+00> : vector<64x256xf32>
      %53 = "flywheel.matmul"(%45, %52, %cst_40) {precision = "bf16x3", transpose_rhs = false} : (vector<64x64xf32>, vector<64x256xf32>, vector<64x256xf32>) -> vector<64x256xf32>
      %54 = vector.extract_strided_slice %53 {offsets = [0, 0], sizes = [64, 128], strides = [1, 1]} : vector<64x256xf32> to vector<64x128xf32>
      %55 = vector.extract_strided_slice %53 {offsets = [0, 128], sizes = [64, 128], strides = [1, 1]} : vector<64x256xf32> to vector<64x128xf32>
      %56 = vector.broadcast %33 : vector<1x64xf32> to vector<128x64xf32>
      %57 = vector.transpose %56, [1, 0] : vector<128x64xf32> to vector<64x128xf32>
      %58 = arith.mulf %57, %12 : vector<64x128xf32>
      %59 = vector.broadcast %30 : vector<1x64xf32> to vector<128x64xf32>
      %60 = vector.transpose %59, [1, 0] : vector<128x64xf32> to vector<64x128xf32>
      %61 = vector.broadcast %31 : vector<1x64xf32> to vector<128x64xf32>
      %62 = vector.transpose %61, [1, 0] : vector<128x64xf32> to vector<64x128xf32>
      %63 = arith.mulf %19, %39 : vector<64x64xf32>
      %64 = arith.mulf %63, %cst_2 : vector<64x64xf32>
      %65 = vector.extract_strided_slice %55 {offsets = [0, 0], sizes = [64, 128], strides = [1, 1]} : vector<64x128xf32> to vector<64x128xf32>
      %66 = vector.extract_strided_slice %58 {offsets = [0, 0], sizes = [64, 128], strides = [1, 1]} : vector<64x128xf32> to vector<64x128xf32>
      %67 = "tpu.concatenate"(%65, %66) {dimension = 0 : i32} : (vector<64x128xf32>, vector<64x128xf32>) -> vector<128x128xf32>
      %cst_41 = arith.constant dense<0.000000e+00> : vector<128x128xf32>
      %68 = "flywheel.matmul"(%67, %8, %cst_41) {precision = "bf16x3", transpose_rhs = false} : (vector<128x128xf32>, vector<128x128xf32>, vector<128x128xf32>) -> vector<128x128xf32>
      %69 = vector.extract_strided_slice %68 {offsets = [64, 0], sizes = [64, 128], strides = [1, 1]} : vector<128x128xf32> to vector<64x128xf32>
      %70 = vector.extract_strided_slice %68 {offsets = [0, 0], sizes = [64, 128], strides = [1, 1]} : vector<128x128xf32> to vector<64x128xf32>
      %71 = vector.extract_strided_slice %54 {offsets = [0, 0], sizes = [64, 128], strides = [1, 1]} : vector<64x128xf32> to vector<64x128xf32>
      %72 = arith.subf %71, %70 : vector<64x128xf32>
      %cst_42 = arith.constant dense<0.000000e+00> : vector<64x128xf32>
      %73 = "flywheel.matmul"(%64, %72, %cst_42) {precision = "bf16x3", transpose_rhs = false} : (vector<64x64xf32>, vector<64x128xf32>, vector<64x128xf32>) -> vector<64x128xf32>
      %74 = arith.addf %69, %73 : vector<64x128xf32>
      %75 = vector.extract_strided_slice %74 {offsets = [0, 0], sizes = [64, 128], strides = [1, 1]} : vector<64x128xf32> to vector<64x128xf32>
      %c0_43 = arith.constant 0 : index
      %c0_44 = arith.constant 0 : index
      %c0_45 = arith.constant 0 : index
      %76 = vector.shape_cast %75 : vector<64x128xf32> to vector<1x64x128xf32>
      "tpu.vector_store"(%76, %arg8, %c0_43, %c0_44, %c0_45) {add = false, operandSegmentSizes = array<i32: 1, 1, 3, 0>, strides = array<i32>} : (vector<1x64x128xf32>, memref<1x64x128xf32>, index, index, index) -> ()
      %77 = arith.mulf %60, %72 : vector<64x128xf32>
      %78 = vector.extract_strided_slice %77 {offsets = [0, 0], sizes = [64, 128], strides = [1, 1]} : vector<64x128xf32> to vector<64x128xf32>
      %cst_46 = arith.constant dense<0.000000e+00> : vector<128x128xf32>
      %79 = "flywheel.matmul"(%17, %78, %cst_46) {precision = "bf16x3", transpose_rhs = false} : (vector<128x64xf32>, vector<64x128xf32>, vector<128x128xf32>) -> vector<128x128xf32>
      %80 = vector.extract_strided_slice %62 {offsets = [0, 0], sizes = [1, 128], strides = [1, 1]} : vector<64x128xf32> to vector<1x128xf32>
      %81 = vector.broadcast %80 : vector<1x128xf32> to vector<128x128xf32>
      %82 = arith.mulf %81, %8 : vector<128x128xf32>
      %83 = arith.addf %82, %79 : vector<128x128xf32>
      %c0_47 = arith.constant 0 : index
      %c0_48 = arith.constant 0 : index
      %c0_49 = arith.constant 0 : index
      %84 = vector.shape_cast %83 : vector<128x128xf32> to vector<1x128x128xf32>
      "tpu.vector_store"(%84, %arg10, %c0_47, %c0_48, %c0_49) {add = false, operandSegmentSizes = array<i32: 1, 1, 3, 0>, strides = array<i32>} : (vector<1x128x128xf32>, memref<1x128x128xf32>, index, index, index) -> ()
      %c1_i32 = arith.constant 1 : i32
      %85 = arith.cmpi eq, %arg2, %c1_i32 : i32
      scf.if %85 {
        %c0_50 = arith.constant 0 : index
        %c0_51 = arith.constant 0 : index
        %c0_52 = arith.constant 0 : index
        %c0_53 = arith.constant 0 : index
        %86 = vector.shape_cast %83 : vector<128x128xf32> to vector<1x1x128x128xf32>
        "tpu.vector_store"(%86, %arg9, %c0_50, %c0_51, %c0_52, %c0_53) {add = false, operandSegmentSizes = array<i32: 1, 1, 4, 0>, strides = array<i32>} : (vector<1x1x128x128xf32>, memref<1x1x128x128xf32>, index, index, index, index) -> ()
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

