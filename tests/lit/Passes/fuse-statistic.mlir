// RUN: %mtc-opt %s --mtc-fuse | FileCheck %s

// Row statistics derived in the contraction (FoldRowStatistic,
// passes/FusePrologue.cpp, mtc-fuse's last phase): the reduction a
// prologue reads (an RMSNorm's rsqrt(mean(x^2) + eps) per row) becomes the
// contraction's `statistic` regions, and what must not fold.

// Gate and up of one normed activation at M = 1: one kernel over both
// weights, which sums x's row itself; no reduction kernel is left.

// CHECK-LABEL: graph.func @gate_up(
// CHECK-NOT:     kernel.reduce
// CHECK:         kernel.contract %{{.*}}, %{{.*}} siblings(%{{.*}} : tensor<4224x64xi8>) a_inputs(%{{.*}} : tensor<64xbf16>)
// CHECK:         ^bb0(%{{.*}}: bf16, %{{.*}}: i8, %{{.*}}: bf16, %[[STAT:.*]]: f32):
// CHECK:         } statistic {
// CHECK-NEXT:    ^bb0(%[[E:.*]]: bf16):
// CHECK-NEXT:      %[[EF:.*]] = arith.extf %[[E]] : bf16 to f32
// CHECK-NEXT:      %[[SQ:.*]] = arith.mulf %[[EF]], %[[EF]] : f32
// CHECK-NEXT:      kernel.yield %[[SQ]] : f32
// CHECK-NEXT:    } then {
// CHECK-NEXT:    ^bb0(%[[SUM:.*]]: f32):
// CHECK:           math.rsqrt
// CHECK-NOT:     kernel.{{contract|reduce|elementwise}}
// CHECK:         graph.return
graph.func @gate_up(%x: tensor<1x64xbf16>, %g: tensor<64xbf16>, %w1: tensor<4224x64xi8>, %w3: tensor<4224x64xi8>) -> tensor<1x4224xbf16> {
  %xf = graph.convert %x : tensor<1x64xbf16> -> tensor<1x64xf32>
  %sq = graph.mul %xf, %xf : tensor<1x64xf32>, tensor<1x64xf32> -> tensor<1x64xf32>
  %ms = graph.mean %sq : tensor<1x64xf32> -> tensor<1x1xf32>
  %eps = graph.constant 1.0e-05 : tensor<1xf32>
  %e = graph.add %ms, %eps : tensor<1x1xf32>, tensor<1xf32> -> tensor<1x1xf32>
  %r = graph.rsqrt %e : tensor<1x1xf32> -> tensor<1x1xf32>
  %nf = graph.mul %xf, %r : tensor<1x64xf32>, tensor<1x1xf32> -> tensor<1x64xf32>
  %nb = graph.convert %nf : tensor<1x64xf32> -> tensor<1x64xbf16>
  %n = graph.mul %nb, %g : tensor<1x64xbf16>, tensor<64xbf16> -> tensor<1x64xbf16>
  %w1f = graph.convert %w1 : tensor<4224x64xi8> -> tensor<4224x64xbf16>
  %g0 = graph.linear %n, %w1f : tensor<1x64xbf16>, tensor<4224x64xbf16> -> tensor<1x4224xbf16>
  %w3f = graph.convert %w3 : tensor<4224x64xi8> -> tensor<4224x64xbf16>
  %u0 = graph.linear %n, %w3f : tensor<1x64xbf16>, tensor<4224x64xbf16> -> tensor<1x4224xbf16>
  %sg = graph.silu %g0 : tensor<1x4224xbf16> -> tensor<1x4224xbf16>
  %a = graph.mul %sg, %u0 : tensor<1x4224xbf16>, tensor<1x4224xbf16> -> tensor<1x4224xbf16>
  graph.return %a : tensor<1x4224xbf16>
}

// The normed activations are also a graph output: the contraction derives
// its own copy of the statistic, and the kernel that writes them is the
// reduction applying its statistic to the rows.

// CHECK-LABEL: graph.func @also_returned(
// CHECK:         %[[N:.*]] = kernel.reduce %{{.*}} apply_inputs(
// CHECK-SAME:      -> tensor<1x64xbf16>
// CHECK:         %[[Y:.*]] = kernel.contract
// CHECK:         } statistic {
// CHECK:         graph.return %[[N]], %[[Y]]
graph.func @also_returned(%x: tensor<1x64xbf16>, %g: tensor<64xbf16>, %w: tensor<4224x64xi8>) -> (tensor<1x64xbf16>, tensor<1x4224xbf16>) {
  %xf = graph.convert %x : tensor<1x64xbf16> -> tensor<1x64xf32>
  %sq = graph.mul %xf, %xf : tensor<1x64xf32>, tensor<1x64xf32> -> tensor<1x64xf32>
  %ms = graph.mean %sq : tensor<1x64xf32> -> tensor<1x1xf32>
  %r = graph.rsqrt %ms : tensor<1x1xf32> -> tensor<1x1xf32>
  %nf = graph.mul %xf, %r : tensor<1x64xf32>, tensor<1x1xf32> -> tensor<1x64xf32>
  %nb = graph.convert %nf : tensor<1x64xf32> -> tensor<1x64xbf16>
  %n = graph.mul %nb, %g : tensor<1x64xbf16>, tensor<64xbf16> -> tensor<1x64xbf16>
  %wf = graph.convert %w : tensor<4224x64xi8> -> tensor<4224x64xbf16>
  %y = graph.linear %n, %wf : tensor<1x64xbf16>, tensor<4224x64xbf16> -> tensor<1x4224xbf16>
  graph.return %n, %y : tensor<1x64xbf16>, tensor<1x4224xbf16>
}

// Must not fold: the statistic's epilogue reads a tensor (eps is a graph
// input), which the contraction's statistic regions have no place for.

// CHECK-LABEL: graph.func @eps_input(
// CHECK:         %[[R:.*]] = kernel.reduce %{{.*}} epilogue(%{{.*}} : tensor<1xf32>)
// CHECK:         kernel.contract %{{.*}}, %{{.*}} a_inputs(%{{.*}}, %[[R]] : tensor<64xbf16>, tensor<1x1xf32>)
// CHECK-NOT:     statistic
graph.func @eps_input(%x: tensor<1x64xbf16>, %g: tensor<64xbf16>, %eps: tensor<1xf32>, %w: tensor<32x64xi8>) -> tensor<1x32xbf16> {
  %xf = graph.convert %x : tensor<1x64xbf16> -> tensor<1x64xf32>
  %sq = graph.mul %xf, %xf : tensor<1x64xf32>, tensor<1x64xf32> -> tensor<1x64xf32>
  %ms = graph.mean %sq : tensor<1x64xf32> -> tensor<1x1xf32>
  %e = graph.add %ms, %eps : tensor<1x1xf32>, tensor<1xf32> -> tensor<1x1xf32>
  %r = graph.rsqrt %e : tensor<1x1xf32> -> tensor<1x1xf32>
  %nf = graph.mul %xf, %r : tensor<1x64xf32>, tensor<1x1xf32> -> tensor<1x64xf32>
  %nb = graph.convert %nf : tensor<1x64xf32> -> tensor<1x64xbf16>
  %n = graph.mul %nb, %g : tensor<1x64xbf16>, tensor<64xbf16> -> tensor<1x64xbf16>
  %wf = graph.convert %w : tensor<32x64xi8> -> tensor<32x64xbf16>
  %y = graph.linear %n, %wf : tensor<1x64xbf16>, tensor<32x64xbf16> -> tensor<1x32xbf16>
  graph.return %y : tensor<1x32xbf16>
}

// Must not fold: at M = 2 the contraction starts on the mma kind, which
// takes no prologue here; the norm is one reduction that applies its
// statistic to the rows.

// CHECK-LABEL: graph.func @mma_m2(
// CHECK:         %[[N:.*]] = kernel.reduce %{{.*}} apply_inputs(
// CHECK-NOT:     kernel.elementwise
// CHECK:         kernel.contract %[[N]]
// CHECK-NOT:     statistic
graph.func @mma_m2(%x: tensor<2x64xbf16>, %g: tensor<64xbf16>, %w: tensor<32x64xi8>) -> tensor<2x32xbf16> {
  %xf = graph.convert %x : tensor<2x64xbf16> -> tensor<2x64xf32>
  %sq = graph.mul %xf, %xf : tensor<2x64xf32>, tensor<2x64xf32> -> tensor<2x64xf32>
  %ms = graph.mean %sq : tensor<2x64xf32> -> tensor<2x1xf32>
  %r = graph.rsqrt %ms : tensor<2x1xf32> -> tensor<2x1xf32>
  %nf = graph.mul %xf, %r : tensor<2x64xf32>, tensor<2x1xf32> -> tensor<2x64xf32>
  %nb = graph.convert %nf : tensor<2x64xf32> -> tensor<2x64xbf16>
  %n = graph.mul %nb, %g : tensor<2x64xbf16>, tensor<64xbf16> -> tensor<2x64xbf16>
  %wf = graph.convert %w : tensor<32x64xi8> -> tensor<32x64xbf16>
  %y = graph.linear %n, %wf : tensor<2x64xbf16>, tensor<32x64xbf16> -> tensor<2x32xbf16>
  graph.return %y : tensor<2x32xbf16>
}

// Must not fold: 96 outputs leave blocks of one row per warp, each
// streaming 256 weight bytes; summing the 128 bytes of x's row in every
// block costs more than the reduction kernel it would replace.

// CHECK-LABEL: graph.func @small_n(
// CHECK:         %[[R:.*]] = kernel.reduce
// CHECK:         kernel.contract %{{.*}}, %{{.*}} a_inputs(%{{.*}}, %[[R]] : tensor<64xbf16>, tensor<1x1xf32>)
// CHECK-NOT:     statistic
graph.func @small_n(%x: tensor<1x64xbf16>, %g: tensor<64xbf16>, %w: tensor<96x64xi8>) -> tensor<1x96xbf16> {
  %xf = graph.convert %x : tensor<1x64xbf16> -> tensor<1x64xf32>
  %sq = graph.mul %xf, %xf : tensor<1x64xf32>, tensor<1x64xf32> -> tensor<1x64xf32>
  %ms = graph.mean %sq : tensor<1x64xf32> -> tensor<1x1xf32>
  %r = graph.rsqrt %ms : tensor<1x1xf32> -> tensor<1x1xf32>
  %nf = graph.mul %xf, %r : tensor<1x64xf32>, tensor<1x1xf32> -> tensor<1x64xf32>
  %nb = graph.convert %nf : tensor<1x64xf32> -> tensor<1x64xbf16>
  %n = graph.mul %nb, %g : tensor<1x64xbf16>, tensor<64xbf16> -> tensor<1x64xbf16>
  %wf = graph.convert %w : tensor<96x64xi8> -> tensor<96x64xbf16>
  %y = graph.linear %n, %wf : tensor<1x64xbf16>, tensor<96x64xbf16> -> tensor<1x96xbf16>
  graph.return %y : tensor<1x96xbf16>
}
