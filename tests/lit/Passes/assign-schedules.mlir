// RUN: %mtc-opt %s --pass-pipeline='builtin.module(graph.func(mtc-assign-schedules))' | FileCheck %s

// Kernels without a schedule get the heuristic one (passes/Heuristics.cpp,
// defaultSchedule); a schedule already present is kept.

#row = affine_map<(d0, d1) -> (d1)>
#id1 = affine_map<(d0) -> (d0)>

// M = 1, int8 [N, K] weight: 16-byte loads, two rows per warp, unroll 4,
// and warps splitting K while each keeps at least 4 steps of 512 k's: two
// at K = 4096, four at K = 8704 (17 steps), one at K = 2048 (where too few
// blocks also leave one row per warp).

// CHECK-LABEL: graph.func @woq_m1(
// CHECK:         kernel.contract
// CHECK-SAME:      schedule = #kernel.schedule<kind = simt, warps = 4, rows = 2, kwarps = 2, vec = 16, unroll = 4, mtile = 1, splitk = 1>
graph.func @woq_m1(%x: tensor<1x4096xbf16>, %w: tensor<8192x4096xi8>, %s: tensor<8192xbf16>) -> tensor<1x8192xbf16> {
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

// CHECK-LABEL: graph.func @woq_m1_k8704(
// CHECK:         kernel.contract
// CHECK-SAME:      schedule = #kernel.schedule<kind = simt, warps = 4, rows = 2, kwarps = 4, vec = 16, unroll = 4, mtile = 1, splitk = 1>
graph.func @woq_m1_k8704(%x: tensor<1x8704xbf16>, %w: tensor<2240x8704xi8>, %s: tensor<2240xbf16>) -> tensor<1x2240xbf16> {
  %0 = kernel.contract %x, %w epilogue(%s : tensor<2240xbf16>) {epilogue_maps = [#row], nodes = ["wf", "y", "out"]}
      : tensor<1x8704xbf16>, tensor<2240x8704xi8> -> tensor<1x2240xbf16>
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
  graph.return %0 : tensor<1x2240xbf16>
}

// CHECK-LABEL: graph.func @woq_m1_k2048(
// CHECK:         kernel.contract
// CHECK-SAME:      schedule = #kernel.schedule<kind = simt, warps = 4, rows = 1, kwarps = 1, vec = 16, unroll = 4, mtile = 1, splitk = 1>
graph.func @woq_m1_k2048(%x: tensor<1x2048xbf16>, %w: tensor<2048x2048xi8>, %s: tensor<2048xbf16>) -> tensor<1x2048xbf16> {
  %0 = kernel.contract %x, %w epilogue(%s : tensor<2048xbf16>) {epilogue_maps = [#row], nodes = ["wf", "y", "out"]}
      : tensor<1x2048xbf16>, tensor<2048x2048xi8> -> tensor<1x2048xbf16>
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
  graph.return %0 : tensor<1x2048xbf16>
}

// M = 16: tensor cores, all sixteen activation rows in one block. On
// 8192 rows the tiled kind's 128 blocks of 64 weight rows cover 97% of the
// 132 multiprocessors and stage the activations once per block; on 4096
// rows (64 blocks) the mma kind, warps splitting K.

// CHECK-LABEL: graph.func @woq_m16(
// CHECK:         kernel.contract
// CHECK-SAME:      schedule = #kernel.schedule<kind = tiled, warps = 4, rows = 1, kwarps = 1, vec = 64, unroll = 1, mtile = 16, splitk = 1, stages = 4>
graph.func @woq_m16(%x: tensor<16x4096xbf16>, %w: tensor<8192x4096xi8>) -> tensor<16x8192xbf16> {
  %0 = kernel.contract %x, %w {epilogue_maps = [], nodes = ["wf", "y"]}
      : tensor<16x4096xbf16>, tensor<8192x4096xi8> -> tensor<16x8192xbf16>
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
  graph.return %0 : tensor<16x8192xbf16>
}

// CHECK-LABEL: graph.func @woq_m16_n4096(
// CHECK:         kernel.contract
// CHECK-SAME:      schedule = #kernel.schedule<kind = mma, warps = 8, rows = 1, kwarps = 8, vec = 16, unroll = 2, mtile = 16, splitk = 1>
graph.func @woq_m16_n4096(%x: tensor<16x4096xbf16>, %w: tensor<4096x4096xi8>) -> tensor<16x4096xbf16> {
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

// A small bf16 problem: too few blocks for two rows per warp, and K = 20
// only allows 8-byte loads.

// M = 4: tensor cores straight from global memory (the mma kind), one 8-row
// tile of M, warps splitting K.

// CHECK-LABEL: graph.func @woq_m4(
// CHECK:         kernel.contract
// CHECK-SAME:      schedule = #kernel.schedule<kind = mma, warps = 8, rows = 1, kwarps = 8, vec = 32, unroll = 4, mtile = 8, splitk = 1>
graph.func @woq_m4(%x: tensor<4x4096xbf16>, %w: tensor<8192x4096xi8>) -> tensor<4x8192xbf16> {
  %0 = kernel.contract %x, %w {epilogue_maps = [], nodes = ["wf", "y"]}
      : tensor<4x4096xbf16>, tensor<8192x4096xi8> -> tensor<4x8192xbf16>
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
  graph.return %0 : tensor<4x8192xbf16>
}

// A small bf16 problem: too few blocks for two rows per warp, and K = 20
// only allows 8-byte loads.

// M = 64: tensor cores on shared-memory tiles (the tiled kind): 32 weight
// rows by 64 activation rows per warp, two warps splitting each K tile.

// CHECK-LABEL: graph.func @woq_m64(
// CHECK:         kernel.contract
// CHECK-SAME:      schedule = #kernel.schedule<kind = tiled, warps = 4, rows = 2, kwarps = 2, vec = 32, unroll = 1, mtile = 64, splitk = 1, stages = 4>
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

// A small bf16 problem: too few blocks for two rows per warp, and K = 20
// only allows 8-byte loads.

// CHECK-LABEL: graph.func @small(
// CHECK:         kernel.contract
// CHECK-SAME:      schedule = #kernel.schedule<kind = simt, warps = 4, rows = 1, kwarps = 1, vec = 8, unroll = 4, mtile = 1, splitk = 1>
graph.func @small(%x: tensor<1x20xbf16>, %w: tensor<32x20xbf16>) -> tensor<1x32xbf16> {
  %0 = kernel.contract %x, %w {epilogue_maps = [], nodes = ["y"]}
      : tensor<1x20xbf16>, tensor<32x20xbf16> -> tensor<1x32xbf16>
  body {
  ^bb0(%a: bf16, %b: bf16):
    %1 = arith.extf %a : bf16 to f32
    %2 = arith.extf %b : bf16 to f32
    %3 = arith.mulf %1, %2 : f32
    kernel.yield %3 : f32
  } epilogue {
  ^bb0(%acc: f32):
    %1 = arith.truncf %acc : f32 to bf16
    kernel.yield %1 : bf16
  }
  graph.return %0 : tensor<1x32xbf16>
}

// A [K, N] weight: vectors along N, up to four activation rows per block.

// CHECK-LABEL: graph.func @kn_weight(
// CHECK:         kernel.contract
// CHECK-SAME:      b_transposed
// CHECK-SAME:      schedule = #kernel.schedule<kind = simt, warps = 4, rows = 1, kwarps = 1, vec = 16, unroll = 4, mtile = 4, splitk = 1>
graph.func @kn_weight(%x: tensor<4x4096xbf16>, %w: tensor<4096x8192xi8>) -> tensor<4x8192xbf16> {
  %0 = kernel.contract %x, %w {b_transposed, epilogue_maps = [], nodes = ["wf", "y"]}
      : tensor<4x4096xbf16>, tensor<4096x8192xi8> -> tensor<4x8192xbf16>
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
  graph.return %0 : tensor<4x8192xbf16>
}

// CHECK-LABEL: graph.func @elementwise(
// CHECK:         kernel.elementwise
// CHECK-SAME:      schedule = #kernel.schedule<kind = elementwise, warps = 4, rows = 1, kwarps = 1, vec = 4, unroll = 1, mtile = 1, splitk = 1>
graph.func @elementwise(%x: tensor<1024xf32>) -> tensor<1024xf32> {
  %0 = kernel.elementwise %x : tensor<1024xf32> {indexing_maps = [#id1], nodes = ["r"]} -> tensor<1024xf32> {
  ^bb0(%v: f32):
    %c = arith.constant 0.0 : f32
    %1 = arith.maximumf %v, %c : f32
    kernel.yield %1 : f32
  }
  graph.return %0 : tensor<1024xf32>
}

// Schedules already present (from the autotuner or the input) are kept, and
// only the kernel without one gets the default.

// CHECK-LABEL: graph.func @keeps_existing(
// CHECK:         kernel.contract
// CHECK-SAME:      schedule = #kernel.schedule<kind = simt, warps = 8, rows = 1, kwarps = 2, vec = 8, unroll = 2, mtile = 1, splitk = 4>
// CHECK:         kernel.elementwise
// CHECK-SAME:      schedule = #kernel.schedule<kind = elementwise, warps = 1, rows = 1, kwarps = 1, vec = 16, unroll = 1, mtile = 1, splitk = 1>
// CHECK:         kernel.elementwise
// CHECK-SAME:      schedule = #kernel.schedule<kind = elementwise, warps = 4, rows = 1, kwarps = 1, vec = 4, unroll = 1, mtile = 1, splitk = 1>
graph.func @keeps_existing(%x: tensor<1x4096xbf16>, %w: tensor<8192x4096xi8>) -> (tensor<1x8192xbf16>, tensor<1x8192xbf16>) {
  %0 = kernel.contract %x, %w {epilogue_maps = [], nodes = ["y"],
       schedule = #kernel.schedule<kind = simt, warps = 8, rows = 1, kwarps = 2, vec = 8, unroll = 2, mtile = 1, splitk = 4>}
      : tensor<1x4096xbf16>, tensor<8192x4096xi8> -> tensor<1x8192xbf16>
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
  %1 = kernel.elementwise %0 : tensor<1x8192xbf16> {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], nodes = ["r"],
       schedule = #kernel.schedule<kind = elementwise, warps = 1, rows = 1, kwarps = 1, vec = 16, unroll = 1, mtile = 1, splitk = 1>} -> tensor<1x8192xbf16> {
  ^bb0(%v: bf16):
    kernel.yield %v : bf16
  }
  %2 = kernel.elementwise %0 : tensor<1x8192xbf16> {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], nodes = ["s"]} -> tensor<1x8192xbf16> {
  ^bb0(%v: bf16):
    kernel.yield %v : bf16
  }
  graph.return %1, %2 : tensor<1x8192xbf16>, tensor<1x8192xbf16>
}

// Graph ops are left alone.

// CHECK-LABEL: graph.func @graph_ops(
// CHECK:         graph.relu
// CHECK-NOT:     schedule
// CHECK:         graph.return
graph.func @graph_ops(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = graph.relu %x : tensor<4xf32> -> tensor<4xf32>
  graph.return %r : tensor<4xf32>
}

// Row reductions (kernel.reduce): a row's sum is a chain of latencies, so
// a row of 4096 bf16 (16 warp steps of 8 elements a lane) is spread over
// 8 warps of one block, two steps each; a row of 64 (one step) stays in
// one warp, and a block takes 4 such rows.

#rrow = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: graph.func @rms_stat_4096(
// CHECK:         kernel.reduce
// CHECK-SAME:      schedule = #kernel.schedule<kind = reduce, warps = 8, rows = 1, kwarps = 8, vec = 8, unroll = 2, mtile = 1, splitk = 1>
graph.func @rms_stat_4096(%x: tensor<3x4096xbf16>) -> tensor<3x1xf32> {
  %r = kernel.reduce %x : tensor<3x4096xbf16> epilogue() {epilogue_maps = [], extent = 4096 : i64, indexing_maps = [#rrow], nodes = ["r"]} -> tensor<3x1xf32> body {
  ^bb0(%in0: bf16):
    %0 = arith.extf %in0 : bf16 to f32
    %1 = arith.mulf %0, %0 : f32
    kernel.yield %1 : f32
  } epilogue {
  ^bb0(%sum: f32):
    %0 = math.rsqrt %sum : f32
    kernel.yield %0 : f32
  }
  graph.return %r : tensor<3x1xf32>
}

// CHECK-LABEL: graph.func @rms_stat_64(
// CHECK:         kernel.reduce
// CHECK-SAME:      schedule = #kernel.schedule<kind = reduce, warps = 4, rows = 1, kwarps = 1, vec = 8, unroll = 1, mtile = 1, splitk = 1>
graph.func @rms_stat_64(%x: tensor<5x64xbf16>) -> tensor<5x1xf32> {
  %r = kernel.reduce %x : tensor<5x64xbf16> epilogue() {epilogue_maps = [], extent = 64 : i64, indexing_maps = [#rrow], nodes = ["r"]} -> tensor<5x1xf32> body {
  ^bb0(%in0: bf16):
    %0 = arith.extf %in0 : bf16 to f32
    %1 = arith.mulf %0, %0 : f32
    kernel.yield %1 : f32
  } epilogue {
  ^bb0(%sum: f32):
    %0 = math.rsqrt %sum : f32
    kernel.yield %0 : f32
  }
  graph.return %r : tensor<5x1xf32>
}
