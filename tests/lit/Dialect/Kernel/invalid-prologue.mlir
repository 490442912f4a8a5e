// RUN: %mtc-opt %s -split-input-file -verify-diagnostics

// kernel.contract with a_inputs (an activation prologue): one case per
// verifier error (the round trip is in ops.mlir).

#pid = affine_map<(d0, d1) -> (d0, d1)>
#pcol = affine_map<(d0, d1) -> (d1)>
#prow = affine_map<(d0, d1) -> (d0, 0)>
graph.func @maps_count(%x: tensor<2x64xbf16>, %w: tensor<32x64xi8>, %g: tensor<64xbf16>, %r: tensor<2x1xf32>) -> tensor<2x32xbf16> {
  // expected-error @+1 {{'kernel.contract' op has 2 a inputs but 1 a maps}}
  %y = kernel.contract %x, %w a_inputs(%g, %r : tensor<64xbf16>, tensor<2x1xf32>) {a_maps = [#pcol], epilogue_maps = [], nodes = ["y"], schedule = #kernel.schedule<kind = simt, warps = 4, rows = 1, kwarps = 1, vec = 16, unroll = 1, mtile = 2, splitk = 1>} : tensor<2x64xbf16>, tensor<32x64xi8> -> tensor<2x32xbf16> body {
  ^bb0(%a: bf16, %b: i8, %x0: bf16, %x1: f32):
    %0 = arith.extf %a : bf16 to f32
    %1 = arith.mulf %0, %x1 : f32
    %2 = arith.truncf %1 : f32 to bf16
    %3 = arith.extf %2 : bf16 to f32
    %4 = arith.sitofp %b : i8 to f32
    %5 = arith.mulf %3, %4 : f32
    kernel.yield %5 : f32
  } epilogue {
  ^bb0(%acc: f32):
    %0 = arith.truncf %acc : f32 to bf16
    kernel.yield %0 : bf16
  }
  graph.return %y : tensor<2x32xbf16>
}

// -----

#pid = affine_map<(d0, d1) -> (d0, d1)>
#pcol = affine_map<(d0, d1) -> (d1)>
#prow = affine_map<(d0, d1) -> (d0, 0)>
graph.func @weight_kn(%x: tensor<2x64xbf16>, %w: tensor<64x32xi8>, %g: tensor<64xbf16>, %r: tensor<2x1xf32>) -> tensor<2x32xbf16> {
  // expected-error @+1 {{'kernel.contract' op a inputs need a 2-D operand a [M, K] and a weight stored [N, K] (neither transposed)}}
  %y = kernel.contract %x, %w a_inputs(%g, %r : tensor<64xbf16>, tensor<2x1xf32>) {b_transposed, a_maps = [#pcol, #prow], epilogue_maps = [], nodes = ["y"], schedule = #kernel.schedule<kind = simt, warps = 4, rows = 1, kwarps = 1, vec = 16, unroll = 1, mtile = 2, splitk = 1>} : tensor<2x64xbf16>, tensor<64x32xi8> -> tensor<2x32xbf16> body {
  ^bb0(%a: bf16, %b: i8, %x0: bf16, %x1: f32):
    %0 = arith.extf %a : bf16 to f32
    %1 = arith.mulf %0, %x1 : f32
    %2 = arith.truncf %1 : f32 to bf16
    %3 = arith.extf %2 : bf16 to f32
    %4 = arith.sitofp %b : i8 to f32
    %5 = arith.mulf %3, %4 : f32
    kernel.yield %5 : f32
  } epilogue {
  ^bb0(%acc: f32):
    %0 = arith.truncf %acc : f32 to bf16
    kernel.yield %0 : bf16
  }
  graph.return %y : tensor<2x32xbf16>
}

// -----

#pid = affine_map<(d0, d1) -> (d0, d1)>
#pcol = affine_map<(d0, d1) -> (d1)>
#prow = affine_map<(d0, d1) -> (d0, 0)>
graph.func @reads_b(%x: tensor<2x64xbf16>, %w: tensor<32x64xi8>, %g: tensor<64xbf16>, %r: tensor<2x1xf32>) -> tensor<2x32xbf16> {
  // expected-error @+1 {{'kernel.contract' op body's activation side must compute a value of a's element type from %a, the a inputs and the row statistic only, then convert it to f32 by a chain of arith conversions}}
  %y = kernel.contract %x, %w a_inputs(%g, %r : tensor<64xbf16>, tensor<2x1xf32>) {a_maps = [#pcol, #prow], epilogue_maps = [], nodes = ["y"], schedule = #kernel.schedule<kind = simt, warps = 4, rows = 1, kwarps = 1, vec = 16, unroll = 1, mtile = 2, splitk = 1>} : tensor<2x64xbf16>, tensor<32x64xi8> -> tensor<2x32xbf16> body {
  ^bb0(%a: bf16, %b: i8, %x0: bf16, %x1: f32):
    %0 = arith.extf %a : bf16 to f32
    %bb = arith.sitofp %b : i8 to f32
    %1 = arith.mulf %0, %bb : f32
    %2 = arith.truncf %1 : f32 to bf16
    %3 = arith.extf %2 : bf16 to f32
    %4 = arith.sitofp %b : i8 to f32
    %5 = arith.mulf %3, %4 : f32
    kernel.yield %5 : f32
  } epilogue {
  ^bb0(%acc: f32):
    %0 = arith.truncf %acc : f32 to bf16
    kernel.yield %0 : bf16
  }
  graph.return %y : tensor<2x32xbf16>
}

// -----

#pid = affine_map<(d0, d1) -> (d0, d1)>
#pcol = affine_map<(d0, d1) -> (d1)>
#prow = affine_map<(d0, d1) -> (d0, 0)>
graph.func @ignores_a(%x: tensor<2x64xbf16>, %w: tensor<32x64xi8>, %g: tensor<64xbf16>, %r: tensor<2x1xf32>) -> tensor<2x32xbf16> {
  // expected-error @+1 {{'kernel.contract' op body's activation side must read %a}}
  %y = kernel.contract %x, %w a_inputs(%g, %r : tensor<64xbf16>, tensor<2x1xf32>) {a_maps = [#pcol, #prow], epilogue_maps = [], nodes = ["y"], schedule = #kernel.schedule<kind = simt, warps = 4, rows = 1, kwarps = 1, vec = 16, unroll = 1, mtile = 2, splitk = 1>} : tensor<2x64xbf16>, tensor<32x64xi8> -> tensor<2x32xbf16> body {
  ^bb0(%a: bf16, %b: i8, %x0: bf16, %x1: f32):
    %0 = arith.extf %a : bf16 to f32
    %1 = arith.extf %x0 : bf16 to f32
    %2 = arith.truncf %1 : f32 to bf16
    %3 = arith.extf %2 : bf16 to f32
    %4 = arith.sitofp %b : i8 to f32
    %5 = arith.mulf %3, %4 : f32
    kernel.yield %5 : f32
  } epilogue {
  ^bb0(%acc: f32):
    %0 = arith.truncf %acc : f32 to bf16
    kernel.yield %0 : bf16
  }
  graph.return %y : tensor<2x32xbf16>
}

// -----

#pid = affine_map<(d0, d1) -> (d0, d1)>
#pcol = affine_map<(d0, d1) -> (d1)>
#prow = affine_map<(d0, d1) -> (d0, 0)>
graph.func @tiled(%x: tensor<2x64xbf16>, %w: tensor<32x64xi8>, %g: tensor<64xbf16>, %r: tensor<2x1xf32>) -> tensor<2x32xbf16> {
  // expected-error @+1 {{'kernel.contract' op schedule tiled w4 r1 kw1 v32 u1 mt16 sk1 st4 is illegal: a contraction with an activation prologue (a_inputs) runs on the simt or mma kind: the tiled kind stages A in shared memory, where the prologue has no place}}
  %y = kernel.contract %x, %w a_inputs(%g, %r : tensor<64xbf16>, tensor<2x1xf32>) {a_maps = [#pcol, #prow], epilogue_maps = [], nodes = ["y"], schedule = #kernel.schedule<kind = tiled, warps = 4, rows = 1, kwarps = 1, vec = 32, unroll = 1, mtile = 16, splitk = 1, stages = 4>} : tensor<2x64xbf16>, tensor<32x64xi8> -> tensor<2x32xbf16> body {
  ^bb0(%a: bf16, %b: i8, %x0: bf16, %x1: f32):
    %0 = arith.extf %a : bf16 to f32
    %1 = arith.mulf %0, %x1 : f32
    %2 = arith.truncf %1 : f32 to bf16
    %3 = arith.extf %2 : bf16 to f32
    %4 = arith.sitofp %b : i8 to f32
    %5 = arith.mulf %3, %4 : f32
    kernel.yield %5 : f32
  } epilogue {
  ^bb0(%acc: f32):
    %0 = arith.truncf %acc : f32 to bf16
    kernel.yield %0 : bf16
  }
  graph.return %y : tensor<2x32xbf16>
}
