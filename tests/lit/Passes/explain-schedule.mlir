// RUN: %mtc-opt %s --pass-pipeline='builtin.module(graph.func(mtc-assign-schedules{explain=true}))' -verify-diagnostics -o /dev/null

// mtc-assign-schedules' explanation (`mtc compile --explain-schedule`): a
// remark per kernel with its schedule and each heuristic rule that shaped it
// (passes/Heuristics*.cpp, noteRule), or, for a kernel that carries its own
// schedule, the heuristic's beside it.

#row = affine_map<(d0, d1) -> (d1)>

// M = 1, int8: simt, two weight rows a warp, K's 8 steps over two warps
// that each keep the 4 in flight (the remark's lines after its first are
// checked in tests/lit/CLI/explain-schedule.test).
graph.func @woq_m1(%x: tensor<1x4096xbf16>, %w: tensor<8192x4096xi8>, %s: tensor<8192xbf16>) -> tensor<1x8192xbf16> {
  // expected-remark@+1 {{kernel 0 (contract): simt w4 r2 kw2 v16 u4 mt1 sk1, the heuristic's:}}
  %0 = kernel.contract %x, %w epilogue(%s : tensor<8192xbf16>) {epilogue_maps = [#row], nodes = ["wf", "y", "out"]}
      : tensor<1x4096xbf16>, tensor<8192x4096xi8> -> tensor<1x8192xbf16>
  body {
  ^bb0(%a: bf16, %b: i8):
    %1 = arith.extf %a : bf16 to f32
    %2 = arith.sitofp %b : i8 to f32
    %3 = arith.mulf %1, %2 : f32
    kernel.yield %3 : f32
  } epilogue {
  ^bb0(%acc: f32, %e: bf16):
    %1 = arith.truncf %acc : f32 to bf16
    %2 = arith.extf %1 : bf16 to f32
    %3 = arith.extf %e : bf16 to f32
    %4 = arith.mulf %2, %3 : f32
    %5 = arith.truncf %4 : f32 to bf16
    kernel.yield %5 : bf16
  }
  graph.return %0 : tensor<1x8192xbf16>
}

// The same kernel with a schedule of its own keeps it; the remark gives the
// heuristic's beside it.
graph.func @given(%x: tensor<1x4096xbf16>, %w: tensor<8192x4096xi8>, %s: tensor<8192xbf16>) -> tensor<1x8192xbf16> {
  // expected-remark@+1 {{kernel 0 (contract): simt w4 r1 kw1 v16 u4 mt1 sk1, given (--schedule, the tuner, or the input); the heuristic's would be simt w4 r2 kw2 v16 u4 mt1 sk1}}
  %0 = kernel.contract %x, %w epilogue(%s : tensor<8192xbf16>) {epilogue_maps = [#row], nodes = ["wf", "y", "out"], schedule = #kernel.schedule<kind = simt, warps = 4, rows = 1, kwarps = 1, vec = 16, unroll = 4, mtile = 1, splitk = 1>}
      : tensor<1x4096xbf16>, tensor<8192x4096xi8> -> tensor<1x8192xbf16>
  body {
  ^bb0(%a: bf16, %b: i8):
    %1 = arith.extf %a : bf16 to f32
    %2 = arith.sitofp %b : i8 to f32
    %3 = arith.mulf %1, %2 : f32
    kernel.yield %3 : f32
  } epilogue {
  ^bb0(%acc: f32, %e: bf16):
    %1 = arith.truncf %acc : f32 to bf16
    %2 = arith.extf %1 : bf16 to f32
    %3 = arith.extf %e : bf16 to f32
    %4 = arith.mulf %2, %3 : f32
    %5 = arith.truncf %4 : f32 to bf16
    kernel.yield %5 : bf16
  }
  graph.return %0 : tensor<1x8192xbf16>
}
