// RUN: %mtc-opt %s -split-input-file -verify-diagnostics

// kernel.reduce: one case per verifier error (the round trip is in ops.mlir).

#id = affine_map<(d0, d1) -> (d0, d1)>
graph.func @last_dim_not_one(%x: tensor<3x64xf32>) -> tensor<3x2xf32> {
  // expected-error @+1 {{'kernel.reduce' op result must have a last dimension of 1, got [3, 2]}}
  %r = kernel.reduce %x : tensor<3x64xf32> epilogue() {epilogue_maps = [], extent = 64 : i64, indexing_maps = [#id], nodes = ["r"]} -> tensor<3x2xf32> body {
  ^bb0(%in0: f32):
    kernel.yield %in0 : f32
  } epilogue {
  ^bb0(%sum: f32):
    kernel.yield %sum : f32
  }
  graph.return %r : tensor<3x2xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
graph.func @maps_count(%x: tensor<3x64xf32>) -> tensor<3x1xf32> {
  // expected-error @+1 {{'kernel.reduce' op has 1 inputs but 2 maps}}
  %r = kernel.reduce %x : tensor<3x64xf32> epilogue() {epilogue_maps = [], extent = 64 : i64, indexing_maps = [#id, #id], nodes = ["r"]} -> tensor<3x1xf32> body {
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
graph.func @extent_mismatch(%x: tensor<3x64xf32>) -> tensor<3x1xf32> {
  // expected-error @+1 {{'kernel.reduce' op input #0: input dim 1 has size 64 but is indexed by d1 of size 32}}
  %r = kernel.reduce %x : tensor<3x64xf32> epilogue() {epilogue_maps = [], extent = 32 : i64, indexing_maps = [#id], nodes = ["r"]} -> tensor<3x1xf32> body {
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
graph.func @body_yields_bf16(%x: tensor<3x64xbf16>) -> tensor<3x1xf32> {
  // expected-error @+1 {{'kernel.reduce' op body yields 'bf16', expected 'f32'}}
  %r = kernel.reduce %x : tensor<3x64xbf16> epilogue() {epilogue_maps = [], extent = 64 : i64, indexing_maps = [#id], nodes = ["r"]} -> tensor<3x1xf32> body {
  ^bb0(%in0: bf16):
    kernel.yield %in0 : bf16
  } epilogue {
  ^bb0(%sum: f32):
    kernel.yield %sum : f32
  }
  graph.return %r : tensor<3x1xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
graph.func @wrong_schedule_kind(%x: tensor<3x64xf32>) -> tensor<3x1xf32> {
  // expected-error @+1 {{'kernel.reduce' op schedule simt w4 r1 kw1 v8 u1 mt1 sk1 is illegal: a row reduction needs a reduce schedule}}
  %r = kernel.reduce %x : tensor<3x64xf32> epilogue() {epilogue_maps = [], extent = 64 : i64, indexing_maps = [#id], nodes = ["r"], schedule = #kernel.schedule<kind = simt, warps = 4, rows = 1, kwarps = 1, vec = 8, unroll = 1, mtile = 1, splitk = 1>} -> tensor<3x1xf32> body {
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
graph.func @reduce_vec_too_wide(%x: tensor<3x64xf32>) -> tensor<3x1xf32> {
  // expected-error @+1 {{'kernel.reduce' op schedule reduce w4 r1 kw1 v16 u1 mt1 sk1 is illegal: vec (elements per lane and load) must be a power of two in [1, 8]}}
  %r = kernel.reduce %x : tensor<3x64xf32> epilogue() {epilogue_maps = [], extent = 64 : i64, indexing_maps = [#id], nodes = ["r"], schedule = #kernel.schedule<kind = reduce, warps = 4, rows = 1, kwarps = 1, vec = 16, unroll = 1, mtile = 1, splitk = 1>} -> tensor<3x1xf32> body {
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
graph.func @reduce_unroll_three(%x: tensor<3x64xf32>) -> tensor<3x1xf32> {
  // expected-error @+1 {{'kernel.reduce' op schedule reduce w4 r1 kw1 v4 u3 mt1 sk1 is illegal: unroll (steps loaded at once) must be a power of two in [1, 16]}}
  %r = kernel.reduce %x : tensor<3x64xf32> epilogue() {epilogue_maps = [], extent = 64 : i64, indexing_maps = [#id], nodes = ["r"], schedule = #kernel.schedule<kind = reduce, warps = 4, rows = 1, kwarps = 1, vec = 4, unroll = 3, mtile = 1, splitk = 1>} -> tensor<3x1xf32> body {
  ^bb0(%in0: f32):
    kernel.yield %in0 : f32
  } epilogue {
  ^bb0(%sum: f32):
    kernel.yield %sum : f32
  }
  graph.return %r : tensor<3x1xf32>
}
