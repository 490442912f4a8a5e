// RUN: %mtc-opt %s --mtc-fuse | FileCheck %s

// Row reductions (docs/graph-format.md's sum and mean): what fuses into a
// kernel.reduce and what does not.

// CHECK-DAG: #[[$ID:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[$COL:.*]] = affine_map<(d0, d1) -> (d1)>
// CHECK-DAG: #[[$ROWSTAT:.*]] = affine_map<(d0, d1) -> (d0, 0)>

// RMSNorm: the conversion of x feeds both the sum of squares and the
// scaling, so it is recomputed in each instead of written once; the square
// moves into the reduction's body; / K, + eps and rsqrt run once per row in
// its epilogue (rsqrt is not recomputed for each element it scales); the
// scaling, the rounding to bf16 and the weight are the reduction's apply:
// one kernel, and the statistic is never written.

// CHECK-LABEL: graph.func @rms_norm(
// CHECK-SAME:    %[[X:.*]]: tensor<3x64xbf16>, %[[G:.*]]: tensor<64xbf16>)
// CHECK:         %[[Y:.*]] = kernel.reduce %[[X]] : tensor<3x64xbf16> epilogue() apply_inputs(%[[G]], %[[X]] : tensor<64xbf16>, tensor<3x64xbf16>)
// CHECK-SAME:      apply_maps = [#[[$COL]], #[[$ID]]]
// CHECK-SAME:      extent = 64 : i64, indexing_maps = [#[[$ID]]], nodes = ["xf", "eps", "sq", "ms", "e", "r", "n", "nb", "y"]} -> tensor<3x64xbf16> body {
// CHECK-NEXT:    ^bb0(%[[IN:.*]]: bf16):
// CHECK-NEXT:      %[[XF:.*]] = arith.extf %[[IN]] : bf16 to f32
// CHECK-NEXT:      %[[SQ:.*]] = arith.mulf %[[XF]], %[[XF]] : f32
// CHECK-NEXT:      kernel.yield %[[SQ]] : f32
// CHECK-NEXT:    } epilogue {
// CHECK-NEXT:    ^bb0(%[[SUM:.*]]: f32):
// CHECK-DAG:       %[[EPS:.*]] = arith.constant 9.99999974E-6 : f32
// CHECK-DAG:       %[[K:.*]] = arith.constant 6.400000e+01 : f32
// CHECK:           %[[MS:.*]] = arith.divf %[[SUM]], %[[K]] : f32
// CHECK-NEXT:      %[[E:.*]] = arith.addf %[[MS]], %[[EPS]] : f32
// CHECK-NEXT:      %[[RS:.*]] = math.rsqrt %[[E]] : f32
// CHECK-NEXT:      kernel.yield %[[RS]] : f32
// CHECK-NEXT:    } apply {
// CHECK-NEXT:    ^bb0(%[[GA:.*]]: bf16, %[[XA:.*]]: bf16, %[[STAT:.*]]: f32):
// CHECK-NEXT:      %[[XF2:.*]] = arith.extf %[[XA]] : bf16 to f32
// CHECK-NEXT:      %[[N:.*]] = arith.mulf %[[XF2]], %[[STAT]] : f32
// CHECK-NEXT:      %[[NB:.*]] = arith.truncf %[[N]] : f32 to bf16
// CHECK-NOT:       math.rsqrt
// CHECK:           kernel.yield %{{.*}} : bf16
// CHECK-NEXT:    }
// CHECK-NEXT:    graph.return %[[Y]]
graph.func @rms_norm(%x: tensor<3x64xbf16>, %g: tensor<64xbf16>) -> tensor<3x64xbf16> {
  %xf = graph.convert %x : tensor<3x64xbf16> -> tensor<3x64xf32>
  %sq = graph.mul %xf, %xf : tensor<3x64xf32>, tensor<3x64xf32> -> tensor<3x64xf32>
  %ms = graph.mean %sq : tensor<3x64xf32> -> tensor<3x1xf32>
  %eps = graph.constant 1.0e-05 : tensor<1xf32>
  %e = graph.add %ms, %eps : tensor<3x1xf32>, tensor<1xf32> -> tensor<3x1xf32>
  %r = graph.rsqrt %e : tensor<3x1xf32> -> tensor<3x1xf32>
  %n = graph.mul %xf, %r : tensor<3x64xf32>, tensor<3x1xf32> -> tensor<3x64xf32>
  %nb = graph.convert %n : tensor<3x64xf32> -> tensor<3x64xbf16>
  %y = graph.mul %nb, %g : tensor<3x64xbf16>, tensor<64xbf16> -> tensor<3x64xbf16>
  graph.return %y : tensor<3x64xbf16>
}

// A bf16 mean rounds once, in the epilogue, after the division.

// CHECK-LABEL: graph.func @mean_bf16(
// CHECK:         kernel.reduce
// CHECK:         } epilogue {
// CHECK-NEXT:    ^bb0(%[[SUM:.*]]: f32):
// CHECK-NEXT:      %[[K:.*]] = arith.constant 6.400000e+01 : f32
// CHECK-NEXT:      %[[M:.*]] = arith.divf %[[SUM]], %[[K]] : f32
// CHECK-NEXT:      %[[T:.*]] = arith.truncf %[[M]] : f32 to bf16
// CHECK-NEXT:      kernel.yield %[[T]] : bf16
graph.func @mean_bf16(%x: tensor<3x64xbf16>) -> tensor<3x1xbf16> {
  %ms = graph.mean %x : tensor<3x64xbf16> -> tensor<3x1xbf16>
  graph.return %ms : tensor<3x1xbf16>
}

// Must not fuse: a producer that something else also reads stays its own
// kernel (its result is written once and read twice), and a reduction whose
// result is also returned keeps its consumer out of its epilogue.

// CHECK-LABEL: graph.func @shared_operands(
// CHECK:         %[[P:.*]] = kernel.elementwise %{{.*}}, %{{.*}} : {{.*}} nodes = ["p"]}
// CHECK:         %[[S:.*]] = kernel.reduce %[[P]] : {{.*}} nodes = ["s"]}
// CHECK:         %[[T:.*]] = kernel.elementwise %[[S]] : {{.*}} nodes = ["t"]}
// CHECK:         graph.return %[[P]], %[[S]], %[[T]]
graph.func @shared_operands(%a: tensor<4x32xf32>, %b: tensor<4x32xf32>)
    -> (tensor<4x32xf32>, tensor<4x1xf32>, tensor<4x1xf32>) {
  %p = graph.mul %a, %b : tensor<4x32xf32>, tensor<4x32xf32> -> tensor<4x32xf32>
  %s = graph.sum %p : tensor<4x32xf32> -> tensor<4x1xf32>
  %t = graph.relu %s : tensor<4x1xf32> -> tensor<4x1xf32>
  graph.return %p, %s, %t : tensor<4x32xf32>, tensor<4x1xf32>, tensor<4x1xf32>
}

// A consumer over a larger space than the row (the broadcast back against
// x) is not an epilogue: it reads the statistic once per row, and becomes
// the reduction's apply.

// CHECK-LABEL: graph.func @broadcast_consumer(
// CHECK:         %[[Y:.*]] = kernel.reduce %{{.*}} apply_inputs(
// CHECK-SAME:      -> tensor<4x32xf32> body {
// CHECK:         } apply {
// CHECK-NEXT:    ^bb0(%[[A:.*]]: f32, %[[ST:.*]]: f32):
// CHECK-NEXT:      arith.subf %[[A]], %[[ST]] : f32
// CHECK-NOT:     kernel.elementwise
// CHECK:         graph.return %[[Y]]
graph.func @broadcast_consumer(%x: tensor<4x32xf32>) -> tensor<4x32xf32> {
  %s = graph.sum %x : tensor<4x32xf32> -> tensor<4x1xf32>
  %y = graph.sub %x, %s : tensor<4x32xf32>, tensor<4x1xf32> -> tensor<4x32xf32>
  graph.return %y : tensor<4x32xf32>
}

// LayerNorm: two reductions, each applied to its rows; the second sums the
// rows the first wrote (two kernels, not four).

// CHECK-LABEL: graph.func @layer_norm(
// CHECK:         %[[C:.*]] = kernel.reduce %{{.*}} apply_inputs({{.*}} nodes = ["m", "c"]} -> tensor<4x32xf32>
// CHECK:         %[[Y:.*]] = kernel.reduce %[[C]] : {{.*}} apply_inputs(%[[C]] : {{.*}} -> tensor<4x32xf32>
// CHECK-NOT:     kernel.elementwise
// CHECK:         graph.return %[[Y]]
graph.func @layer_norm(%x: tensor<4x32xf32>) -> tensor<4x32xf32> {
  %m = graph.mean %x : tensor<4x32xf32> -> tensor<4x1xf32>
  %c = graph.sub %x, %m : tensor<4x32xf32>, tensor<4x1xf32> -> tensor<4x32xf32>
  %sq = graph.mul %c, %c : tensor<4x32xf32>, tensor<4x32xf32> -> tensor<4x32xf32>
  %v = graph.mean %sq : tensor<4x32xf32> -> tensor<4x1xf32>
  %eps = graph.constant 1.0e-05 : tensor<1xf32>
  %e = graph.add %v, %eps : tensor<4x1xf32>, tensor<1xf32> -> tensor<4x1xf32>
  %r = graph.rsqrt %e : tensor<4x1xf32> -> tensor<4x1xf32>
  %y = graph.mul %c, %r : tensor<4x32xf32>, tensor<4x1xf32> -> tensor<4x32xf32>
  graph.return %y : tensor<4x32xf32>
}

// Must not apply: a statistic two kernels read (it is computed once), and
// a consumer over another space than the rows summed.

// CHECK-LABEL: graph.func @two_readers(
// CHECK:         %[[S:.*]] = kernel.reduce {{.*}} -> tensor<4x1xf32>
// CHECK:         kernel.elementwise %{{.*}}, %[[S]]
// CHECK:         kernel.elementwise %{{.*}}, %[[S]]
graph.func @two_readers(%x: tensor<4x32xf32>) -> (tensor<4x32xf32>, tensor<4x32xf32>) {
  %s = graph.sum %x : tensor<4x32xf32> -> tensor<4x1xf32>
  %a = graph.sub %x, %s : tensor<4x32xf32>, tensor<4x1xf32> -> tensor<4x32xf32>
  %b = graph.mul %x, %s : tensor<4x32xf32>, tensor<4x1xf32> -> tensor<4x32xf32>
  graph.return %a, %b : tensor<4x32xf32>, tensor<4x32xf32>
}

// CHECK-LABEL: graph.func @other_space(
// CHECK:         %[[S:.*]] = kernel.reduce {{.*}} -> tensor<4x1xf32>
// CHECK:         kernel.elementwise %{{.*}}, %[[S]] : {{.*}} -> tensor<4x16xf32>
graph.func @other_space(%x: tensor<4x32xf32>, %y: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %s = graph.sum %x : tensor<4x32xf32> -> tensor<4x1xf32>
  %a = graph.sub %y, %s : tensor<4x16xf32>, tensor<4x1xf32> -> tensor<4x16xf32>
  graph.return %a : tensor<4x16xf32>
}
