// RUN: %mtc-opt %s --pass-pipeline='builtin.module(graph.func(mtc-assign-schedules))' | FileCheck %s --check-prefix=H200
// RUN: %mtc-opt %s --pass-pipeline='builtin.module(graph.func(mtc-assign-schedules{num-sms=8}))' | FileCheck %s --check-prefix=SMS8
// RUN: %mtc-opt %s --pass-pipeline='builtin.module(graph.func(mtc-assign-schedules{num-sms=16}))' | FileCheck %s --check-prefix=SMS16
// RUN: %mtc-opt %s --pass-pipeline='builtin.module(graph.func(mtc-assign-schedules{max-shared-per-block=16384}))' | FileCheck %s --check-prefix=SMEM16K
// RUN: %mtc-opt %s --pass-pipeline='builtin.module(graph.func(mtc-assign-schedules{num-sms=132 mem-bandwidth=60000000000}))' | FileCheck %s --check-prefix=BW60
// RUN: %mtc-opt %s --split-input-file --verify-diagnostics --pass-pipeline='builtin.module(graph.func(mtc-assign-schedules{num-sms=0}))'
// RUN: %mtc-opt %s --split-input-file --verify-diagnostics --pass-pipeline='builtin.module(graph.func(mtc-assign-schedules{mem-bandwidth=-1}))'

// The heuristic sizes schedules by the target's multiprocessors and shared
// memory (passes/Heuristics.h, ScheduleTarget; defaults an H200's). At
// M = 16 on 4096 x 4096, the mma start splits K over warps until the
// bandwidth times the loaded latency is in flight (1 KiB a warp; without
// mem-bandwidth, an H200's 64 KiB per multiprocessor): 256 tiles of 16 rows
// take eight warps each on 132 multiprocessors, and one with 60 GB/s. With
// 16 or 8 multiprocessors the tiled kind's 64 blocks of 64 weight rows
// fill the machine, and it stages the activations once per block
// (Heuristics.cpp, sharesActivations). The tiled start
// at M = 64 keeps a ring of four K tiles; where a block may use only 16 KiB
// of shared memory it gives up stages, load width, warps and rows until it
// fits.

#row = affine_map<(d0, d1) -> (d1)>

// H200-LABEL: graph.func @woq_m16(
// H200:         schedule = #kernel.schedule<kind = mma, warps = 8, rows = 1, kwarps = 8, vec = 16, unroll = 2, mtile = 16, splitk = 1>
// SMS16-LABEL: graph.func @woq_m16(
// SMS16:        schedule = #kernel.schedule<kind = tiled, warps = 4, rows = 1, kwarps = 1, vec = 64, unroll = 1, mtile = 16, splitk = 1, stages = 4>
// BW60-LABEL: graph.func @woq_m16(
// BW60:         schedule = #kernel.schedule<kind = mma, warps = 4, rows = 1, kwarps = 1,
// SMS8-LABEL: graph.func @woq_m16(
// SMS8:         schedule = #kernel.schedule<kind = tiled, warps = 4, rows = 1, kwarps = 1, vec = 64, unroll = 1, mtile = 16, splitk = 1, stages = 4>
// expected-error@+1 {{mtc-assign-schedules: num-sms must be at least 1}}
graph.func @woq_m16(%x: tensor<16x4096xbf16>, %w: tensor<4096x4096xi8>) -> tensor<16x4096xbf16> {
  %0 = kernel.contract %x, %w {epilogue_maps = [], nodes = ["wf", "y"]}
      : tensor<16x4096xbf16>, tensor<4096x4096xi8> -> tensor<16x4096xbf16>
  body {
  ^bb0(%a: bf16, %b: i8):
    %1 = arith.extf %a : bf16 to f32
    %2 = arith.sitofp %b : i8 to f32
    %3 = arith.mulf %1, %2 : f32
    kernel.yield %3 : f32
  } epilogue {
  ^bb0(%acc: f32):
    %1 = arith.truncf %acc : f32 to bf16
    kernel.yield %1 : bf16
  }
  graph.return %0 : tensor<16x4096xbf16>
}

// -----

// H200-LABEL: graph.func @woq_m64(
// H200:         schedule = #kernel.schedule<kind = tiled, warps = 4, rows = 2, kwarps = 2, vec = 32, unroll = 1, mtile = 64, splitk = 1, stages = 4>
// SMEM16K-LABEL: graph.func @woq_m64(
// SMEM16K:        schedule = #kernel.schedule<kind = tiled, warps = 4, rows = 1, kwarps = 1, vec = 16, unroll = 1, mtile = 32, splitk = 1, stages = 2>
// expected-error@+1 {{mtc-assign-schedules: num-sms must be at least 1}}
graph.func @woq_m64(%x: tensor<64x4096xbf16>, %w: tensor<8192x4096xi8>) -> tensor<64x8192xbf16> {
  %0 = kernel.contract %x, %w {epilogue_maps = [], nodes = ["wf", "y"]}
      : tensor<64x4096xbf16>, tensor<8192x4096xi8> -> tensor<64x8192xbf16>
  body {
  ^bb0(%a: bf16, %b: i8):
    %1 = arith.extf %a : bf16 to f32
    %2 = arith.sitofp %b : i8 to f32
    %3 = arith.mulf %1, %2 : f32
    kernel.yield %3 : f32
  } epilogue {
  ^bb0(%acc: f32):
    %1 = arith.truncf %acc : f32 to bf16
    kernel.yield %1 : bf16
  }
  graph.return %0 : tensor<64x8192xbf16>
}
