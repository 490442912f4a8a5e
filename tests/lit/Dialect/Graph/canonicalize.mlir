// RUN: %mtc-opt %s --canonicalize --split-input-file | FileCheck %s

// convert(convert(x)) becomes one convert when the inner one is exact:
// every i8 is a bf16, so i8 -> bf16 -> f32 is i8 -> f32.

// CHECK-LABEL: graph.func @exact_chain(
// CHECK-SAME:    %[[W:.*]]: tensor<4x8xi8>)
// CHECK-NEXT:    %[[F:.*]] = graph.convert %[[W]] : tensor<4x8xi8> -> tensor<4x8xf32>
// CHECK-NEXT:    graph.return %[[F]]
graph.func @exact_chain(%w: tensor<4x8xi8>) -> tensor<4x8xf32> {
  %b = graph.convert %w : tensor<4x8xi8> -> tensor<4x8xbf16>
  %f = graph.convert %b : tensor<4x8xbf16> -> tensor<4x8xf32>
  graph.return %f : tensor<4x8xf32>
}

// -----

// f16 -> f32 is exact too, and the intermediate survives when it has
// another user.

// CHECK-LABEL: graph.func @exact_chain_shared(
// CHECK-SAME:    %[[X:.*]]: tensor<4xf16>)
// CHECK-NEXT:    %[[W:.*]] = graph.convert %[[X]] : tensor<4xf16> -> tensor<4xf32>
// CHECK-NEXT:    %[[N:.*]] = graph.convert %[[X]] : tensor<4xf16> -> tensor<4xbf16>
// CHECK-NEXT:    graph.return %[[W]], %[[N]]
graph.func @exact_chain_shared(%x: tensor<4xf16>) -> (tensor<4xf32>, tensor<4xbf16>) {
  %wide = graph.convert %x : tensor<4xf16> -> tensor<4xf32>
  %n = graph.convert %wide : tensor<4xf32> -> tensor<4xbf16>
  graph.return %wide, %n : tensor<4xf32>, tensor<4xbf16>
}

// -----

// f32 -> bf16 rounds: the chain must stay.

// CHECK-LABEL: graph.func @rounding_chain(
// CHECK-SAME:    %[[X:.*]]: tensor<16xf32>)
// CHECK-NEXT:    %[[B:.*]] = graph.convert %[[X]] : tensor<16xf32> -> tensor<16xbf16>
// CHECK-NEXT:    %[[F:.*]] = graph.convert %[[B]] : tensor<16xbf16> -> tensor<16xf32>
// CHECK-NEXT:    graph.return %[[F]]
graph.func @rounding_chain(%x: tensor<16xf32>) -> tensor<16xf32> {
  %b = graph.convert %x : tensor<16xf32> -> tensor<16xbf16>
  %f = graph.convert %b : tensor<16xbf16> -> tensor<16xf32>
  graph.return %f : tensor<16xf32>
}

// -----

// bf16 -> i8 truncates and saturates: not exact either.

// CHECK-LABEL: graph.func @saturating_chain(
// CHECK:         graph.convert %{{.*}} : tensor<16xbf16> -> tensor<16xi8>
// CHECK-NEXT:    graph.convert %{{.*}} : tensor<16xi8> -> tensor<16xf32>
graph.func @saturating_chain(%x: tensor<16xbf16>) -> tensor<16xf32> {
  %q = graph.convert %x : tensor<16xbf16> -> tensor<16xi8>
  %f = graph.convert %q : tensor<16xi8> -> tensor<16xf32>
  graph.return %f : tensor<16xf32>
}

// -----

// i4 -> i8 is exact too: an i4 weight converted through i8 is converted
// directly.

// CHECK-LABEL: graph.func @i4_exact_chain(
// CHECK-SAME:    %[[W:.*]]: tensor<4x8xi4>)
// CHECK-NEXT:    %[[F:.*]] = graph.convert %[[W]] : tensor<4x8xi4> -> tensor<4x8xbf16>
// CHECK-NEXT:    graph.return %[[F]]
graph.func @i4_exact_chain(%w: tensor<4x8xi4>) -> tensor<4x8xbf16> {
  %q = graph.convert %w : tensor<4x8xi4> -> tensor<4x8xi8>
  %f = graph.convert %q : tensor<4x8xi8> -> tensor<4x8xbf16>
  graph.return %f : tensor<4x8xbf16>
}

// -----

// A convert to the type it already has is a no-op.

// CHECK-LABEL: graph.func @same_type(
// CHECK-SAME:    %[[X:.*]]: tensor<2x3xbf16>)
// CHECK-NOT:     graph.convert
// CHECK:         graph.return %[[X]] : tensor<2x3xbf16>
graph.func @same_type(%x: tensor<2x3xbf16>) -> tensor<2x3xbf16> {
  %c = graph.convert %x : tensor<2x3xbf16> -> tensor<2x3xbf16>
  graph.return %c : tensor<2x3xbf16>
}

// -----

// CHECK-LABEL: graph.func @double_transpose(
// CHECK-SAME:    %[[X:.*]]: tensor<2x3x5xf32>)
// CHECK-NOT:     graph.transpose
// CHECK:         graph.return %[[X]] : tensor<2x3x5xf32>
graph.func @double_transpose(%x: tensor<2x3x5xf32>) -> tensor<2x3x5xf32> {
  %t = graph.transpose %x : tensor<2x3x5xf32> -> tensor<2x5x3xf32>
  %tt = graph.transpose %t : tensor<2x5x3xf32> -> tensor<2x3x5xf32>
  graph.return %tt : tensor<2x3x5xf32>
}

// -----

// A single transpose stays.

// CHECK-LABEL: graph.func @single_transpose(
// CHECK:         graph.transpose
graph.func @single_transpose(%x: tensor<3x5xf32>) -> tensor<5x3xf32> {
  %t = graph.transpose %x : tensor<3x5xf32> -> tensor<5x3xf32>
  graph.return %t : tensor<5x3xf32>
}

// -----

// matmul(a, transpose(b)) keeps the weight in its stored [N, K] layout.

// CHECK-LABEL: graph.func @matmul_of_transpose(
// CHECK-SAME:    %[[A:.*]]: tensor<4x64xbf16>, %[[B:.*]]: tensor<32x64xbf16>)
// CHECK-NOT:     graph.transpose
// CHECK:         %[[L:.*]] = graph.linear %[[A]], %[[B]] : tensor<4x64xbf16>, tensor<32x64xbf16> -> tensor<4x32xbf16>
// CHECK-NOT:     graph.matmul
// CHECK:         graph.return %[[L]]
graph.func @matmul_of_transpose(%a: tensor<4x64xbf16>, %b: tensor<32x64xbf16>) -> tensor<4x32xbf16> {
  %bt = graph.transpose %b : tensor<32x64xbf16> -> tensor<64x32xbf16>
  %y = graph.matmul %a, %bt : tensor<4x64xbf16>, tensor<64x32xbf16> -> tensor<4x32xbf16>
  graph.return %y : tensor<4x32xbf16>
}

// -----

// CHECK-LABEL: graph.func @linear_of_transpose(
// CHECK-SAME:    %[[X:.*]]: tensor<2x4x64xf16>, %[[B:.*]]: tensor<64x32xf16>)
// CHECK-NOT:     graph.transpose
// CHECK:         %[[M:.*]] = graph.matmul %[[X]], %[[B]] : tensor<2x4x64xf16>, tensor<64x32xf16> -> tensor<2x4x32xf16>
// CHECK-NOT:     graph.linear
// CHECK:         graph.return %[[M]]
graph.func @linear_of_transpose(%x: tensor<2x4x64xf16>, %b: tensor<64x32xf16>) -> tensor<2x4x32xf16> {
  %bt = graph.transpose %b : tensor<64x32xf16> -> tensor<32x64xf16>
  %y = graph.linear %x, %bt : tensor<2x4x64xf16>, tensor<32x64xf16> -> tensor<2x4x32xf16>
  graph.return %y : tensor<2x4x32xf16>
}

// -----

// A 1-D x cannot be a matmul operand: the linear stays.

// CHECK-LABEL: graph.func @linear_of_transpose_1d(
// CHECK-SAME:    %[[X:.*]]: tensor<64xf16>, %[[B:.*]]: tensor<64x32xf16>)
// CHECK:         %[[T:.*]] = graph.transpose %[[B]] : tensor<64x32xf16> -> tensor<32x64xf16>
// CHECK:         %[[Y:.*]] = graph.linear %[[X]], %[[T]] : tensor<64xf16>, tensor<32x64xf16> -> tensor<32xf16>
// CHECK:         graph.return %[[Y]]
graph.func @linear_of_transpose_1d(%x: tensor<64xf16>, %b: tensor<64x32xf16>) -> tensor<32xf16> {
  %bt = graph.transpose %b : tensor<64x32xf16> -> tensor<32x64xf16>
  %y = graph.linear %x, %bt : tensor<64xf16>, tensor<32x64xf16> -> tensor<32xf16>
  graph.return %y : tensor<32xf16>
}

// -----

// Node names survive canonicalization where the node does.

// CHECK-LABEL: graph.func @names(
// CHECK:         %wf = graph.convert
// CHECK:         %y = graph.linear
graph.func @names(%x: tensor<1x64xbf16>, %w: tensor<8x64xi8>) -> tensor<1x8xbf16> {
  %wf = graph.convert %w : tensor<8x64xi8> -> tensor<8x64xbf16>
  %y = graph.linear %x, %wf : tensor<1x64xbf16>, tensor<8x64xbf16> -> tensor<1x8xbf16>
  graph.return %y : tensor<1x8xbf16>
}
