// RUN: %mtc-opt %s --mtc-fuse=explain=true -verify-diagnostics -o /dev/null

// mtc-fuse's explanation (passes/ExplainFusion.cpp): a remark per kernel
// (its nodes, and where they went) and per value written by one kernel and
// read by another (the rule that kept them apart).

// A Llama feed-forward half at M = 8: the norm is one kernel, a reduction
// that applies its statistic to the rows; the scaling is no prologue of the
// projections, which start on mma; gate and up join as one contraction over
// both weights (horizontal fusion); the SwiGLU product is the next
// contraction's operand.
graph.func @ffn(%x: tensor<8x64xbf16>, %g: tensor<64xbf16>, %w1: tensor<96x64xi8>, %s1: tensor<96xbf16>, %w3: tensor<96x64xi8>, %s3: tensor<96xbf16>, %w2: tensor<64x96xi8>, %s2: tensor<64xbf16>) -> tensor<8x64xbf16> {
  %xf = graph.convert %x : tensor<8x64xbf16> -> tensor<8x64xf32>
  %sq = graph.mul %xf, %xf : tensor<8x64xf32>, tensor<8x64xf32> -> tensor<8x64xf32>
  %ms = graph.mean %sq : tensor<8x64xf32> -> tensor<8x1xf32>
  %eps = graph.constant 1.000000e-05 : tensor<1xf32>
  %e = graph.add %ms, %eps : tensor<8x1xf32>, tensor<1xf32> -> tensor<8x1xf32>
  %r = graph.rsqrt %e : tensor<8x1xf32> -> tensor<8x1xf32>
  %nf = graph.mul %xf, %r : tensor<8x64xf32>, tensor<8x1xf32> -> tensor<8x64xf32>
  %nb = graph.convert %nf : tensor<8x64xf32> -> tensor<8x64xbf16>
  // expected-remark@+2 {{kernel 0 (reduce) computes 9 nodes: xf, eps, sq, ms, e, r, nf, nb, n; it applies each row's statistic to the row (reading 2 input(s)) and writes the scaled rows, not the statistic}}
  // expected-remark@+1 {{'n' ([8, 64] bf16, 1024 B) is written by kernel 0 and read by kernel 1: the rows are scaled by their statistic in the reduction's kernel (apply); only an elementwise kernel joins a contraction as its prologue, and this one took none: the contraction starts on a tensor-core kind, where a prologue costs more than the kernel it replaces}}
  %n = graph.mul %nb, %g : tensor<8x64xbf16>, tensor<64xbf16> -> tensor<8x64xbf16>
  %w1f = graph.convert %w1 : tensor<96x64xi8> -> tensor<96x64xbf16>
  %g0 = graph.linear %n, %w1f : tensor<8x64xbf16>, tensor<96x64xbf16> -> tensor<8x96xbf16>
  %gs = graph.mul %g0, %s1 : tensor<8x96xbf16>, tensor<96xbf16> -> tensor<8x96xbf16>
  %w3f = graph.convert %w3 : tensor<96x64xi8> -> tensor<96x64xbf16>
  %u0 = graph.linear %n, %w3f : tensor<8x64xbf16>, tensor<96x64xbf16> -> tensor<8x96xbf16>
  %u = graph.mul %u0, %s3 : tensor<8x96xbf16>, tensor<96xbf16> -> tensor<8x96xbf16>
  %sg = graph.silu %gs : tensor<8x96xbf16> -> tensor<8x96xbf16>
  // expected-remark@+2 {{kernel 1 (contract) computes 8 nodes: w1f, g0, gs, w3f, u0, u, sg, a; it reads 2 weights with the same activations (horizontal fusion), one sum per weight into its epilogue; its epilogue reads 2 input(s)}}
  // expected-remark@+1 {{'a' ([8, 96] bf16, 1536 B) is written by kernel 1 and read by kernel 2: a contraction's result is the operand of the next contraction}}
  %a = graph.mul %sg, %u : tensor<8x96xbf16>, tensor<8x96xbf16> -> tensor<8x96xbf16>
  %w2f = graph.convert %w2 : tensor<64x96xi8> -> tensor<64x96xbf16>
  %d0 = graph.linear %a, %w2f : tensor<8x96xbf16>, tensor<64x96xbf16> -> tensor<8x64xbf16>
  // expected-remark@+1 {{kernel 2 (contract) computes 3 nodes: w2f, d0, dd; its epilogue reads 1 input(s)}}
  %dd = graph.mul %d0, %s2 : tensor<8x64xbf16>, tensor<64xbf16> -> tensor<8x64xbf16>
  graph.return %dd : tensor<8x64xbf16>
}

// At M = 1 the scaling is the projection's prologue, and the projection
// derives the statistic the prologue reads: one kernel.
graph.func @prologue(%x: tensor<1x64xbf16>, %g: tensor<64xbf16>, %w1: tensor<4224x64xi8>) -> tensor<1x4224xbf16> {
  %xf = graph.convert %x : tensor<1x64xbf16> -> tensor<1x64xf32>
  %sq = graph.mul %xf, %xf : tensor<1x64xf32>, tensor<1x64xf32> -> tensor<1x64xf32>
  %ms = graph.mean %sq : tensor<1x64xf32> -> tensor<1x1xf32>
  %r = graph.rsqrt %ms : tensor<1x1xf32> -> tensor<1x1xf32>
  %nf = graph.mul %xf, %r : tensor<1x64xf32>, tensor<1x1xf32> -> tensor<1x64xf32>
  %nb = graph.convert %nf : tensor<1x64xf32> -> tensor<1x64xbf16>
  %n = graph.mul %nb, %g : tensor<1x64xbf16>, tensor<64xbf16> -> tensor<1x64xbf16>
  %w1f = graph.convert %w1 : tensor<4224x64xi8> -> tensor<4224x64xbf16>
  // expected-remark@+1 {{kernel 0 (contract) computes 9 nodes: xf, sq, ms, r, nf, nb, n, w1f, g0; the activations' prologue reads 1 more input(s); each block derives its rows' statistic (a reduction over A's rows) before its first step}}
  %g0 = graph.linear %n, %w1f : tensor<1x64xbf16>, tensor<4224x64xbf16> -> tensor<1x4224xbf16>
  graph.return %g0 : tensor<1x4224xbf16>
}

// Too few outputs (96): each block would stream 256 weight bytes and read
// x's 128-byte row again to sum it; the reduction stays a kernel.
graph.func @small_n(%x: tensor<1x64xbf16>, %g: tensor<64xbf16>, %w1: tensor<96x64xi8>) -> tensor<1x96xbf16> {
  %xf = graph.convert %x : tensor<1x64xbf16> -> tensor<1x64xf32>
  %sq = graph.mul %xf, %xf : tensor<1x64xf32>, tensor<1x64xf32> -> tensor<1x64xf32>
  %ms = graph.mean %sq : tensor<1x64xf32> -> tensor<1x1xf32>
  // expected-remark@+2 {{kernel 0 (reduce) computes 4 nodes: xf, sq, ms, r}}
  // expected-remark@+1 {{'r' ([1, 1] f32, 4 B) is written by kernel 0 and read by kernel 1: the contraction's prologue reads it once per row, and does not derive it itself: each block would read 128 bytes of A's rows to sum them, more than a quarter of the 256 weight bytes it streams}}
  %r = graph.rsqrt %ms : tensor<1x1xf32> -> tensor<1x1xf32>
  %nf = graph.mul %xf, %r : tensor<1x64xf32>, tensor<1x1xf32> -> tensor<1x64xf32>
  %nb = graph.convert %nf : tensor<1x64xf32> -> tensor<1x64xbf16>
  %n = graph.mul %nb, %g : tensor<1x64xbf16>, tensor<64xbf16> -> tensor<1x64xbf16>
  %w1f = graph.convert %w1 : tensor<96x64xi8> -> tensor<96x64xbf16>
  // expected-remark@+1 {{kernel 1 (contract) computes 6 nodes: xf, nf, nb, n, w1f, g0; the activations' prologue reads 2 more input(s)}}
  %g0 = graph.linear %n, %w1f : tensor<1x64xbf16>, tensor<96x64xbf16> -> tensor<1x96xbf16>
  graph.return %g0 : tensor<1x96xbf16>
}

// The statistic of another tensor (%y) scales %x: the contraction cannot
// derive it from its own rows, so the reduction stays a kernel and the
// remark says why.
graph.func @other_rows(%x: tensor<1x64xbf16>, %y: tensor<1x64xf32>, %g: tensor<64xbf16>, %w1: tensor<96x64xi8>) -> tensor<1x96xbf16> {
  %sq = graph.mul %y, %y : tensor<1x64xf32>, tensor<1x64xf32> -> tensor<1x64xf32>
  %ms = graph.mean %sq : tensor<1x64xf32> -> tensor<1x1xf32>
  // expected-remark@+2 {{kernel 0 (reduce) computes 3 nodes: sq, ms, r}}
  // expected-remark@+1 {{'r' ([1, 1] f32, 4 B) is written by kernel 0 and read by kernel 1: the contraction's prologue reads it once per row, and does not derive it itself: the reduction reads more than the contraction's activations, element for element}}
  %r = graph.rsqrt %ms : tensor<1x1xf32> -> tensor<1x1xf32>
  %xf = graph.convert %x : tensor<1x64xbf16> -> tensor<1x64xf32>
  %nf = graph.mul %xf, %r : tensor<1x64xf32>, tensor<1x1xf32> -> tensor<1x64xf32>
  %nb = graph.convert %nf : tensor<1x64xf32> -> tensor<1x64xbf16>
  %n = graph.mul %nb, %g : tensor<1x64xbf16>, tensor<64xbf16> -> tensor<1x64xbf16>
  %w1f = graph.convert %w1 : tensor<96x64xi8> -> tensor<96x64xbf16>
  // expected-remark@+1 {{kernel 1 (contract) computes 6 nodes: xf, nf, nb, n, w1f, g0; the activations' prologue reads 2 more input(s)}}
  %g0 = graph.linear %n, %w1f : tensor<1x64xbf16>, tensor<96x64xbf16> -> tensor<1x96xbf16>
  graph.return %g0 : tensor<1x96xbf16>
}

// A result with two readers, and one that is also a graph output.
graph.func @shared(%x: tensor<1x64xbf16>, %w: tensor<32x64xi8>, %s: tensor<32xbf16>, %t: tensor<32xbf16>) -> (tensor<1x32xbf16>, tensor<1x32xbf16>, tensor<1x32xbf16>) {
  %wf = graph.convert %w : tensor<32x64xi8> -> tensor<32x64xbf16>
  // expected-remark@+3 {{kernel 0 (contract) computes 2 nodes: wf, y}}
  // expected-remark@+2 {{'y' ([1, 32] bf16, 64 B) is written by kernel 0 and read by kernel 1: 2 kernels read it: a value is computed once, not once per reader}}
  // expected-remark@+1 {{'y' ([1, 32] bf16, 64 B) is written by kernel 0 and read by kernel 2: 2 kernels read it}}
  %y = graph.linear %x, %wf : tensor<1x64xbf16>, tensor<32x64xbf16> -> tensor<1x32xbf16>
  // expected-remark@+2 {{kernel 1 (elementwise) computes 1 node: p}}
  // expected-remark@+1 {{'p' ([1, 32] bf16, 64 B) is written by kernel 1 and read by kernel 3: it is a graph output, written whatever reads it}}
  %p = graph.mul %y, %s : tensor<1x32xbf16>, tensor<32xbf16> -> tensor<1x32xbf16>
  // expected-remark@+2 {{kernel 2 (elementwise) computes 1 node: q}}
  // expected-remark@+1 {{'q' ([1, 32] bf16, 64 B) is written by kernel 2 and read by kernel 3: it is a graph output}}
  %q = graph.add %y, %t : tensor<1x32xbf16>, tensor<32xbf16> -> tensor<1x32xbf16>
  // expected-remark@+1 {{kernel 3 (elementwise) computes 1 node: z}}
  %z = graph.add %p, %q : tensor<1x32xbf16>, tensor<1x32xbf16> -> tensor<1x32xbf16>
  graph.return %p, %q, %z : tensor<1x32xbf16>, tensor<1x32xbf16>, tensor<1x32xbf16>
}

// A math op on [4, 1] stays apart from the [4, 64] consumer that
// broadcasts it.
graph.func @bcast(%x: tensor<4x64xf32>, %v: tensor<4x1xf32>) -> tensor<4x64xf32> {
  // expected-remark@+2 {{kernel 0 (elementwise) computes 1 node: r}}
  // expected-remark@+1 {{'r' ([4, 1] f32, 16 B) is written by kernel 0 and read by kernel 1: it runs a math op (rsqrt, exp) that the consumer would run once per element of its larger space instead of once here}}
  %r = graph.rsqrt %v : tensor<4x1xf32> -> tensor<4x1xf32>
  // expected-remark@+1 {{kernel 1 (elementwise) computes 1 node: z}}
  %z = graph.mul %x, %r : tensor<4x64xf32>, tensor<4x1xf32> -> tensor<4x64xf32>
  graph.return %z : tensor<4x64xf32>
}

// A statistic that a kernel over another space reads (x's rows summed, y
// scaled): not the reduction's apply.
graph.func @other_space(%x: tensor<4x32xf32>, %y: tensor<4x16xf32>) -> tensor<4x16xf32> {
  // expected-remark@+2 {{kernel 0 (reduce) computes 1 node: s}}
  // expected-remark@+1 {{'s' ([4, 1] f32, 16 B) is written by kernel 0 and read by kernel 1: a row statistic that the consumer does not apply in the reduction's kernel: the consumer's space is not the rows the reduction sums}}
  %s = graph.sum %x : tensor<4x32xf32> -> tensor<4x1xf32>
  // expected-remark@+1 {{kernel 1 (elementwise) computes 1 node: a}}
  %a = graph.sub %y, %s : tensor<4x16xf32>, tensor<4x1xf32> -> tensor<4x16xf32>
  graph.return %a : tensor<4x16xf32>
}

// LayerNorm: each reduction applies its statistic; the second sums the
// rows the first writes.
graph.func @layer_norm(%x: tensor<4x32xf32>) -> tensor<4x32xf32> {
  %m = graph.mean %x : tensor<4x32xf32> -> tensor<4x1xf32>
  // expected-remark@+2 {{kernel 0 (reduce) computes 2 nodes: m, c; it applies each row's statistic to the row (reading 1 input(s)) and writes the scaled rows, not the statistic}}
  // expected-remark@+1 {{'c' ([4, 32] f32, 512 B) is written by kernel 0 and read by kernel 1: another reduction sums these rows: it needs each row whole, after the first reduction's statistic is applied (two passes of one kernel over its rows are not done)}}
  %c = graph.sub %x, %m : tensor<4x32xf32>, tensor<4x1xf32> -> tensor<4x32xf32>
  %sq = graph.mul %c, %c : tensor<4x32xf32>, tensor<4x32xf32> -> tensor<4x32xf32>
  %v = graph.mean %sq : tensor<4x32xf32> -> tensor<4x1xf32>
  %r = graph.rsqrt %v : tensor<4x1xf32> -> tensor<4x1xf32>
  // expected-remark@+1 {{kernel 1 (reduce) computes 4 nodes: sq, v, r, y; it applies each row's statistic to the row (reading 1 input(s)) and writes the scaled rows, not the statistic}}
  %y = graph.mul %c, %r : tensor<4x32xf32>, tensor<4x1xf32> -> tensor<4x32xf32>
  graph.return %y : tensor<4x32xf32>
}
