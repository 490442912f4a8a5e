// RUN: %mtc-opt %s --mtc-fuse | FileCheck %s

// Activation prologues (passes/FusePrologue.cpp): the kernel computing a
// contraction's activations moves into its body where the contraction
// starts on the simt kind (int8 at M = 1), and what must not fuse.

// CHECK-DAG: #[[$ID:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[$COL:.*]] = affine_map<(d0, d1) -> (d1)>

// RMSNorm feeding two projections (gate and up): the scaling (x * r
// rounded to bf16, times g, rounded) is the prologue of each projection,
// computed from %a, the a input g (per k) and the row's statistic r, so n
// is never written. The statistic (a reduction) is then derived by each
// contraction itself (its `statistic` regions; the last phase,
// fuse-statistic.mlir has its cases): no kernel is left but the two.

// CHECK-LABEL: graph.func @norm_linear(
// CHECK-SAME:    %[[X:.*]]: tensor<1x64xbf16>, %[[G:.*]]: tensor<64xbf16>, %[[W:.*]]: tensor<4224x64xi8>, %[[W3:.*]]: tensor<2112x64xi8>)
// CHECK-NOT:     kernel.reduce
// CHECK-NOT:     kernel.elementwise
// CHECK:         %[[Y:.*]] = kernel.contract %[[X]], %[[W]] a_inputs(%[[G]] : tensor<64xbf16>)
// CHECK-SAME:      {a_maps = [#[[$COL]]], epilogue_maps = [], nodes = ["xf", "eps", "sq", "ms", "e", "r", "nf", "nb", "n", "wf", "y"]}
// CHECK-NEXT:    ^bb0(%[[A:.*]]: bf16, %[[B:.*]]: i8, %[[GK:.*]]: bf16, %[[RM:.*]]: f32):
// CHECK-NEXT:      %[[AF:.*]] = arith.extf %[[A]] : bf16 to f32
// CHECK-NEXT:      %[[S:.*]] = arith.mulf %[[AF]], %[[RM]] : f32
// CHECK-NEXT:      %[[SB:.*]] = arith.truncf %[[S]] : f32 to bf16
// CHECK-NEXT:      %[[SF:.*]] = arith.extf %[[SB]] : bf16 to f32
// CHECK-NEXT:      %[[GF:.*]] = arith.extf %[[GK]] : bf16 to f32
// CHECK-NEXT:      %[[N:.*]] = arith.mulf %[[SF]], %[[GF]] : f32
// CHECK-NEXT:      %[[NB:.*]] = arith.truncf %[[N]] : f32 to bf16
// CHECK-NEXT:      %[[NF:.*]] = arith.extf %[[NB]] : bf16 to f32
// CHECK-NEXT:      %[[BF:.*]] = arith.sitofp %[[B]] : i8 to f32
// CHECK-NEXT:      %[[P:.*]] = arith.mulf %[[NF]], %[[BF]] : f32
// CHECK-NEXT:      kernel.yield %[[P]] : f32
// CHECK:         } statistic {
// CHECK:         %[[Y3:.*]] = kernel.contract %[[X]], %[[W3]] a_inputs(%[[G]] : tensor<64xbf16>)
// CHECK-SAME:      nodes = ["xf", "eps", "sq", "ms", "e", "r", "nf", "nb", "n", "w3f", "y3"]
// CHECK:         } statistic {
// CHECK:         graph.return %[[Y]], %[[Y3]]
graph.func @norm_linear(%x: tensor<1x64xbf16>, %g: tensor<64xbf16>, %w: tensor<4224x64xi8>, %w3: tensor<2112x64xi8>) -> (tensor<1x4224xbf16>, tensor<1x2112xbf16>) {
  %xf = graph.convert %x : tensor<1x64xbf16> -> tensor<1x64xf32>
  %sq = graph.mul %xf, %xf : tensor<1x64xf32>, tensor<1x64xf32> -> tensor<1x64xf32>
  %ms = graph.mean %sq : tensor<1x64xf32> -> tensor<1x1xf32>
  %eps = graph.constant 1.0e-05 : tensor<1xf32>
  %e = graph.add %ms, %eps : tensor<1x1xf32>, tensor<1xf32> -> tensor<1x1xf32>
  %r = graph.rsqrt %e : tensor<1x1xf32> -> tensor<1x1xf32>
  %nf = graph.mul %xf, %r : tensor<1x64xf32>, tensor<1x1xf32> -> tensor<1x64xf32>
  %nb = graph.convert %nf : tensor<1x64xf32> -> tensor<1x64xbf16>
  %n = graph.mul %nb, %g : tensor<1x64xbf16>, tensor<64xbf16> -> tensor<1x64xbf16>
  %wf = graph.convert %w : tensor<4224x64xi8> -> tensor<4224x64xbf16>
  %y = graph.linear %n, %wf : tensor<1x64xbf16>, tensor<4224x64xbf16> -> tensor<1x4224xbf16>
  %w3f = graph.convert %w3 : tensor<2112x64xi8> -> tensor<2112x64xbf16>
  %y3 = graph.linear %n, %w3f : tensor<1x64xbf16>, tensor<2112x64xbf16> -> tensor<1x2112xbf16>
  graph.return %y, %y3 : tensor<1x4224xbf16>, tensor<1x2112xbf16>
}

// Must not fuse: at M = 2 the int8 contraction starts on the mma kind,
// where the prologue was measured slower than the kernel it replaces.

// CHECK-LABEL: graph.func @mma_m2(
// CHECK:         %[[N:.*]] = kernel.elementwise
// CHECK:         kernel.contract %[[N]], %{{.*}} {epilogue_maps
graph.func @mma_m2(%x: tensor<2x64xbf16>, %g: tensor<64xbf16>, %w: tensor<32x64xi8>) -> tensor<2x32xbf16> {
  %n = graph.mul %x, %g : tensor<2x64xbf16>, tensor<64xbf16> -> tensor<2x64xbf16>
  %wf = graph.convert %w : tensor<32x64xi8> -> tensor<32x64xbf16>
  %y = graph.linear %n, %wf : tensor<2x64xbf16>, tensor<32x64xbf16> -> tensor<2x32xbf16>
  graph.return %y : tensor<2x32xbf16>
}

// Must not fuse: at M = 17 the contraction starts on the tiled kind, which
// stages A in shared memory; the scaling stays a kernel.

// CHECK-LABEL: graph.func @large_m(
// CHECK:         %[[N:.*]] = kernel.elementwise
// CHECK:         kernel.contract %[[N]], %{{.*}} {epilogue_maps
graph.func @large_m(%x: tensor<17x64xbf16>, %g: tensor<64xbf16>, %w: tensor<32x64xi8>) -> tensor<17x32xbf16> {
  %n = graph.mul %x, %g : tensor<17x64xbf16>, tensor<64xbf16> -> tensor<17x64xbf16>
  %wf = graph.convert %w : tensor<32x64xi8> -> tensor<32x64xbf16>
  %y = graph.linear %n, %wf : tensor<17x64xbf16>, tensor<32x64xbf16> -> tensor<17x32xbf16>
  graph.return %y : tensor<17x32xbf16>
}

// Must not fuse: a weight stored [K, N] (matmul) takes no prologue.

// CHECK-LABEL: graph.func @weight_kn(
// CHECK:         %[[N:.*]] = kernel.elementwise
// CHECK:         kernel.contract %[[N]], %{{.*}} {b_transposed
graph.func @weight_kn(%x: tensor<1x64xbf16>, %g: tensor<64xbf16>, %w: tensor<64x32xi8>) -> tensor<1x32xbf16> {
  %n = graph.mul %x, %g : tensor<1x64xbf16>, tensor<64xbf16> -> tensor<1x64xbf16>
  %wf = graph.convert %w : tensor<64x32xi8> -> tensor<64x32xbf16>
  %y = graph.matmul %n, %wf : tensor<1x64xbf16>, tensor<64x32xbf16> -> tensor<1x32xbf16>
  graph.return %y : tensor<1x32xbf16>
}

// Must not fuse: a producer that reads nothing but A (a relu; the convert
// after it folds as an operand conversion) has no a inputs to mark it.

// CHECK-LABEL: graph.func @no_activation_input(
// CHECK:         %[[R:.*]] = kernel.elementwise %{{.*}} : tensor<1x64xf32> {{.*}} nodes = ["r"]
// CHECK:         kernel.contract %[[R]], %{{.*}} {epilogue_maps = [], nodes = ["n", "y"]}
graph.func @no_activation_input(%x: tensor<1x64xf32>, %w: tensor<32x64xbf16>) -> tensor<1x32xbf16> {
  %r = graph.relu %x : tensor<1x64xf32> -> tensor<1x64xf32>
  %n = graph.convert %r : tensor<1x64xf32> -> tensor<1x64xbf16>
  %y = graph.linear %n, %w : tensor<1x64xbf16>, tensor<32x64xbf16> -> tensor<1x32xbf16>
  graph.return %y : tensor<1x32xbf16>
}

// A producer that is also a graph output is still written for it, and
// recomputed in the contraction's prologue.

// CHECK-LABEL: graph.func @also_returned(
// CHECK-SAME:    %[[X:.*]]: tensor<1x64xbf16>, %[[G:.*]]: tensor<64xbf16>, %[[W:.*]]: tensor<32x64xbf16>)
// CHECK:         %[[N:.*]] = kernel.elementwise %[[X]], %[[G]]
// CHECK:         %[[Y:.*]] = kernel.contract %[[X]], %[[W]] a_inputs(%[[G]] : tensor<64xbf16>)
// CHECK:         graph.return %[[N]], %[[Y]]
graph.func @also_returned(%x: tensor<1x64xbf16>, %g: tensor<64xbf16>, %w: tensor<32x64xbf16>) -> (tensor<1x64xbf16>, tensor<1x32xbf16>) {
  %n = graph.mul %x, %g : tensor<1x64xbf16>, tensor<64xbf16> -> tensor<1x64xbf16>
  %y = graph.linear %n, %w : tensor<1x64xbf16>, tensor<32x64xbf16> -> tensor<1x32xbf16>
  graph.return %n, %y : tensor<1x64xbf16>, tensor<1x32xbf16>
}
