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

// -----

// A stat_body without its stat_epilogue (the generic form; the custom one
// parses both or neither).
#gcol = affine_map<(d0, d1) -> (d1)>
"graph.func"() <{function_type = (tensor<1x64xbf16>, tensor<64xbf16>, tensor<32x64xi8>) -> tensor<1x32xbf16>, sym_name = "half_statistic"}> ({
^bb0(%arg0: tensor<1x64xbf16>, %arg1: tensor<64xbf16>, %arg2: tensor<32x64xi8>):
  // expected-error @+1 {{'kernel.contract' op a row statistic needs one block in each of stat_body and stat_epilogue}}
  %0 = "kernel.contract"(%arg0, %arg2, %arg1) <{a_maps = [#gcol], epilogue_maps = [], nodes = ["y"], operandSegmentSizes = array<i32: 1, 1, 0, 0, 1, 0, 0>}> ({
  ^bb0(%arg6: bf16, %arg7: i8, %arg8: bf16, %arg9: f32):
    %5 = "arith.extf"(%arg6) : (bf16) -> f32
    %6 = "arith.mulf"(%5, %arg9) <{fastmath = #arith.fastmath<none>}> : (f32, f32) -> f32
    %7 = "arith.truncf"(%6) : (f32) -> bf16
    %8 = "arith.extf"(%7) : (bf16) -> f32
    %13 = "arith.sitofp"(%arg7) : (i8) -> f32
    %14 = "arith.mulf"(%8, %13) <{fastmath = #arith.fastmath<none>}> : (f32, f32) -> f32
    "kernel.yield"(%14) : (f32) -> ()
  }, {
  ^bb0(%arg5: f32):
    %4 = "arith.truncf"(%arg5) : (f32) -> bf16
    "kernel.yield"(%4) : (bf16) -> ()
  }, {
  ^bb0(%arg4: bf16):
    %2 = "arith.extf"(%arg4) : (bf16) -> f32
    %3 = "arith.mulf"(%2, %2) <{fastmath = #arith.fastmath<none>}> : (f32, f32) -> f32
    "kernel.yield"(%3) : (f32) -> ()
  }, {
  }) : (tensor<1x64xbf16>, tensor<32x64xi8>, tensor<64xbf16>) -> tensor<1x32xbf16>
  "graph.return"(%0) : (tensor<1x32xbf16>) -> ()
}) : () -> ()
