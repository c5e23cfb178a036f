// Tile IR of the f32 MHA fixture (attention_mha_f32, 128 tokens) raised: blocks of 48 x 96, the queries padded to 144 and the keys to 192. Made by: flywheel-opt test/fixtures/attention_mha_f32.mlir --pass-pipeline='builtin.module(flywheel-raise-attention,flywheel-tile{block-q=48 block-kv=96})' | mlir-opt-22 --allow-unregistered-dialect
module @jit_einsum_attention attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<2x128x4x64xf32>, %arg1: tensor<2x128x4x64xf32>, %arg2: tensor<2x128x4x64xf32>) -> (tensor<2x128x4x64xf32> {jax.result_info = "result"}) {
    %0 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %1 = "stablehlo.pad"(%arg0, %0) <{edge_padding_high = array<i64: 0, 16, 0, 0>, edge_padding_low = array<i64: 0, 0, 0, 0>, interior_padding = array<i64: 0, 0, 0, 0>}> : (tensor<2x128x4x64xf32>, tensor<f32>) -> tensor<2x144x4x64xf32>
    %2 = "stablehlo.transpose"(%1) <{permutation = array<i64: 0, 2, 1, 3>}> : (tensor<2x144x4x64xf32>) -> tensor<2x4x144x64xf32>
    %3 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %4 = "stablehlo.pad"(%arg1, %3) <{edge_padding_high = array<i64: 0, 64, 0, 0>, edge_padding_low = array<i64: 0, 0, 0, 0>, interior_padding = array<i64: 0, 0, 0, 0>}> : (tensor<2x128x4x64xf32>, tensor<f32>) -> tensor<2x192x4x64xf32>
    %5 = "stablehlo.transpose"(%4) <{permutation = array<i64: 0, 2, 1, 3>}> : (tensor<2x192x4x64xf32>) -> tensor<2x4x192x64xf32>
    %6 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %7 = "stablehlo.pad"(%arg2, %6) <{edge_padding_high = array<i64: 0, 64, 0, 0>, edge_padding_low = array<i64: 0, 0, 0, 0>, interior_padding = array<i64: 0, 0, 0, 0>}> : (tensor<2x128x4x64xf32>, tensor<f32>) -> tensor<2x192x4x64xf32>
    %8 = "stablehlo.transpose"(%7) <{permutation = array<i64: 0, 2, 1, 3>}> : (tensor<2x192x4x64xf32>) -> tensor<2x4x192x64xf32>
    %9 = "flywheel.attention_kernel"(%2, %5, %8) {bytes_accessed = 1376256 : i64, flops = 56623104 : i64, kernel = @flywheel_kernel_0, operandSegmentSizes = array<i32: 1, 1, 1, 0, 0>, transcendentals = 223488 : i64} : (tensor<2x4x144x64xf32>, tensor<2x4x192x64xf32>, tensor<2x4x192x64xf32>) -> tensor<2x4x144x64xf32>
    %10 = "stablehlo.transpose"(%9) <{permutation = array<i64: 0, 2, 1, 3>}> : (tensor<2x4x144x64xf32>) -> tensor<2x144x4x64xf32>
    %11 = "stablehlo.slice"(%10) <{limit_indices = array<i64: 2, 128, 4, 64>, start_indices = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1, 1, 1>}> : (tensor<2x144x4x64xf32>) -> tensor<2x128x4x64xf32>
    return %11 : tensor<2x128x4x64xf32>
  }
  module @flywheel_kernel_0 attributes {stable_mosaic.version = 15 : i64} {
    func.func @kernel(%arg0: i32, %arg1: i32, %arg2: i32, %arg3: i32, %arg4: memref<1x1x48x64xf32>, %arg5: memref<1x1x96x64xf32>, %arg6: memref<1x1x96x64xf32>, %arg7: memref<1x1x48x64xf32>, %arg8: memref<48x1xf32>, %arg9: memref<48x1xf32>, %arg10: memref<48x64xf32>) attributes {dimension_semantics = [#tpu.dimension_semantics<parallel>, #tpu.dimension_semantics<parallel>, #tpu.dimension_semantics<parallel>, #tpu.dimension_semantics<arbitrary>], iteration_bounds = array<i64: 2, 4, 3, 2>, scalar_prefetch = 0 : i64, scratch_operands = 3 : i64, tpu.core_type = #tpu.core_type<tc>, window_params = [{transform_indices = @q_blocks, window_bounds = array<i64: 1, 1, 48, 64>}, {transform_indices = @kv_blocks, window_bounds = array<i64: 1, 1, 96, 64>}, {transform_indices = @kv_blocks, window_bounds = array<i64: 1, 1, 96, 64>}, {transform_indices = @q_blocks, window_bounds = array<i64: 1, 1, 48, 64>}]} {
      %c0 = arith.constant 0 : index
      %c0_i32 = arith.constant 0 : i32
      %0 = arith.cmpi eq, %arg3, %c0_i32 : i32
      scf.if %0 {
        %cst = arith.constant dense<0xFF800000> : vector<48x1xf32>
        "tpu.vector_store"(%cst, %arg8, %c0, %c0) {add = false, operandSegmentSizes = array<i32: 1, 1, 2, 0>, strides = array<i32>} : (vector<48x1xf32>, memref<48x1xf32>, index, index) -> ()
        %cst_0 = arith.constant dense<0.000000e+00> : vector<48x1xf32>
        "tpu.vector_store"(%cst_0, %arg9, %c0, %c0) {add = false, operandSegmentSizes = array<i32: 1, 1, 2, 0>, strides = array<i32>} : (vector<48x1xf32>, memref<48x1xf32>, index, index) -> ()
        %cst_1 = arith.constant dense<0.000000e+00> : vector<48x64xf32>
        "tpu.vector_store"(%cst_1, %arg10, %c0, %c0) {add = false, operandSegmentSizes = array<i32: 1, 1, 2, 0>, strides = array<i32>} : (vector<48x64xf32>, memref<48x64xf32>, index, index) -> ()
      }
      %c96_i32 = arith.constant 96 : i32
      %c48_i32 = arith.constant 48 : i32
      %1 = arith.muli %arg3, %c96_i32 : i32
      %c95_i32 = arith.constant 95 : i32
      %2 = arith.addi %1, %c95_i32 : i32
      %3 = arith.muli %arg2, %c48_i32 : i32
      %c47_i32 = arith.constant 47 : i32
      %4 = arith.addi %3, %c47_i32 : i32
      %c127_i32 = arith.constant 127 : i32
      %5 = arith.cmpi sgt, %2, %c127_i32 : i32
      scf.if %5 {
        %8 = vector.load %arg4[%c0, %c0, %c0, %c0] : memref<1x1x48x64xf32>, vector<1x1x48x64xf32>
        %9 = vector.shape_cast %8 : vector<1x1x48x64xf32> to vector<48x64xf32>
        %10 = vector.load %arg8[%c0, %c0] : memref<48x1xf32>, vector<48x1xf32>
        %11 = vector.load %arg9[%c0, %c0] : memref<48x1xf32>, vector<48x1xf32>
        %12 = vector.load %arg10[%c0, %c0] : memref<48x64xf32>, vector<48x64xf32>
        %c0_0 = arith.constant 0 : index
        %c0_1 = arith.constant 0 : index
        %c0_2 = arith.constant 0 : index
        %c0_3 = arith.constant 0 : index
        %13 = vector.load %arg5[%c0_0, %c0_1, %c0_2, %c0_3] : memref<1x1x96x64xf32>, vector<1x1x96x64xf32>
        %14 = vector.shape_cast %13 : vector<1x1x96x64xf32> to vector<96x64xf32>
        %cst = arith.constant dense<0.000000e+00> : vector<48x96xf32>
        %15 = "flywheel.matmul"(%9, %14, %cst) {transpose_rhs = true} : (vector<48x64xf32>, vector<96x64xf32>, vector<48x96xf32>) -> vector<48x96xf32>
        %cst_4 = arith.constant dense<1.250000e-01> : vector<48x96xf32>
        %16 = arith.mulf %15, %cst_4 : vector<48x96xf32>
        %17 = "tpu.iota"() {dimensions = array<i32: 0>} : () -> vector<48x96xi32>
        %18 = vector.broadcast %3 : i32 to vector<48x96xi32>
        %19 = arith.addi %17, %18 : vector<48x96xi32>
        %20 = "tpu.iota"() {dimensions = array<i32: 1>} : () -> vector<48x96xi32>
        %21 = vector.broadcast %1 : i32 to vector<48x96xi32>
        %22 = arith.addi %20, %21 : vector<48x96xi32>
        %cst_5 = arith.constant dense<127> : vector<48x96xi32>
        %23 = arith.cmpi sle, %22, %cst_5 : vector<48x96xi32>
        %cst_6 = arith.constant dense<-3.23268224E+38> : vector<48x96xf32>
        %24 = arith.select %23, %16, %cst_6 : vector<48x96xi1>, vector<48x96xf32>
        %cst_7 = arith.constant dense<0xFF800000> : vector<48xf32>
        %25 = vector.multi_reduction <maximumf>, %24, %cst_7 [1] : vector<48x96xf32> to vector<48xf32>
        %26 = vector.shape_cast %25 : vector<48xf32> to vector<48x1xf32>
        %27 = arith.maximumf %10, %26 : vector<48x1xf32>
        %28 = vector.broadcast %27 : vector<48x1xf32> to vector<48x96xf32>
        %29 = arith.subf %24, %28 : vector<48x96xf32>
        %30 = math.exp %29 : vector<48x96xf32>
        %31 = arith.subf %10, %27 : vector<48x1xf32>
        %32 = math.exp %31 : vector<48x1xf32>
        %33 = arith.mulf %32, %11 : vector<48x1xf32>
        %cst_8 = arith.constant dense<0.000000e+00> : vector<48xf32>
        %34 = vector.multi_reduction <add>, %30, %cst_8 [1] : vector<48x96xf32> to vector<48xf32>
        %35 = vector.shape_cast %34 : vector<48xf32> to vector<48x1xf32>
        %36 = arith.addf %33, %35 : vector<48x1xf32>
        %37 = vector.broadcast %32 : vector<48x1xf32> to vector<48x64xf32>
        %38 = arith.mulf %37, %12 : vector<48x64xf32>
        %c0_9 = arith.constant 0 : index
        %c0_10 = arith.constant 0 : index
        %c0_11 = arith.constant 0 : index
        %c0_12 = arith.constant 0 : index
        %39 = vector.load %arg6[%c0_9, %c0_10, %c0_11, %c0_12] : memref<1x1x96x64xf32>, vector<1x1x96x64xf32>
        %40 = vector.shape_cast %39 : vector<1x1x96x64xf32> to vector<96x64xf32>
        %cst_13 = arith.constant dense<0.000000e+00> : vector<48x64xf32>
        %41 = "flywheel.matmul"(%30, %40, %cst_13) {transpose_rhs = false} : (vector<48x96xf32>, vector<96x64xf32>, vector<48x64xf32>) -> vector<48x64xf32>
        %42 = arith.addf %38, %41 : vector<48x64xf32>
        "tpu.vector_store"(%36, %arg9, %c0, %c0) {add = false, operandSegmentSizes = array<i32: 1, 1, 2, 0>, strides = array<i32>} : (vector<48x1xf32>, memref<48x1xf32>, index, index) -> ()
        "tpu.vector_store"(%42, %arg10, %c0, %c0) {add = false, operandSegmentSizes = array<i32: 1, 1, 2, 0>, strides = array<i32>} : (vector<48x64xf32>, memref<48x64xf32>, index, index) -> ()
        "tpu.vector_store"(%27, %arg8, %c0, %c0) {add = false, operandSegmentSizes = array<i32: 1, 1, 2, 0>, strides = array<i32>} : (vector<48x1xf32>, memref<48x1xf32>, index, index) -> ()
      }
      %true = arith.constant true
      %6 = arith.xori %5, %true : i1
      scf.if %6 {
        %8 = vector.load %arg4[%c0, %c0, %c0, %c0] : memref<1x1x48x64xf32>, vector<1x1x48x64xf32>
        %9 = vector.shape_cast %8 : vector<1x1x48x64xf32> to vector<48x64xf32>
        %10 = vector.load %arg8[%c0, %c0] : memref<48x1xf32>, vector<48x1xf32>
        %11 = vector.load %arg9[%c0, %c0] : memref<48x1xf32>, vector<48x1xf32>
        %12 = vector.load %arg10[%c0, %c0] : memref<48x64xf32>, vector<48x64xf32>
        %c0_0 = arith.constant 0 : index
        %c0_1 = arith.constant 0 : index
        %c0_2 = arith.constant 0 : index
        %c0_3 = arith.constant 0 : index
        %13 = vector.load %arg5[%c0_0, %c0_1, %c0_2, %c0_3] : memref<1x1x96x64xf32>, vector<1x1x96x64xf32>
        %14 = vector.shape_cast %13 : vector<1x1x96x64xf32> to vector<96x64xf32>
        %cst = arith.constant dense<0.000000e+00> : vector<48x96xf32>
        %15 = "flywheel.matmul"(%9, %14, %cst) {transpose_rhs = true} : (vector<48x64xf32>, vector<96x64xf32>, vector<48x96xf32>) -> vector<48x96xf32>
        %cst_4 = arith.constant dense<1.250000e-01> : vector<48x96xf32>
        %16 = arith.mulf %15, %cst_4 : vector<48x96xf32>
        %cst_5 = arith.constant dense<0xFF800000> : vector<48xf32>
        %17 = vector.multi_reduction <maximumf>, %16, %cst_5 [1] : vector<48x96xf32> to vector<48xf32>
        %18 = vector.shape_cast %17 : vector<48xf32> to vector<48x1xf32>
        %19 = arith.maximumf %10, %18 : vector<48x1xf32>
        %20 = vector.broadcast %19 : vector<48x1xf32> to vector<48x96xf32>
        %21 = arith.subf %16, %20 : vector<48x96xf32>
        %22 = math.exp %21 : vector<48x96xf32>
        %23 = arith.subf %10, %19 : vector<48x1xf32>
        %24 = math.exp %23 : vector<48x1xf32>
        %25 = arith.mulf %24, %11 : vector<48x1xf32>
        %cst_6 = arith.constant dense<0.000000e+00> : vector<48xf32>
        %26 = vector.multi_reduction <add>, %22, %cst_6 [1] : vector<48x96xf32> to vector<48xf32>
        %27 = vector.shape_cast %26 : vector<48xf32> to vector<48x1xf32>
        %28 = arith.addf %25, %27 : vector<48x1xf32>
        %29 = vector.broadcast %24 : vector<48x1xf32> to vector<48x64xf32>
        %30 = arith.mulf %29, %12 : vector<48x64xf32>
        %c0_7 = arith.constant 0 : index
        %c0_8 = arith.constant 0 : index
        %c0_9 = arith.constant 0 : index
        %c0_10 = arith.constant 0 : index
        %31 = vector.load %arg6[%c0_7, %c0_8, %c0_9, %c0_10] : memref<1x1x96x64xf32>, vector<1x1x96x64xf32>
        %32 = vector.shape_cast %31 : vector<1x1x96x64xf32> to vector<96x64xf32>
        %cst_11 = arith.constant dense<0.000000e+00> : vector<48x64xf32>
        %33 = "flywheel.matmul"(%22, %32, %cst_11) {transpose_rhs = false} : (vector<48x96xf32>, vector<96x64xf32>, vector<48x64xf32>) -> vector<48x64xf32>
        %34 = arith.addf %30, %33 : vector<48x64xf32>
        "tpu.vector_store"(%28, %arg9, %c0, %c0) {add = false, operandSegmentSizes = array<i32: 1, 1, 2, 0>, strides = array<i32>} : (vector<48x1xf32>, memref<48x1xf32>, index, index) -> ()
        "tpu.vector_store"(%34, %arg10, %c0, %c0) {add = false, operandSegmentSizes = array<i32: 1, 1, 2, 0>, strides = array<i32>} : (vector<48x64xf32>, memref<48x64xf32>, index, index) -> ()
        "tpu.vector_store"(%19, %arg8, %c0, %c0) {add = false, operandSegmentSizes = array<i32: 1, 1, 2, 0>, strides = array<i32>} : (vector<48x1xf32>, memref<48x1xf32>, index, index) -> ()
      }
      %c1_i32 = arith.constant 1 : i32
      %7 = arith.cmpi eq, %arg3, %c1_i32 : i32
      scf.if %7 {
        %8 = vector.load %arg10[%c0, %c0] : memref<48x64xf32>, vector<48x64xf32>
        %9 = vector.load %arg9[%c0, %c0] : memref<48x1xf32>, vector<48x1xf32>
        %10 = vector.broadcast %9 : vector<48x1xf32> to vector<48x64xf32>
        %11 = arith.divf %8, %10 : vector<48x64xf32>
        %12 = vector.shape_cast %11 : vector<48x64xf32> to vector<1x1x48x64xf32>
        "tpu.vector_store"(%12, %arg7, %c0, %c0, %c0, %c0) {add = false, operandSegmentSizes = array<i32: 1, 1, 4, 0>, strides = array<i32>} : (vector<1x1x48x64xf32>, memref<1x1x48x64xf32>, index, index, index, index) -> ()
      }
      return
    }
    func.func @q_blocks(%arg0: i32, %arg1: i32, %arg2: i32, %arg3: i32) -> (i32, i32, i32, i32) {
      %c0_i32 = arith.constant 0 : i32
      return %arg0, %arg1, %arg2, %c0_i32 : i32, i32, i32, i32
    }
    func.func @kv_blocks(%arg0: i32, %arg1: i32, %arg2: i32, %arg3: i32) -> (i32, i32, i32, i32) {
      %c0_i32 = arith.constant 0 : i32
      %c48_i32 = arith.constant 48 : i32
      %c96_i32 = arith.constant 96 : i32
      %0 = arith.addi %arg3, %c0_i32 : i32
      return %arg0, %arg1, %0, %c0_i32 : i32, i32, i32, i32
    }
  }
}

