// RUN: %mtc-opt %s --mtc-lower-to-nvvm -split-input-file -verify-diagnostics

// Graph ops that fusion did not turn into kernels cannot be lowered.
graph.func @unfused(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'graph.add' op must be part of a kernel before lowering; run mtc-fuse first}}
  %s = graph.add %a, %b : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  graph.return %s : tensor<4xf32>
}

// -----

// Kernels need a schedule.
#id = affine_map<(d0) -> (d0)>
graph.func @unscheduled(%a: tensor<256xf32>) -> tensor<256xf32> {
  // expected-error @+1 {{'kernel.elementwise' op has no schedule; run mtc-assign-schedules first}}
  %r = kernel.elementwise %a : tensor<256xf32> {indexing_maps = [#id], nodes = ["r"]} -> tensor<256xf32> {
  ^bb0(%in0: f32):
    kernel.yield %in0 : f32
  }
  graph.return %r : tensor<256xf32>
}
