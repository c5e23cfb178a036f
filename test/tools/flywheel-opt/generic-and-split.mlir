// Output holding unregistered ops (StableHLO) prints in generic form by default, so JAX
// and XLA can read it back; registered-only output prints in custom form unless asked.
// Split chunks are processed alone and joined with the marker.

// RUN: flywheel-opt %s --split-input-file | FileCheck %s
// RUN: flywheel-opt %s --split-input-file --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC

// CHECK: "func.func"() <{function_type = (tensor<4xf32>) -> tensor<4xf32>, sym_name = "stablehlo_chunk"}>
// CHECK: "stablehlo.exponential"(%arg0) : (tensor<4xf32>) -> tensor<4xf32>
// CHECK: // -----
// CHECK: func.func @registered_chunk
// CHECK-NEXT: math.exp
// GENERIC: "func.func"() <{function_type = (tensor<4xf32>) -> tensor<4xf32>, sym_name = "stablehlo_chunk"}>
// GENERIC: "func.func"() <{function_type = (f32) -> f32, sym_name = "registered_chunk"}>
func.func @stablehlo_chunk(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "stablehlo.exponential"(%a) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @registered_chunk(%a: f32) -> f32 {
  %0 = math.exp %a : f32
  return %0 : f32
}
