// Raising is linear in the program: every attention of a plain 64-layer model
// (bench/compile_time.py's, 7,610 ops) is raised, the model normalized first as
// flywheel-tpu does. bench/compile_time.py times it against mlir-opt.
// RUN: flywheel-opt %S/../Inputs/model_64_layers.mlir --flywheel-normalize --flywheel-raise-attention | FileCheck %s
// CHECK-COUNT-64: "flywheel.attention"
// CHECK-NOT: "flywheel.attention"
