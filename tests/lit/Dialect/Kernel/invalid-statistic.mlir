// RUN: %mtc-opt %s -split-input-file -verify-diagnostics

// kernel.contract with a row statistic (`statistic` regions: the prologue's
// statistic derived in the kernel): one case per verifier error (the round
// trip is in ops.mlir, the fusion in Passes/fuse-statistic.mlir).

graph.func @stat_body_type(%act: tensor<2x64xbf16>, %w: tensor<32x64xi8>) -> tensor<2x32xbf16> {
  // expected-error @+1 {{'kernel.contract' op stat_body argument #0 has type 'f16', expected 'bf16'}}
  %y = kernel.contract %act, %w {epilogue_maps = [], nodes = ["y"], schedule = #kernel.schedule<kind = simt, warps = 4, rows = 1, kwarps = 1, vec = 16, unroll = 1, mtile = 2, splitk = 1>} : tensor<2x64xbf16>, tensor<32x64xi8> -> tensor<2x32xbf16> body {
  ^bb0(%a: bf16, %b: i8, %stat: f32):
    %0 = arith.extf %a : bf16 to f32
    %1 = arith.mulf %0, %stat : f32
    %2 = arith.truncf %1 : f32 to bf16
    %3 = arith.extf %2 : bf16 to f32
    %4 = arith.sitofp %b : i8 to f32
    %5 = arith.mulf %3, %4 : f32
    kernel.yield %5 : f32
  } epilogue {
  ^bb0(%acc: f32):
    %0 = arith.truncf %acc : f32 to bf16
    kernel.yield %0 : bf16
  } statistic {
  ^bb0(%x: f16):
    %0 = arith.extf %x : f16 to f32
    %1 = arith.mulf %0, %0 : f32
    kernel.yield %1 : f32
  } then {
  ^bb0(%sum: f32):
    %0 = math.rsqrt %sum : f32
    kernel.yield %0 : f32
  }
  graph.return %y : tensor<2x32xbf16>
}

// -----

graph.func @no_stat_argument(%act: tensor<2x64xbf16>, %w: tensor<32x64xi8>) -> tensor<2x32xbf16> {
  // expected-error @+1 {{'kernel.contract' op body takes 2 arguments, expected 3}}
  %y = kernel.contract %act, %w {epilogue_maps = [], nodes = ["y"], schedule = #kernel.schedule<kind = simt, warps = 4, rows = 1, kwarps = 1, vec = 16, unroll = 1, mtile = 2, splitk = 1>} : tensor<2x64xbf16>, tensor<32x64xi8> -> tensor<2x32xbf16> body {
  ^bb0(%a: bf16, %b: i8):
    %0 = arith.extf %a : bf16 to f32
    %1 = arith.mulf %0, %0 : f32
    %2 = arith.truncf %1 : f32 to bf16
    %3 = arith.extf %2 : bf16 to f32
    %4 = arith.sitofp %b : i8 to f32
    %5 = arith.mulf %3, %4 : f32
    kernel.yield %5 : f32
  } epilogue {
  ^bb0(%acc: f32):
    %0 = arith.truncf %acc : f32 to bf16
    kernel.yield %0 : bf16
  } statistic {
  ^bb0(%x: bf16):
    %0 = arith.extf %x : bf16 to f32
    %1 = arith.mulf %0, %0 : f32
    kernel.yield %1 : f32
  } then {
  ^bb0(%sum: f32):
    %0 = math.rsqrt %sum : f32
    kernel.yield %0 : f32
  }
  graph.return %y : tensor<2x32xbf16>
}

// -----

graph.func @stat_on_mma(%act: tensor<2x64xbf16>, %w: tensor<32x64xi8>) -> tensor<2x32xbf16> {
  // expected-error @+1 {{a contraction that derives its rows' statistic (a norm's rsqrt) runs on the simt kind: the mma kind does not sum A's rows before its first step}}
  %y = kernel.contract %act, %w {epilogue_maps = [], nodes = ["y"], schedule = #kernel.schedule<kind = mma, warps = 4, rows = 1, kwarps = 1, vec = 16, unroll = 1, mtile = 8, splitk = 1>} : tensor<2x64xbf16>, tensor<32x64xi8> -> tensor<2x32xbf16> body {
  ^bb0(%a: bf16, %b: i8, %stat: f32):
    %0 = arith.extf %a : bf16 to f32
    %1 = arith.mulf %0, %stat : f32
    %2 = arith.truncf %1 : f32 to bf16
    %3 = arith.extf %2 : bf16 to f32
    %4 = arith.sitofp %b : i8 to f32
    %5 = arith.mulf %3, %4 : f32
    kernel.yield %5 : f32
  } epilogue {
  ^bb0(%acc: f32):
    %0 = arith.truncf %acc : f32 to bf16
    kernel.yield %0 : bf16
  } statistic {
  ^bb0(%x: bf16):
    %0 = arith.extf %x : bf16 to f32
    %1 = arith.mulf %0, %0 : f32
    kernel.yield %1 : f32
  } then {
  ^bb0(%sum: f32):
    %0 = math.rsqrt %sum : f32
    kernel.yield %0 : f32
  }
  graph.return %y : tensor<2x32xbf16>
}

// -----

graph.func @stat_transposed_a(%act: tensor<64x2xbf16>, %w: tensor<32x64xi8>) -> tensor<2x32xbf16> {
  // expected-error @+1 {{'kernel.contract' op a row statistic needs a 2-D operand a [M, K] and a weight stored [N, K] (neither transposed)}}
  %y = kernel.contract %act, %w {a_transposed, epilogue_maps = [], nodes = ["y"], schedule = #kernel.schedule<kind = simt, warps = 4, rows = 1, kwarps = 1, vec = 16, unroll = 1, mtile = 2, splitk = 1>} : tensor<64x2xbf16>, tensor<32x64xi8> -> tensor<2x32xbf16> body {
  ^bb0(%a: bf16, %b: i8, %stat: f32):
    %0 = arith.extf %a : bf16 to f32
    %1 = arith.mulf %0, %stat : f32
    %2 = arith.truncf %1 : f32 to bf16
    %3 = arith.extf %2 : bf16 to f32
    %4 = arith.sitofp %b : i8 to f32
    %5 = arith.mulf %3, %4 : f32
    kernel.yield %5 : f32
  } epilogue {
  ^bb0(%acc: f32):
    %0 = arith.truncf %acc : f32 to bf16
    kernel.yield %0 : bf16
  } statistic {
  ^bb0(%x: bf16):
    %0 = arith.extf %x : bf16 to f32
    %1 = arith.mulf %0, %0 : f32
    kernel.yield %1 : f32
  } then {
  ^bb0(%sum: f32):
    %0 = math.rsqrt %sum : f32
    kernel.yield %0 : f32
  }
  graph.return %y : tensor<2x32xbf16>
}
