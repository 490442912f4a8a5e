// RUN: %mtc-opt %s -split-input-file -verify-diagnostics

// kernel.reduce with `apply` (the statistic applied to the rows it was
// reduced from): one case per verifier error; the round trip is in
// ops.mlir, the fusion that forms it in Passes/fuse-reduce.mlir.

#id = affine_map<(d0, d1) -> (d0, d1)>
graph.func @apply_result_not_iteration(%x: tensor<3x64xf32>) -> tensor<3x1xf32> {
  // expected-error @+1 {{'kernel.reduce' op with apply, the result is the iteration space: its last dimension must be the extent 64, got [3, 1]}}
  %r = kernel.reduce %x : tensor<3x64xf32> epilogue() apply_inputs(%x : tensor<3x64xf32>) {apply_maps = [#id], epilogue_maps = [], extent = 64 : i64, indexing_maps = [#id], nodes = ["r"]} -> tensor<3x1xf32> body {
  ^bb0(%in0: f32):
    kernel.yield %in0 : f32
  } epilogue {
  ^bb0(%sum: f32):
    kernel.yield %sum : f32
  } apply {
  ^bb0(%a0: f32, %stat: f32):
    %0 = arith.mulf %a0, %stat : f32
    kernel.yield %0 : f32
  }
  graph.return %r : tensor<3x1xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
graph.func @apply_inputs_without_region(%x: tensor<3x64xf32>) -> tensor<3x1xf32> {
  // expected-error @+1 {{'kernel.reduce' op has apply inputs or maps but no apply region}}
  %r = kernel.reduce %x : tensor<3x64xf32> epilogue() apply_inputs(%x : tensor<3x64xf32>) {apply_maps = [#id], epilogue_maps = [], extent = 64 : i64, indexing_maps = [#id], nodes = ["r"]} -> tensor<3x1xf32> body {
  ^bb0(%in0: f32):
    kernel.yield %in0 : f32
  } epilogue {
  ^bb0(%sum: f32):
    kernel.yield %sum : f32
  }
  graph.return %r : tensor<3x1xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
graph.func @apply_maps_count(%x: tensor<3x64xf32>) -> tensor<3x64xf32> {
  // expected-error @+1 {{'kernel.reduce' op has 1 apply inputs but 2 maps}}
  %r = kernel.reduce %x : tensor<3x64xf32> epilogue() apply_inputs(%x : tensor<3x64xf32>) {apply_maps = [#id, #id], epilogue_maps = [], extent = 64 : i64, indexing_maps = [#id], nodes = ["r"]} -> tensor<3x64xf32> body {
  ^bb0(%in0: f32):
    kernel.yield %in0 : f32
  } epilogue {
  ^bb0(%sum: f32):
    kernel.yield %sum : f32
  } apply {
  ^bb0(%a0: f32, %stat: f32):
    %0 = arith.mulf %a0, %stat : f32
    kernel.yield %0 : f32
  }
  graph.return %r : tensor<3x64xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
graph.func @apply_input_map(%x: tensor<3x64xf32>) -> tensor<3x64xf32> {
  // expected-error @+1 {{'kernel.reduce' op apply input #0: input dim 0 has size 3 but is indexed by d1 of size 64}}
  %r = kernel.reduce %x : tensor<3x64xf32> epilogue() apply_inputs(%x : tensor<3x64xf32>) {apply_maps = [affine_map<(d0, d1) -> (d1, d0)>], epilogue_maps = [], extent = 64 : i64, indexing_maps = [#id], nodes = ["r"]} -> tensor<3x64xf32> body {
  ^bb0(%in0: f32):
    kernel.yield %in0 : f32
  } epilogue {
  ^bb0(%sum: f32):
    kernel.yield %sum : f32
  } apply {
  ^bb0(%a0: f32, %stat: f32):
    %0 = arith.mulf %a0, %stat : f32
    kernel.yield %0 : f32
  }
  graph.return %r : tensor<3x64xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
graph.func @apply_arguments(%x: tensor<3x64xf32>) -> tensor<3x64xf32> {
  // expected-error @+1 {{'kernel.reduce' op apply must take 2 arguments (the apply inputs' elements, then the statistic), got 1}}
  %r = kernel.reduce %x : tensor<3x64xf32> epilogue() apply_inputs(%x : tensor<3x64xf32>) {apply_maps = [#id], epilogue_maps = [], extent = 64 : i64, indexing_maps = [#id], nodes = ["r"]} -> tensor<3x64xf32> body {
  ^bb0(%in0: f32):
    kernel.yield %in0 : f32
  } epilogue {
  ^bb0(%sum: f32):
    kernel.yield %sum : f32
  } apply {
  ^bb0(%a0: f32):
    kernel.yield %a0 : f32
  }
  graph.return %r : tensor<3x64xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
graph.func @apply_statistic_type(%x: tensor<3x64xf32>) -> tensor<3x64xf32> {
  // expected-error @+1 {{'kernel.reduce' op epilogue yields 'f32', expected 'bf16'}}
  %r = kernel.reduce %x : tensor<3x64xf32> epilogue() apply_inputs(%x : tensor<3x64xf32>) {apply_maps = [#id], epilogue_maps = [], extent = 64 : i64, indexing_maps = [#id], nodes = ["r"]} -> tensor<3x64xf32> body {
  ^bb0(%in0: f32):
    kernel.yield %in0 : f32
  } epilogue {
  ^bb0(%sum: f32):
    kernel.yield %sum : f32
  } apply {
  ^bb0(%a0: f32, %stat: bf16):
    %0 = arith.extf %stat : bf16 to f32
    %1 = arith.mulf %a0, %0 : f32
    kernel.yield %1 : f32
  }
  graph.return %r : tensor<3x64xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
graph.func @apply_yield_type(%x: tensor<3x64xf32>) -> tensor<3x64xbf16> {
  // expected-error @+1 {{'kernel.reduce' op apply yields 'f32', expected 'bf16'}}
  %r = kernel.reduce %x : tensor<3x64xf32> epilogue() apply_inputs(%x : tensor<3x64xf32>) {apply_maps = [#id], epilogue_maps = [], extent = 64 : i64, indexing_maps = [#id], nodes = ["r"]} -> tensor<3x64xbf16> body {
  ^bb0(%in0: f32):
    kernel.yield %in0 : f32
  } epilogue {
  ^bb0(%sum: f32):
    kernel.yield %sum : f32
  } apply {
  ^bb0(%a0: f32, %stat: f32):
    %0 = arith.mulf %a0, %stat : f32
    kernel.yield %0 : f32
  }
  graph.return %r : tensor<3x64xbf16>
}
