// RUN: %mtc-opt %s | %mtc-opt | FileCheck %s
// RUN: %mtc-opt %s --mlir-print-op-generic --mlir-print-debuginfo | %mtc-opt | FileCheck %s

// Round trip of every graph op, in the custom and in the generic form. Node
// names are NameLocs and print as the SSA names, so they are checked literally
// here: that is what is being tested. The generic form carries them only in
// the locations, hence --mlir-print-debuginfo.

// CHECK-LABEL: graph.func @woq_linear(
// CHECK-SAME:    %x: tensor<1x4096xbf16>, %w: tensor<8192x4096xi8>, %scales: tensor<8192xbf16>) -> tensor<1x8192xbf16>
// CHECK-NEXT:    %wf = graph.convert %w : tensor<8192x4096xi8> -> tensor<8192x4096xbf16>
// CHECK-NEXT:    %y = graph.linear %x, %wf : tensor<1x4096xbf16>, tensor<8192x4096xbf16> -> tensor<1x8192xbf16>
// CHECK-NEXT:    %out = graph.mul %y, %scales : tensor<1x8192xbf16>, tensor<8192xbf16> -> tensor<1x8192xbf16>
// CHECK-NEXT:    graph.return %out : tensor<1x8192xbf16>
graph.func @woq_linear(%x: tensor<1x4096xbf16>, %w: tensor<8192x4096xi8>,
                       %scales: tensor<8192xbf16>) -> tensor<1x8192xbf16> {
  %wf = graph.convert %w : tensor<8192x4096xi8> -> tensor<8192x4096xbf16>
  %y = graph.linear %x, %wf : tensor<1x4096xbf16>, tensor<8192x4096xbf16> -> tensor<1x8192xbf16>
  %out = graph.mul %y, %scales : tensor<1x8192xbf16>, tensor<8192xbf16> -> tensor<1x8192xbf16>
  graph.return %out : tensor<1x8192xbf16>
}

// CHECK-LABEL: graph.func @every_op(
// CHECK-SAME:    %a: tensor<4x8xf32>, %b: tensor<8x16xf32>, %c: tensor<16xf32>, %d: tensor<4x1xf32>)
// CHECK-NEXT:    %mm = graph.matmul %a, %b : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<4x16xf32>
// CHECK-NEXT:    %t = graph.transpose %mm : tensor<4x16xf32> -> tensor<16x4xf32>
// CHECK-NEXT:    %tt = graph.transpose %t : tensor<16x4xf32> -> tensor<4x16xf32>
// CHECK-NEXT:    %s = graph.add %tt, %c : tensor<4x16xf32>, tensor<16xf32> -> tensor<4x16xf32>
// CHECK-NEXT:    %u = graph.sub %s, %d : tensor<4x16xf32>, tensor<4x1xf32> -> tensor<4x16xf32>
// CHECK-NEXT:    %v = graph.mul %d, %u : tensor<4x1xf32>, tensor<4x16xf32> -> tensor<4x16xf32>
// CHECK-NEXT:    %r = graph.relu %v : tensor<4x16xf32> -> tensor<4x16xf32>
// CHECK-NEXT:    %g = graph.silu %r : tensor<4x16xf32> -> tensor<4x16xf32>
// CHECK-NEXT:    %h = graph.convert %g : tensor<4x16xf32> -> tensor<4x16xf16>
// CHECK-NEXT:    %q = graph.convert %h : tensor<4x16xf16> -> tensor<4x16xi8>
// CHECK-NEXT:    graph.return %q : tensor<4x16xi8>
graph.func @every_op(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>, %c: tensor<16xf32>,
                     %d: tensor<4x1xf32>) -> tensor<4x16xi8> {
  %mm = graph.matmul %a, %b : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<4x16xf32>
  %t = graph.transpose %mm : tensor<4x16xf32> -> tensor<16x4xf32>
  %tt = graph.transpose %t : tensor<16x4xf32> -> tensor<4x16xf32>
  %s = graph.add %tt, %c : tensor<4x16xf32>, tensor<16xf32> -> tensor<4x16xf32>
  %u = graph.sub %s, %d : tensor<4x16xf32>, tensor<4x1xf32> -> tensor<4x16xf32>
  %v = graph.mul %d, %u : tensor<4x1xf32>, tensor<4x16xf32> -> tensor<4x16xf32>
  %r = graph.relu %v : tensor<4x16xf32> -> tensor<4x16xf32>
  %g = graph.silu %r : tensor<4x16xf32> -> tensor<4x16xf32>
  %h = graph.convert %g : tensor<4x16xf32> -> tensor<4x16xf16>
  %q = graph.convert %h : tensor<4x16xf16> -> tensor<4x16xi8>
  graph.return %q : tensor<4x16xi8>
}

// Rank-3 activations, batched matmul and transpose, several results (one of
// them an input, one returned twice).

// CHECK-LABEL: graph.func @rank3(
// CHECK-SAME:    %x: tensor<2x8x64xbf16>, %w: tensor<32x64xbf16>, %k: tensor<32x16xbf16>)
// CHECK-SAME:    -> (tensor<2x8x32xbf16>, tensor<2x8x16xbf16>, tensor<2x16x8xbf16>, tensor<2x8x64xbf16>, tensor<2x8x32xbf16>)
// CHECK-NEXT:    %y = graph.linear %x, %w : tensor<2x8x64xbf16>, tensor<32x64xbf16> -> tensor<2x8x32xbf16>
// CHECK-NEXT:    %z = graph.matmul %y, %k : tensor<2x8x32xbf16>, tensor<32x16xbf16> -> tensor<2x8x16xbf16>
// CHECK-NEXT:    %zt = graph.transpose %z : tensor<2x8x16xbf16> -> tensor<2x16x8xbf16>
// CHECK-NEXT:    graph.return %y, %z, %zt, %x, %y : tensor<2x8x32xbf16>, tensor<2x8x16xbf16>, tensor<2x16x8xbf16>, tensor<2x8x64xbf16>, tensor<2x8x32xbf16>
graph.func @rank3(%x: tensor<2x8x64xbf16>, %w: tensor<32x64xbf16>, %k: tensor<32x16xbf16>)
    -> (tensor<2x8x32xbf16>, tensor<2x8x16xbf16>, tensor<2x16x8xbf16>, tensor<2x8x64xbf16>, tensor<2x8x32xbf16>) {
  %y = graph.linear %x, %w : tensor<2x8x64xbf16>, tensor<32x64xbf16> -> tensor<2x8x32xbf16>
  %z = graph.matmul %y, %k : tensor<2x8x32xbf16>, tensor<32x16xbf16> -> tensor<2x8x16xbf16>
  %zt = graph.transpose %z : tensor<2x8x16xbf16> -> tensor<2x16x8xbf16>
  graph.return %y, %z, %zt, %x, %y : tensor<2x8x32xbf16>, tensor<2x8x16xbf16>, tensor<2x16x8xbf16>, tensor<2x8x64xbf16>, tensor<2x8x32xbf16>
}

// A 1-D activation in linear, and values without identifier names, which
// keep the printer's numbering.

// CHECK-LABEL: graph.func @unnamed(
// CHECK-SAME:    %[[X:.*]]: tensor<64xf16>, %[[W:.*]]: tensor<8x64xf16>) -> tensor<8xf16>
// CHECK-NEXT:    %[[Y:.*]] = graph.linear %[[X]], %[[W]] : tensor<64xf16>, tensor<8x64xf16> -> tensor<8xf16>
// CHECK-NEXT:    %[[R:.*]] = graph.relu %[[Y]] : tensor<8xf16> -> tensor<8xf16>
// CHECK-NEXT:    graph.return %[[R]] : tensor<8xf16>
graph.func @unnamed(%0: tensor<64xf16>, %1: tensor<8x64xf16>) -> tensor<8xf16> {
  %2 = graph.linear %0, %1 : tensor<64xf16>, tensor<8x64xf16> -> tensor<8xf16>
  %3 = graph.relu %2 : tensor<8xf16> -> tensor<8xf16>
  graph.return %3 : tensor<8xf16>
}

// A graph may return an input directly.

// CHECK-LABEL: graph.func @identity(
// CHECK-SAME:    %in: tensor<3xi8>) -> tensor<3xi8>
// CHECK-NEXT:    graph.return %in : tensor<3xi8>
graph.func @identity(%in: tensor<3xi8>) -> tensor<3xi8> {
  graph.return %in : tensor<3xi8>
}

// int4 group-wise weights (gpt-fast's form): an i4 input converted, its
// scales and zeros repeated over groups of 128 columns (graph.repeat, whose
// group is an attribute), both dequantization steps, the linear.

// CHECK-LABEL: graph.func @woq_int4(
// CHECK-SAME:    %x: tensor<1x256xbf16>, %w: tensor<64x256xi4>, %scales: tensor<64x2xbf16>, %zeros: tensor<64x2xbf16>) -> tensor<1x64xbf16>
// CHECK-NEXT:    %wf = graph.convert %w : tensor<64x256xi4> -> tensor<64x256xbf16>
// CHECK-NEXT:    %s = graph.repeat %scales {group = 128 : i64} : tensor<64x2xbf16> -> tensor<64x256xbf16>
// CHECK-NEXT:    %z = graph.repeat %zeros {group = 128 : i64} : tensor<64x2xbf16> -> tensor<64x256xbf16>
// CHECK-NEXT:    %ws = graph.mul %wf, %s : tensor<64x256xbf16>, tensor<64x256xbf16> -> tensor<64x256xbf16>
// CHECK-NEXT:    %wd = graph.add %ws, %z : tensor<64x256xbf16>, tensor<64x256xbf16> -> tensor<64x256xbf16>
// CHECK-NEXT:    %y = graph.linear %x, %wd : tensor<1x256xbf16>, tensor<64x256xbf16> -> tensor<1x64xbf16>
// CHECK-NEXT:    graph.return %y : tensor<1x64xbf16>
graph.func @woq_int4(%x: tensor<1x256xbf16>, %w: tensor<64x256xi4>, %scales: tensor<64x2xbf16>,
                     %zeros: tensor<64x2xbf16>) -> tensor<1x64xbf16> {
  %wf = graph.convert %w : tensor<64x256xi4> -> tensor<64x256xbf16>
  %s = graph.repeat %scales {group = 128 : i64} : tensor<64x2xbf16> -> tensor<64x256xbf16>
  %z = graph.repeat %zeros {group = 128 : i64} : tensor<64x2xbf16> -> tensor<64x256xbf16>
  %ws = graph.mul %wf, %s : tensor<64x256xbf16>, tensor<64x256xbf16> -> tensor<64x256xbf16>
  %wd = graph.add %ws, %z : tensor<64x256xbf16>, tensor<64x256xbf16> -> tensor<64x256xbf16>
  %y = graph.linear %x, %wd : tensor<1x256xbf16>, tensor<64x256xbf16> -> tensor<1x64xbf16>
  graph.return %y : tensor<1x64xbf16>
}

// repeat of any rank and dtype, a group of 1 (the identity), and i4
// converted to i8 and f32.

// CHECK-LABEL: graph.func @repeat_and_i4(
// CHECK-SAME:    %t: tensor<2x3x4xf32>, %v: tensor<5xi8>, %q: tensor<6xi4>)
// CHECK-NEXT:    %r = graph.repeat %t {group = 3 : i64} : tensor<2x3x4xf32> -> tensor<2x3x12xf32>
// CHECK-NEXT:    %r1 = graph.repeat %v {group = 1 : i64} : tensor<5xi8> -> tensor<5xi8>
// CHECK-NEXT:    %q8 = graph.convert %q : tensor<6xi4> -> tensor<6xi8>
// CHECK-NEXT:    %qf = graph.convert %q : tensor<6xi4> -> tensor<6xf32>
// CHECK-NEXT:    graph.return %r, %r1, %q8, %qf : tensor<2x3x12xf32>, tensor<5xi8>, tensor<6xi8>, tensor<6xf32>
graph.func @repeat_and_i4(%t: tensor<2x3x4xf32>, %v: tensor<5xi8>, %q: tensor<6xi4>)
    -> (tensor<2x3x12xf32>, tensor<5xi8>, tensor<6xi8>, tensor<6xf32>) {
  %r = graph.repeat %t {group = 3 : i64} : tensor<2x3x4xf32> -> tensor<2x3x12xf32>
  %r1 = graph.repeat %v {group = 1 : i64} : tensor<5xi8> -> tensor<5xi8>
  %q8 = graph.convert %q : tensor<6xi4> -> tensor<6xi8>
  %qf = graph.convert %q : tensor<6xi4> -> tensor<6xf32>
  graph.return %r, %r1, %q8, %qf : tensor<2x3x12xf32>, tensor<5xi8>, tensor<6xi8>, tensor<6xf32>
}

// RMSNorm: the row reductions keep the last dimension as 1, a constant is a
// one-element tensor that broadcasts, rsqrt keeps the shape.

// CHECK-LABEL: graph.func @rms_norm(
// CHECK-SAME:    %x: tensor<3x64xbf16>, %g: tensor<64xbf16>) -> (tensor<3x64xbf16>, tensor<3x1xf32>)
// CHECK-NEXT:    %xf = graph.convert %x : tensor<3x64xbf16> -> tensor<3x64xf32>
// CHECK-NEXT:    %sq = graph.mul %xf, %xf : tensor<3x64xf32>, tensor<3x64xf32> -> tensor<3x64xf32>
// CHECK-NEXT:    %ms = graph.mean %sq : tensor<3x64xf32> -> tensor<3x1xf32>
// CHECK-NEXT:    %ss = graph.sum %sq : tensor<3x64xf32> -> tensor<3x1xf32>
// CHECK-NEXT:    %eps = graph.constant 9.9999997473787516E-6 : tensor<1xf32>
// CHECK-NEXT:    %e = graph.add %ms, %eps : tensor<3x1xf32>, tensor<1xf32> -> tensor<3x1xf32>
// CHECK-NEXT:    %r = graph.rsqrt %e : tensor<3x1xf32> -> tensor<3x1xf32>
// CHECK-NEXT:    %n = graph.mul %xf, %r : tensor<3x64xf32>, tensor<3x1xf32> -> tensor<3x64xf32>
// CHECK-NEXT:    %nb = graph.convert %n : tensor<3x64xf32> -> tensor<3x64xbf16>
// CHECK-NEXT:    %y = graph.mul %nb, %g : tensor<3x64xbf16>, tensor<64xbf16> -> tensor<3x64xbf16>
// CHECK-NEXT:    graph.return %y, %ss : tensor<3x64xbf16>, tensor<3x1xf32>
graph.func @rms_norm(%x: tensor<3x64xbf16>, %g: tensor<64xbf16>) -> (tensor<3x64xbf16>, tensor<3x1xf32>) {
  %xf = graph.convert %x : tensor<3x64xbf16> -> tensor<3x64xf32>
  %sq = graph.mul %xf, %xf : tensor<3x64xf32>, tensor<3x64xf32> -> tensor<3x64xf32>
  %ms = graph.mean %sq : tensor<3x64xf32> -> tensor<3x1xf32>
  %ss = graph.sum %sq : tensor<3x64xf32> -> tensor<3x1xf32>
  %eps = graph.constant 9.9999997473787516E-6 : tensor<1xf32>
  %e = graph.add %ms, %eps : tensor<3x1xf32>, tensor<1xf32> -> tensor<3x1xf32>
  %r = graph.rsqrt %e : tensor<3x1xf32> -> tensor<3x1xf32>
  %n = graph.mul %xf, %r : tensor<3x64xf32>, tensor<3x1xf32> -> tensor<3x64xf32>
  %nb = graph.convert %n : tensor<3x64xf32> -> tensor<3x64xbf16>
  %y = graph.mul %nb, %g : tensor<3x64xbf16>, tensor<64xbf16> -> tensor<3x64xbf16>
  graph.return %y, %ss : tensor<3x64xbf16>, tensor<3x1xf32>
}
