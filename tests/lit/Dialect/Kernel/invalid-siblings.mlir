// RUN: %mtc-opt %s -split-input-file -verify-diagnostics

// kernel.contract with siblings (horizontal fusion: more weights read with
// the same activations, one sum each into the epilogue): one case per
// verifier error (the round trip is in ops.mlir).

// A sibling of another shape than B.
graph.func @sibling_type(%x: tensor<2x64xbf16>, %w: tensor<32x64xi8>, %v: tensor<16x64xi8>) -> tensor<2x32xbf16> {
  // expected-error @+1 {{'kernel.contract' op sibling #0 must have operand b's type 'tensor<32x64xi8>', got 'tensor<16x64xi8>'}}
  %y = kernel.contract %x, %w siblings(%v : tensor<16x64xi8>) {epilogue_maps = [], nodes = ["y"], schedule = #kernel.schedule<kind = simt, warps = 4, rows = 1, kwarps = 1, vec = 16, unroll = 1, mtile = 2, splitk = 1>} : tensor<2x64xbf16>, tensor<32x64xi8> -> tensor<2x32xbf16> body {
  ^bb0(%a: bf16, %b: i8):
    %0 = arith.extf %a : bf16 to f32
    %1 = arith.sitofp %b : i8 to f32
    %2 = arith.mulf %0, %1 : f32
    kernel.yield %2 : f32
  } epilogue {
  ^bb0(%acc0: f32, %acc1: f32):
    %0 = arith.mulf %acc0, %acc1 : f32
    %1 = arith.truncf %0 : f32 to bf16
    kernel.yield %1 : bf16
  }
  graph.return %y : tensor<2x32xbf16>
}

// -----

// Siblings of a weight stored [K, N].
graph.func @sibling_kn(%x: tensor<2x64xbf16>, %w: tensor<64x32xi8>, %v: tensor<64x32xi8>) -> tensor<2x32xbf16> {
  // expected-error @+1 {{'kernel.contract' op siblings need a weight stored [N, K]}}
  %y = kernel.contract %x, %w siblings(%v : tensor<64x32xi8>) {b_transposed, epilogue_maps = [], nodes = ["y"], schedule = #kernel.schedule<kind = simt, warps = 4, rows = 1, kwarps = 1, vec = 16, unroll = 1, mtile = 2, splitk = 1>} : tensor<2x64xbf16>, tensor<64x32xi8> -> tensor<2x32xbf16> body {
  ^bb0(%a: bf16, %b: i8):
    %0 = arith.extf %a : bf16 to f32
    %1 = arith.sitofp %b : i8 to f32
    %2 = arith.mulf %0, %1 : f32
    kernel.yield %2 : f32
  } epilogue {
  ^bb0(%acc0: f32, %acc1: f32):
    %0 = arith.mulf %acc0, %acc1 : f32
    %1 = arith.truncf %0 : f32 to bf16
    kernel.yield %1 : bf16
  }
  graph.return %y : tensor<2x32xbf16>
}

// -----

// An epilogue that takes one sum where there are two weights.
graph.func @sibling_sums(%x: tensor<2x64xbf16>, %w: tensor<32x64xi8>, %v: tensor<32x64xi8>) -> tensor<2x32xbf16> {
  // expected-error @+1 {{'kernel.contract' op epilogue takes 1 argument, expected 2}}
  %y = kernel.contract %x, %w siblings(%v : tensor<32x64xi8>) {epilogue_maps = [], nodes = ["y"], schedule = #kernel.schedule<kind = simt, warps = 4, rows = 1, kwarps = 1, vec = 16, unroll = 1, mtile = 2, splitk = 1>} : tensor<2x64xbf16>, tensor<32x64xi8> -> tensor<2x32xbf16> body {
  ^bb0(%a: bf16, %b: i8):
    %0 = arith.extf %a : bf16 to f32
    %1 = arith.sitofp %b : i8 to f32
    %2 = arith.mulf %0, %1 : f32
    kernel.yield %2 : f32
  } epilogue {
  ^bb0(%acc: f32):
    %0 = arith.truncf %acc : f32 to bf16
    kernel.yield %0 : bf16
  }
  graph.return %y : tensor<2x32xbf16>
}

// -----

// Siblings on a kind that stages one weight in shared memory.
graph.func @sibling_tiled(%x: tensor<2x64xbf16>, %w: tensor<32x64xi8>, %v: tensor<32x64xi8>) -> tensor<2x32xbf16> {
  // expected-error @+1 {{a contraction over several weights (siblings) runs on the simt or mma kind: the tiled kind stages one weight's tiles in shared memory}}
  %y = kernel.contract %x, %w siblings(%v : tensor<32x64xi8>) {epilogue_maps = [], nodes = ["y"], schedule = #kernel.schedule<kind = tiled, warps = 4, rows = 1, kwarps = 1, vec = 32, unroll = 1, mtile = 16, splitk = 1, stages = 4>} : tensor<2x64xbf16>, tensor<32x64xi8> -> tensor<2x32xbf16> body {
  ^bb0(%a: bf16, %b: i8):
    %0 = arith.extf %a : bf16 to f32
    %1 = arith.sitofp %b : i8 to f32
    %2 = arith.mulf %0, %1 : f32
    kernel.yield %2 : f32
  } epilogue {
  ^bb0(%acc0: f32, %acc1: f32):
    %0 = arith.mulf %acc0, %acc1 : f32
    %1 = arith.truncf %0 : f32 to bf16
    kernel.yield %1 : bf16
  }
  graph.return %y : tensor<2x32xbf16>
}

// -----

// Siblings with blocks splitting K.
graph.func @sibling_splitk(%x: tensor<2x64xbf16>, %w: tensor<32x64xi8>, %v: tensor<32x64xi8>) -> tensor<2x32xbf16> {
  // expected-error @+1 {{a contraction over several weights (siblings) keeps its sums in registers: splitk must be 1}}
  %y = kernel.contract %x, %w siblings(%v : tensor<32x64xi8>) {epilogue_maps = [], nodes = ["y"], schedule = #kernel.schedule<kind = simt, warps = 4, rows = 1, kwarps = 1, vec = 16, unroll = 1, mtile = 2, splitk = 2>} : tensor<2x64xbf16>, tensor<32x64xi8> -> tensor<2x32xbf16> body {
  ^bb0(%a: bf16, %b: i8):
    %0 = arith.extf %a : bf16 to f32
    %1 = arith.sitofp %b : i8 to f32
    %2 = arith.mulf %0, %1 : f32
    kernel.yield %2 : f32
  } epilogue {
  ^bb0(%acc0: f32, %acc1: f32):
    %0 = arith.mulf %acc0, %acc1 : f32
    %1 = arith.truncf %0 : f32 to bf16
    kernel.yield %1 : bf16
  }
  graph.return %y : tensor<2x32xbf16>
}

// -----

// A sibling of a weight with b inputs, without its own.
#grp = affine_map<(d0, d1) -> (d0, d1 floordiv 128)>
graph.func @sibling_b_inputs_count(%x: tensor<2x256xbf16>, %w: tensor<32x256xi4>, %s: tensor<32x2xbf16>, %v: tensor<32x256xi4>) -> tensor<2x32xbf16> {
  // expected-error @+1 {{'kernel.contract' op has 1 siblings and 1 b inputs, so needs 1 sibling_b_inputs, got 0}}
  %y = kernel.contract %x, %w b_inputs(%s : tensor<32x2xbf16>) siblings(%v : tensor<32x256xi4>) {b_maps = [#grp], epilogue_maps = [], nodes = ["y"]} : tensor<2x256xbf16>, tensor<32x256xi4> -> tensor<2x32xbf16> body {
  ^bb0(%a: bf16, %b: i4, %w0: bf16):
    %0 = arith.extf %a : bf16 to f32
    %1 = arith.sitofp %b : i4 to bf16
    %2 = arith.mulf %1, %w0 : bf16
    %3 = arith.extf %2 : bf16 to f32
    %4 = arith.mulf %0, %3 : f32
    kernel.yield %4 : f32
  } epilogue {
  ^bb0(%acc0: f32, %acc1: f32):
    %0 = arith.mulf %acc0, %acc1 : f32
    %1 = arith.truncf %0 : f32 to bf16
    kernel.yield %1 : bf16
  }
  graph.return %y : tensor<2x32xbf16>
}

// -----

// A sibling's b input of another type than B's.
#grp = affine_map<(d0, d1) -> (d0, d1 floordiv 128)>
graph.func @sibling_b_inputs_type(%x: tensor<2x256xbf16>, %w: tensor<32x256xi4>, %s: tensor<32x2xbf16>, %v: tensor<32x256xi4>, %t: tensor<32x2xf16>) -> tensor<2x32xbf16> {
  // expected-error @+1 {{'kernel.contract' op sibling_b_input #0 must have b input #0's type 'tensor<32x2xbf16>', got 'tensor<32x2xf16>'}}
  %y = kernel.contract %x, %w b_inputs(%s : tensor<32x2xbf16>) siblings(%v : tensor<32x256xi4>) sibling_b_inputs(%t : tensor<32x2xf16>) {b_maps = [#grp], epilogue_maps = [], nodes = ["y"]} : tensor<2x256xbf16>, tensor<32x256xi4> -> tensor<2x32xbf16> body {
  ^bb0(%a: bf16, %b: i4, %w0: bf16):
    %0 = arith.extf %a : bf16 to f32
    %1 = arith.sitofp %b : i4 to bf16
    %2 = arith.mulf %1, %w0 : bf16
    %3 = arith.extf %2 : bf16 to f32
    %4 = arith.mulf %0, %3 : f32
    kernel.yield %4 : f32
  } epilogue {
  ^bb0(%acc0: f32, %acc1: f32):
    %0 = arith.mulf %acc0, %acc1 : f32
    %1 = arith.truncf %0 : f32 to bf16
    kernel.yield %1 : bf16
  }
  graph.return %y : tensor<2x32xbf16>
}
