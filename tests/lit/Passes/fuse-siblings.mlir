// RUN: %mtc-opt %s --mtc-fuse | FileCheck %s
// RUN: %mtc-opt %s --mtc-fuse=explain=true -verify-diagnostics -o /dev/null

// Horizontal fusion (passes/FuseSiblings.cpp): a contraction whose result
// another contraction of the same activations reads in its epilogue joins
// it as one kernel.contract over both weights (B and its siblings), where
// each alone starts on simt or mma. The merged epilogue computes the first
// contraction's result from its sum, with its rounding, where the second
// read it. Then the cases that stay two kernels, each with its remark.

// SwiGLU at M = 1: gate's sum is acc0, up's acc1; gate's scale, rounding
// and silu, then the product.
// CHECK-LABEL: graph.func @swiglu_m1(
// CHECK:         %a = kernel.contract %x, %w1 siblings(%w3 : tensor<96x64xi8>) epilogue(%s3, %s1 : tensor<96xbf16>, tensor<96xbf16>)
// CHECK-SAME:      nodes = ["w1f", "g0", "g", "w3f", "u0", "u", "sg", "a"]
// CHECK:         ^bb0(%acc0: f32, %acc1: f32, %e0: bf16, %e1: bf16):
// CHECK:           %[[G0:.*]] = arith.truncf %acc0 : f32 to bf16
// CHECK:           %[[S1:.*]] = arith.extf %e1 : bf16 to f32
// CHECK:           %[[U0:.*]] = arith.truncf %acc1 : f32 to bf16
// CHECK:           math.exp
// CHECK:           kernel.yield
// CHECK-NOT:     kernel.contract
// CHECK:         graph.return %a

// Three contractions combined by two epilogues join as one over three
// weights.
// CHECK-LABEL: graph.func @three_m3(
// CHECK:         kernel.contract %x, %w2 siblings(%w1, %w3 : tensor<96x64xbf16>, tensor<96x64xbf16>)
// CHECK:         ^bb0(%acc0: f32, %acc1: f32, %acc2: f32):
// CHECK-NOT:     kernel.contract

// Apart: M = 64 starts on the tiled kind; a bf16 beside an int8 weight; a
// first result with another reader; different activations; int4 weights
// with scales in groups of different sizes; a first result read
// transposed.
// CHECK-LABEL: graph.func @tiled_m64(
// CHECK-COUNT-2: kernel.contract
// CHECK-NOT:     siblings
// CHECK-LABEL: graph.func @types(
// CHECK-COUNT-2: kernel.contract
// CHECK-LABEL: graph.func @readers(
// CHECK-COUNT-2: kernel.contract
// CHECK-LABEL: graph.func @activations(
// CHECK-COUNT-2: kernel.contract
// int4 weights with group-wise scales join: each sibling's scales come in
// sibling_b_inputs, read through the same b_maps.
// CHECK-LABEL: graph.func @int4(
// CHECK:         kernel.contract %x, %w3 b_inputs(%s3 : tensor<96x2xbf16>) siblings(%w1 : tensor<96x256xi4>) sibling_b_inputs(%s1 : tensor<96x2xbf16>)
// CHECK-SAME:      b_maps = [#map{{[0-9]*}}]
// CHECK:         ^bb0(%acc0: f32, %acc1: f32):
// CHECK-NOT:     kernel.contract
// CHECK-LABEL: graph.func @int4_groups(
// CHECK-COUNT-2: kernel.contract
// CHECK-LABEL: graph.func @transposed(
// CHECK-COUNT-2: kernel.contract
// CHECK-NOT:     siblings

graph.func @swiglu_m1(%x: tensor<1x64xbf16>, %w1: tensor<96x64xi8>, %s1: tensor<96xbf16>, %w3: tensor<96x64xi8>, %s3: tensor<96xbf16>) -> tensor<1x96xbf16> {
  %w1f = graph.convert %w1 : tensor<96x64xi8> -> tensor<96x64xbf16>
  %g0 = graph.linear %x, %w1f : tensor<1x64xbf16>, tensor<96x64xbf16> -> tensor<1x96xbf16>
  %g = graph.mul %g0, %s1 : tensor<1x96xbf16>, tensor<96xbf16> -> tensor<1x96xbf16>
  %w3f = graph.convert %w3 : tensor<96x64xi8> -> tensor<96x64xbf16>
  %u0 = graph.linear %x, %w3f : tensor<1x64xbf16>, tensor<96x64xbf16> -> tensor<1x96xbf16>
  %u = graph.mul %u0, %s3 : tensor<1x96xbf16>, tensor<96xbf16> -> tensor<1x96xbf16>
  %sg = graph.silu %g : tensor<1x96xbf16> -> tensor<1x96xbf16>
  // expected-remark@+1 {{kernel 0 (contract) computes 8 nodes: w1f, g0, g, w3f, u0, u, sg, a; it reads 2 weights with the same activations (horizontal fusion), one sum per weight into its epilogue; its epilogue reads 2 input(s)}}
  %a = graph.mul %sg, %u : tensor<1x96xbf16>, tensor<1x96xbf16> -> tensor<1x96xbf16>
  graph.return %a : tensor<1x96xbf16>
}
graph.func @three_m3(%x: tensor<3x64xbf16>, %w1: tensor<96x64xbf16>, %w2: tensor<96x64xbf16>, %w3: tensor<96x64xbf16>) -> tensor<3x96xbf16> {
  %p = graph.linear %x, %w1 : tensor<3x64xbf16>, tensor<96x64xbf16> -> tensor<3x96xbf16>
  %q = graph.linear %x, %w2 : tensor<3x64xbf16>, tensor<96x64xbf16> -> tensor<3x96xbf16>
  %pq = graph.add %p, %q : tensor<3x96xbf16>, tensor<3x96xbf16> -> tensor<3x96xbf16>
  %r = graph.linear %x, %w3 : tensor<3x64xbf16>, tensor<96x64xbf16> -> tensor<3x96xbf16>
  // expected-remark@+1 {{kernel 0 (contract) computes 5 nodes: q, p, pq, r, y; it reads 3 weights with the same activations (horizontal fusion), one sum per weight into its epilogue}}
  %y = graph.mul %pq, %r : tensor<3x96xbf16>, tensor<3x96xbf16> -> tensor<3x96xbf16>
  graph.return %y : tensor<3x96xbf16>
}
graph.func @tiled_m64(%x: tensor<64x4096xbf16>, %w1: tensor<14336x4096xi8>, %w3: tensor<14336x4096xi8>) -> tensor<64x14336xbf16> {
  %w1f = graph.convert %w1 : tensor<14336x4096xi8> -> tensor<14336x4096xbf16>
  // expected-remark@+2 {{kernel 0 (contract) computes 2 nodes: w1f, g}}
  // expected-remark@+1 {{'g' ([64, 14336] bf16, 1792 KiB) is written by kernel 0 and read by kernel 1: another contraction of the same activations reads it in its epilogue, but they stay two kernels: the contractions start on the tiled kind, which stages one weight in shared memory (siblings run on simt or mma)}}
  %g = graph.linear %x, %w1f : tensor<64x4096xbf16>, tensor<14336x4096xbf16> -> tensor<64x14336xbf16>
  %w3f = graph.convert %w3 : tensor<14336x4096xi8> -> tensor<14336x4096xbf16>
  %u = graph.linear %x, %w3f : tensor<64x4096xbf16>, tensor<14336x4096xbf16> -> tensor<64x14336xbf16>
  %sg = graph.silu %g : tensor<64x14336xbf16> -> tensor<64x14336xbf16>
  // expected-remark@+1 {{kernel 1 (contract) computes 4 nodes: sg, w3f, u, a; its epilogue reads 1 input(s)}}
  %a = graph.mul %sg, %u : tensor<64x14336xbf16>, tensor<64x14336xbf16> -> tensor<64x14336xbf16>
  graph.return %a : tensor<64x14336xbf16>
}
graph.func @types(%x: tensor<1x64xbf16>, %w1: tensor<96x64xi8>, %w3: tensor<96x64xbf16>) -> tensor<1x96xbf16> {
  %w1f = graph.convert %w1 : tensor<96x64xi8> -> tensor<96x64xbf16>
  %g = graph.linear %x, %w1f : tensor<1x64xbf16>, tensor<96x64xbf16> -> tensor<1x96xbf16>
  // expected-remark@+2 {{kernel 0 (contract) computes 1 node: u}}
  // expected-remark@+1 {{'u' ([1, 96] bf16, 192 B) is written by kernel 0 and read by kernel 1: another contraction of the same activations reads it in its epilogue, but they stay two kernels: the weights differ in shape or type}}
  %u = graph.linear %x, %w3 : tensor<1x64xbf16>, tensor<96x64xbf16> -> tensor<1x96xbf16>
  // expected-remark@+1 {{kernel 1 (contract) computes 3 nodes: w1f, g, a; its epilogue reads 1 input(s)}}
  %a = graph.mul %g, %u : tensor<1x96xbf16>, tensor<1x96xbf16> -> tensor<1x96xbf16>
  graph.return %a : tensor<1x96xbf16>
}
graph.func @readers(%x: tensor<1x64xbf16>, %w1: tensor<96x64xi8>, %w3: tensor<96x64xi8>, %b: tensor<96xbf16>) -> (tensor<1x96xbf16>, tensor<1x96xbf16>) {
  %w1f = graph.convert %w1 : tensor<96x64xi8> -> tensor<96x64xbf16>
  // expected-remark@+3 {{kernel 0 (contract) computes 2 nodes: w1f, g}}
  // expected-remark@+2 {{'g' ([1, 96] bf16, 192 B) is written by kernel 0 and read by kernel 2: 2 kernels read it: a value is computed once, not once per reader (only plain conversions are recomputed)}}
  // expected-remark@+1 {{'g' ([1, 96] bf16, 192 B) is written by kernel 0 and read by kernel 1: another contraction of the same activations reads it in its epilogue, but they stay two kernels: the first contraction's result has other readers}}
  %g = graph.linear %x, %w1f : tensor<1x64xbf16>, tensor<96x64xbf16> -> tensor<1x96xbf16>
  %w3f = graph.convert %w3 : tensor<96x64xi8> -> tensor<96x64xbf16>
  %u = graph.linear %x, %w3f : tensor<1x64xbf16>, tensor<96x64xbf16> -> tensor<1x96xbf16>
  // expected-remark@+1 {{kernel 1 (contract) computes 3 nodes: w3f, u, a; its epilogue reads 1 input(s)}}
  %a = graph.mul %g, %u : tensor<1x96xbf16>, tensor<1x96xbf16> -> tensor<1x96xbf16>
  // expected-remark@+1 {{kernel 2 (elementwise) computes 1 node: c}}
  %c = graph.add %g, %b : tensor<1x96xbf16>, tensor<96xbf16> -> tensor<1x96xbf16>
  graph.return %a, %c : tensor<1x96xbf16>, tensor<1x96xbf16>
}
graph.func @activations(%x: tensor<1x64xbf16>, %y: tensor<1x64xbf16>, %w1: tensor<96x64xi8>, %w3: tensor<96x64xi8>) -> tensor<1x96xbf16> {
  %w1f = graph.convert %w1 : tensor<96x64xi8> -> tensor<96x64xbf16>
  %g = graph.linear %x, %w1f : tensor<1x64xbf16>, tensor<96x64xbf16> -> tensor<1x96xbf16>
  %w3f = graph.convert %w3 : tensor<96x64xi8> -> tensor<96x64xbf16>
  // expected-remark@+2 {{kernel 0 (contract) computes 2 nodes: w3f, u}}
  // expected-remark@+1 {{'u' ([1, 96] bf16, 192 B) is written by kernel 0 and read by kernel 1: another contraction's epilogue reads it: only elementwise producers join an epilogue, and only a contraction of the same activations joins as a sibling}}
  %u = graph.linear %y, %w3f : tensor<1x64xbf16>, tensor<96x64xbf16> -> tensor<1x96xbf16>
  // expected-remark@+1 {{kernel 1 (contract) computes 3 nodes: w1f, g, a; its epilogue reads 1 input(s)}}
  %a = graph.mul %g, %u : tensor<1x96xbf16>, tensor<1x96xbf16> -> tensor<1x96xbf16>
  graph.return %a : tensor<1x96xbf16>
}
graph.func @int4(%x: tensor<1x256xbf16>, %w1: tensor<96x256xi4>, %s1: tensor<96x2xbf16>, %w3: tensor<96x256xi4>, %s3: tensor<96x2xbf16>) -> tensor<1x96xbf16> {
  %w1f = graph.convert %w1 : tensor<96x256xi4> -> tensor<96x256xbf16>
  %s1r = graph.repeat %s1 {group = 128 : i64} : tensor<96x2xbf16> -> tensor<96x256xbf16>
  %w1d = graph.mul %w1f, %s1r : tensor<96x256xbf16>, tensor<96x256xbf16> -> tensor<96x256xbf16>
  %g = graph.linear %x, %w1d : tensor<1x256xbf16>, tensor<96x256xbf16> -> tensor<1x96xbf16>
  %w3f = graph.convert %w3 : tensor<96x256xi4> -> tensor<96x256xbf16>
  %s3r = graph.repeat %s3 {group = 128 : i64} : tensor<96x2xbf16> -> tensor<96x256xbf16>
  %w3d = graph.mul %w3f, %s3r : tensor<96x256xbf16>, tensor<96x256xbf16> -> tensor<96x256xbf16>
  %u = graph.linear %x, %w3d : tensor<1x256xbf16>, tensor<96x256xbf16> -> tensor<1x96xbf16>
  // expected-remark@+1 {{kernel 0 (contract) computes 9 nodes: s3r, w3f, w3d, u, s1r, w1f, w1d, g, a; it reads 2 weights with the same activations (horizontal fusion), one sum per weight into its epilogue; the weight's side dequantizes with 1 input(s) read per row or group}}
  %a = graph.mul %g, %u : tensor<1x96xbf16>, tensor<1x96xbf16> -> tensor<1x96xbf16>
  graph.return %a : tensor<1x96xbf16>
}
graph.func @int4_groups(%x: tensor<1x256xbf16>, %w1: tensor<96x256xi4>, %s1: tensor<96x2xbf16>, %w3: tensor<96x256xi4>, %s3: tensor<96x4xbf16>) -> tensor<1x96xbf16> {
  %w1f = graph.convert %w1 : tensor<96x256xi4> -> tensor<96x256xbf16>
  %s1r = graph.repeat %s1 {group = 128 : i64} : tensor<96x2xbf16> -> tensor<96x256xbf16>
  %w1d = graph.mul %w1f, %s1r : tensor<96x256xbf16>, tensor<96x256xbf16> -> tensor<96x256xbf16>
  %g = graph.linear %x, %w1d : tensor<1x256xbf16>, tensor<96x256xbf16> -> tensor<1x96xbf16>
  %w3f = graph.convert %w3 : tensor<96x256xi4> -> tensor<96x256xbf16>
  %s3r = graph.repeat %s3 {group = 64 : i64} : tensor<96x4xbf16> -> tensor<96x256xbf16>
  %w3d = graph.mul %w3f, %s3r : tensor<96x256xbf16>, tensor<96x256xbf16> -> tensor<96x256xbf16>
  // expected-remark@+2 {{kernel 0 (contract) computes 4 nodes: s3r, w3f, w3d, u; the weight's side dequantizes with 1 input(s) read per row or group}}
  // expected-remark@+1 {{'u' ([1, 96] bf16, 192 B) is written by kernel 0 and read by kernel 1: another contraction of the same activations reads it in its epilogue, but they stay two kernels: their weights' b inputs (group-wise scales and zeros) differ in number, type or indexing}}
  %u = graph.linear %x, %w3d : tensor<1x256xbf16>, tensor<96x256xbf16> -> tensor<1x96xbf16>
  // expected-remark@+1 {{kernel 1 (contract) computes 5 nodes: s1r, w1f, w1d, g, a; the weight's side dequantizes with 1 input(s) read per row or group; its epilogue reads 1 input(s)}}
  %a = graph.mul %g, %u : tensor<1x96xbf16>, tensor<1x96xbf16> -> tensor<1x96xbf16>
  graph.return %a : tensor<1x96xbf16>
}
graph.func @transposed(%x: tensor<4x64xbf16>, %w1: tensor<4x64xi8>, %w3: tensor<4x64xi8>) -> tensor<4x4xbf16> {
  %w1f = graph.convert %w1 : tensor<4x64xi8> -> tensor<4x64xbf16>
  // expected-remark@+2 {{kernel 0 (contract) computes 2 nodes: w1f, g}}
  // expected-remark@+1 {{'g' ([4, 4] bf16, 32 B) is written by kernel 0 and read by kernel 1: another contraction of the same activations reads it in its epilogue, but they stay two kernels: the second contraction's epilogue reads the first's result at other outputs than its own (a transposed or broadcast read)}}
  %g = graph.linear %x, %w1f : tensor<4x64xbf16>, tensor<4x64xbf16> -> tensor<4x4xbf16>
  %gt = graph.transpose %g : tensor<4x4xbf16> -> tensor<4x4xbf16>
  %w3f = graph.convert %w3 : tensor<4x64xi8> -> tensor<4x64xbf16>
  %u = graph.linear %x, %w3f : tensor<4x64xbf16>, tensor<4x64xbf16> -> tensor<4x4xbf16>
  // expected-remark@+1 {{kernel 1 (contract) computes 4 nodes: gt, w3f, u, a; its epilogue reads 1 input(s)}}
  %a = graph.mul %gt, %u : tensor<4x4xbf16>, tensor<4x4xbf16> -> tensor<4x4xbf16>
  graph.return %a : tensor<4x4xbf16>
}
