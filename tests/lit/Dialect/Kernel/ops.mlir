// RUN: %mtc-opt %s | %mtc-opt | FileCheck %s
// RUN: %mtc-opt %s --mlir-print-op-generic | %mtc-opt | FileCheck %s

// Round trip of kernel.contract, kernel.elementwise, kernel.yield and
// #kernel.schedule. Result names come from the last entry of `nodes`; region
// arguments are named %a/%b/%wN (body: operands, then b inputs), %acc/%eN
// (epilogue) and %inN.

// CHECK-DAG: #[[$ROW:.*]] = affine_map<(d0, d1) -> (d1)>
// CHECK-DAG: #[[$ID2:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[$T2:.*]] = affine_map<(d0, d1) -> (d1, d0)>
// CHECK-DAG: #[[$BC3:.*]] = affine_map<(d0, d1, d2) -> (0, d2)>
// CHECK-DAG: #[[$T3:.*]] = affine_map<(d0, d1, d2) -> (d0, d2, d1)>
// CHECK-DAG: #[[$G32:.*]] = affine_map<(d0, d1) -> (d0, d1 floordiv 32)>
// CHECK-DAG: #[[$PERROW:.*]] = affine_map<(d0, d1) -> (d0, 0)>
// CHECK-DAG: #[[$REP3:.*]] = affine_map<(d0, d1, d2) -> (d0, d1, d2 floordiv 4)>

// The fused weight-only int8 linear: the i8 weight is converted in the body,
// the per-channel scale is an epilogue input, a schedule is attached.

// CHECK-LABEL: graph.func @contract_epilogue(
// CHECK-SAME:    %[[X:.*]]: tensor<1x4096xbf16>, %[[W:.*]]: tensor<8192x4096xi8>, %[[S:.*]]: tensor<8192xbf16>)
// CHECK:         %out = kernel.contract %[[X]], %[[W]] epilogue(%[[S]] : tensor<8192xbf16>)
// CHECK-SAME:      epilogue_maps = [#[[$ROW]]]
// CHECK-SAME:      nodes = ["wf", "y", "out"]
// CHECK-SAME:      schedule = #kernel.schedule<kind = simt, warps = 4, rows = 2, kwarps = 1, vec = 16, unroll = 4, mtile = 1, splitk = 1>
// CHECK-SAME:      : tensor<1x4096xbf16>, tensor<8192x4096xi8> -> tensor<1x8192xbf16> body {
// CHECK-NEXT:    ^bb0(%a: bf16, %b: i8):
// CHECK-NEXT:      %[[A32:.*]] = arith.extf %a : bf16 to f32
// CHECK-NEXT:      %[[B32:.*]] = arith.sitofp %b : i8 to f32
// CHECK-NEXT:      %[[P:.*]] = arith.mulf %[[A32]], %[[B32]] : f32
// CHECK-NEXT:      kernel.yield %[[P]] : f32
// CHECK-NEXT:    } epilogue {
// CHECK-NEXT:    ^bb0(%acc: f32, %e0: bf16):
// CHECK-NEXT:      %[[Y:.*]] = arith.truncf %acc : f32 to bf16
// CHECK-NEXT:      %[[Y32:.*]] = arith.extf %[[Y]] : bf16 to f32
// CHECK-NEXT:      %[[S32:.*]] = arith.extf %e0 : bf16 to f32
// CHECK-NEXT:      %[[M:.*]] = arith.mulf %[[Y32]], %[[S32]] : f32
// CHECK-NEXT:      %[[R:.*]] = arith.truncf %[[M]] : f32 to bf16
// CHECK-NEXT:      kernel.yield %[[R]] : bf16
// CHECK-NEXT:    }
// CHECK-NEXT:    graph.return %out
#row = affine_map<(d0, d1) -> (d1)>
graph.func @contract_epilogue(%x: tensor<1x4096xbf16>, %w: tensor<8192x4096xi8>,
                              %scales: tensor<8192xbf16>) -> tensor<1x8192xbf16> {
  %0 = kernel.contract %x, %w epilogue(%scales : tensor<8192xbf16>)
      {epilogue_maps = [#row], nodes = ["wf", "y", "out"],
       schedule = #kernel.schedule<kind = simt, warps = 4, rows = 2, kwarps = 1, vec = 16, unroll = 4, mtile = 1, splitk = 1>}
      : tensor<1x4096xbf16>, tensor<8192x4096xi8> -> tensor<1x8192xbf16>
  body {
  ^bb0(%a: bf16, %b: i8):
    %1 = arith.extf %a : bf16 to f32
    %2 = arith.sitofp %b : i8 to f32
    %3 = arith.mulf %1, %2 : f32
    kernel.yield %3 : f32
  } epilogue {
  ^bb0(%acc: f32, %s: bf16):
    %1 = arith.truncf %acc : f32 to bf16
    %2 = arith.extf %1 : bf16 to f32
    %3 = arith.extf %s : bf16 to f32
    %4 = arith.mulf %2, %3 : f32
    %5 = arith.truncf %4 : f32 to bf16
    kernel.yield %5 : bf16
  }
  graph.return %0 : tensor<1x8192xbf16>
}

// No epilogue inputs, f32 operands (empty conversion chains), no schedule.

// CHECK-LABEL: graph.func @contract_plain(
// CHECK-SAME:    %[[A:.*]]: tensor<2x8x64xf32>, %[[B:.*]]: tensor<32x64xf32>)
// CHECK:         %y = kernel.contract %[[A]], %[[B]] {epilogue_maps = [], nodes = ["y"]} : tensor<2x8x64xf32>, tensor<32x64xf32> -> tensor<2x8x32xf32> body {
// CHECK-NEXT:    ^bb0(%a: f32, %b: f32):
// CHECK-NEXT:      %[[P:.*]] = arith.mulf %a, %b : f32
// CHECK-NEXT:      kernel.yield %[[P]] : f32
// CHECK-NEXT:    } epilogue {
// CHECK-NEXT:    ^bb0(%acc: f32):
// CHECK-NEXT:      kernel.yield %acc : f32
// CHECK-NEXT:    }
graph.func @contract_plain(%lhs: tensor<2x8x64xf32>, %rhs: tensor<32x64xf32>) -> tensor<2x8x32xf32> {
  %0 = kernel.contract %lhs, %rhs {epilogue_maps = [], nodes = ["y"]}
      : tensor<2x8x64xf32>, tensor<32x64xf32> -> tensor<2x8x32xf32>
  body {
  ^bb0(%x: f32, %y: f32):
    %1 = arith.mulf %x, %y : f32
    kernel.yield %1 : f32
  } epilogue {
  ^bb0(%acc: f32):
    kernel.yield %acc : f32
  }
  graph.return %0 : tensor<2x8x32xf32>
}

// a_transposed ([K, M]) and b_transposed ([K, N]), a chain of two
// conversions, a schedule for a [K, N] weight.

// CHECK-LABEL: graph.func @contract_transposed(
// CHECK-SAME:    %[[A:.*]]: tensor<64x4xf16>, %[[B:.*]]: tensor<64x32xi8>)
// CHECK:         %mm = kernel.contract %[[A]], %[[B]]
// CHECK-SAME:      a_transposed
// CHECK-SAME:      b_transposed
// CHECK-SAME:      nodes = ["at", "bf", "mm"]
// CHECK-SAME:      schedule = #kernel.schedule<kind = simt, warps = 2, rows = 1, kwarps = 1, vec = 4, unroll = 2, mtile = 4, splitk = 1>
// CHECK-SAME:      : tensor<64x4xf16>, tensor<64x32xi8> -> tensor<4x32xf16> body {
// CHECK-NEXT:    ^bb0(%a: f16, %b: i8):
// CHECK-NEXT:      %[[A32:.*]] = arith.extf %a : f16 to f32
// CHECK-NEXT:      %[[B16:.*]] = arith.sitofp %b : i8 to f16
// CHECK-NEXT:      %[[B32:.*]] = arith.extf %[[B16]] : f16 to f32
// CHECK-NEXT:      %[[P:.*]] = arith.mulf %[[A32]], %[[B32]] : f32
// CHECK-NEXT:      kernel.yield %[[P]] : f32
graph.func @contract_transposed(%lhs: tensor<64x4xf16>, %rhs: tensor<64x32xi8>) -> tensor<4x32xf16> {
  %0 = kernel.contract %lhs, %rhs
      {a_transposed, b_transposed, epilogue_maps = [], nodes = ["at", "bf", "mm"],
       schedule = #kernel.schedule<kind = simt, warps = 2, rows = 1, kwarps = 1, vec = 4, unroll = 2, mtile = 4, splitk = 1>}
      : tensor<64x4xf16>, tensor<64x32xi8> -> tensor<4x32xf16>
  body {
  ^bb0(%x: f16, %y: i8):
    %1 = arith.extf %x : f16 to f32
    %2 = arith.sitofp %y : i8 to f16
    %3 = arith.extf %2 : f16 to f32
    %4 = arith.mulf %1, %3 : f32
    kernel.yield %4 : f32
  } epilogue {
  ^bb0(%acc: f32):
    %1 = arith.truncf %acc : f32 to f16
    kernel.yield %1 : f16
  }
  graph.return %0 : tensor<4x32xf16>
}

// Elementwise with a broadcast map (a bias of shape [1, N] over a rank-3
// iteration space) and an identity map, every allowed scalar op kind.

// CHECK-LABEL: graph.func @elementwise_broadcast(
// CHECK-SAME:    %[[X:.*]]: tensor<2x8x16xbf16>, %[[BIAS:.*]]: tensor<1x16xbf16>)
// CHECK:         %h = kernel.elementwise %[[X]], %[[BIAS]] : tensor<2x8x16xbf16>, tensor<1x16xbf16>
// CHECK-SAME:      indexing_maps = [#{{.*}}, #[[$BC3]]]
// CHECK-SAME:      nodes = ["s", "h"]
// CHECK-SAME:      schedule = #kernel.schedule<kind = elementwise, warps = 4, rows = 1, kwarps = 1, vec = 4, unroll = 1, mtile = 1, splitk = 1>
// CHECK-SAME:      -> tensor<2x8x16xbf16> {
// CHECK-NEXT:    ^bb0(%in0: bf16, %in1: bf16):
// CHECK:           arith.addf
// CHECK:           arith.subf
// CHECK:           arith.negf
// CHECK:           math.exp
// CHECK:           arith.divf
// CHECK:           arith.maximumf
// CHECK:           arith.minimumf
// CHECK:           arith.cmpf olt
// CHECK:           arith.select
// CHECK:           arith.truncf %{{.*}} : f32 to bf16
// CHECK-NEXT:      kernel.yield %{{.*}} : bf16
// CHECK-NEXT:    }
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#bc3 = affine_map<(d0, d1, d2) -> (0, d2)>
graph.func @elementwise_broadcast(%x: tensor<2x8x16xbf16>, %bias: tensor<1x16xbf16>) -> tensor<2x8x16xbf16> {
  %0 = kernel.elementwise %x, %bias : tensor<2x8x16xbf16>, tensor<1x16xbf16>
      {indexing_maps = [#id3, #bc3], nodes = ["s", "h"],
       schedule = #kernel.schedule<kind = elementwise, warps = 4, rows = 1, kwarps = 1, vec = 4, unroll = 1, mtile = 1, splitk = 1>}
      -> tensor<2x8x16xbf16> {
  ^bb0(%v: bf16, %b: bf16):
    %one = arith.constant 1.0 : f32
    %zero = arith.constant 0.0 : f32
    %v32 = arith.extf %v : bf16 to f32
    %b32 = arith.extf %b : bf16 to f32
    %1 = arith.addf %v32, %b32 : f32
    %2 = arith.subf %1, %one : f32
    %3 = arith.negf %2 : f32
    %4 = math.exp %3 : f32
    %5 = arith.divf %2, %4 : f32
    %6 = arith.maximumf %5, %zero : f32
    %7 = arith.minimumf %6, %one : f32
    %8 = arith.cmpf olt, %7, %zero : f32
    %9 = arith.select %8, %zero, %7 : f32
    %10 = arith.truncf %9 : f32 to bf16
    kernel.yield %10 : bf16
  }
  graph.return %0 : tensor<2x8x16xbf16>
}

// A transposing copy, and an elementwise op with no inputs' conversions:
// the yield of a block argument, plus a float -> i8 conversion.

// CHECK-LABEL: graph.func @elementwise_transpose(
// CHECK-SAME:    %[[X:.*]]: tensor<4x8xf32>)
// CHECK:         %t = kernel.elementwise %[[X]] : tensor<4x8xf32> {indexing_maps = [#[[$T2]]], nodes = ["t"]} -> tensor<8x4xf32> {
// CHECK-NEXT:    ^bb0(%in0: f32):
// CHECK-NEXT:      kernel.yield %in0 : f32
// CHECK-NEXT:    }
// CHECK:         %q = kernel.elementwise %t : tensor<8x4xf32> {indexing_maps = [#[[$ID2]]], nodes = ["q"]} -> tensor<8x4xi8> {
// CHECK-NEXT:    ^bb0(%in0: f32):
// CHECK-NEXT:      %[[Q:.*]] = arith.fptosi %in0 : f32 to i8
// CHECK-NEXT:      kernel.yield %[[Q]] : i8
// CHECK-NEXT:    }
// CHECK:         graph.return %t, %q
#t2 = affine_map<(d0, d1) -> (d1, d0)>
#id2 = affine_map<(d0, d1) -> (d0, d1)>
graph.func @elementwise_transpose(%x: tensor<4x8xf32>) -> (tensor<8x4xf32>, tensor<8x4xi8>) {
  %0 = kernel.elementwise %x : tensor<4x8xf32> {indexing_maps = [#t2], nodes = ["t"]} -> tensor<8x4xf32> {
  ^bb0(%v: f32):
    kernel.yield %v : f32
  }
  %1 = kernel.elementwise %0 : tensor<8x4xf32> {indexing_maps = [#id2], nodes = ["q"]} -> tensor<8x4xi8> {
  ^bb0(%v: f32):
    %2 = arith.fptosi %v : f32 to i8
    kernel.yield %2 : i8
  }
  graph.return %0, %1 : tensor<8x4xf32>, tensor<8x4xi8>
}

// A batched transpose map (rank 3).

// CHECK-LABEL: graph.func @elementwise_transpose3(
// CHECK:         kernel.elementwise %{{.*}} : tensor<2x4x8xf16> {indexing_maps = [#[[$T3]]], nodes = ["t3"]} -> tensor<2x8x4xf16>
#t3 = affine_map<(d0, d1, d2) -> (d0, d2, d1)>
graph.func @elementwise_transpose3(%x: tensor<2x4x8xf16>) -> tensor<2x8x4xf16> {
  %0 = kernel.elementwise %x : tensor<2x4x8xf16> {indexing_maps = [#t3], nodes = ["t3"]} -> tensor<2x8x4xf16> {
  ^bb0(%v: f16):
    kernel.yield %v : f16
  }
  graph.return %0 : tensor<2x8x4xf16>
}

// An int4 weight dequantized group-wise in the body: b_inputs (scales and
// zeros, one value per row and group of 32 k's: d1 floordiv 32) with their
// b_maps, and the weight side an expression over %b and them, each step
// rounded to bf16. A per-row b input (d0, 0) shares the op; a schedule is
// attached.

// CHECK-LABEL: graph.func @contract_b_inputs(
// CHECK-SAME:    %[[X:.*]]: tensor<4x64xbf16>, %[[W:.*]]: tensor<8x64xi4>, %[[S:.*]]: tensor<8x2xbf16>, %[[Z:.*]]: tensor<8x2xbf16>, %[[R:.*]]: tensor<8x1xbf16>, %[[BIAS:.*]]: tensor<8xbf16>)
// CHECK:         %y = kernel.contract %[[X]], %[[W]] b_inputs(%[[S]], %[[Z]], %[[R]] : tensor<8x2xbf16>, tensor<8x2xbf16>, tensor<8x1xbf16>) epilogue(%[[BIAS]] : tensor<8xbf16>)
// CHECK-SAME:      b_maps = [#[[$G32]], #[[$G32]], #[[$PERROW]]]
// CHECK-SAME:      epilogue_maps = [#[[$ROW]]]
// CHECK-SAME:      nodes = ["wf", "s", "z", "ws", "wd", "wr", "y"]
// CHECK-SAME:      schedule = #kernel.schedule<kind = simt, warps = 4, rows = 1, kwarps = 1, vec = 16, unroll = 1, mtile = 4, splitk = 1>
// CHECK-SAME:      : tensor<4x64xbf16>, tensor<8x64xi4> -> tensor<4x8xbf16> body {
// CHECK-NEXT:    ^bb0(%a: bf16, %b: i4, %w0: bf16, %w1: bf16, %w2: bf16):
// CHECK-NEXT:      %[[AF:.*]] = arith.extf %a : bf16 to f32
// CHECK-NEXT:      %[[BH:.*]] = arith.sitofp %b : i4 to bf16
// CHECK-NEXT:      %[[BF:.*]] = arith.extf %[[BH]] : bf16 to f32
// CHECK-NEXT:      %[[SF:.*]] = arith.extf %w0 : bf16 to f32
// CHECK-NEXT:      %[[M:.*]] = arith.mulf %[[BF]], %[[SF]] : f32
// CHECK-NEXT:      %[[MH:.*]] = arith.truncf %[[M]] : f32 to bf16
// CHECK-NEXT:      %[[MF:.*]] = arith.extf %[[MH]] : bf16 to f32
// CHECK-NEXT:      %[[ZF:.*]] = arith.extf %w1 : bf16 to f32
// CHECK-NEXT:      %[[D:.*]] = arith.addf %[[MF]], %[[ZF]] : f32
// CHECK-NEXT:      %[[DH:.*]] = arith.truncf %[[D]] : f32 to bf16
// CHECK-NEXT:      %[[RM:.*]] = arith.mulf %[[DH]], %w2 : bf16
// CHECK-NEXT:      %[[RF:.*]] = arith.extf %[[RM]] : bf16 to f32
// CHECK-NEXT:      %[[P:.*]] = arith.mulf %[[AF]], %[[RF]] : f32
// CHECK-NEXT:      kernel.yield %[[P]] : f32
// CHECK-NEXT:    } epilogue {
// CHECK-NEXT:    ^bb0(%acc: f32, %e0: bf16):
#g32 = affine_map<(d0, d1) -> (d0, d1 floordiv 32)>
#perrow = affine_map<(d0, d1) -> (d0, 0)>
graph.func @contract_b_inputs(%x: tensor<4x64xbf16>, %w: tensor<8x64xi4>, %scales: tensor<8x2xbf16>,
                              %zeros: tensor<8x2xbf16>, %rs: tensor<8x1xbf16>,
                              %bias: tensor<8xbf16>) -> tensor<4x8xbf16> {
  %0 = kernel.contract %x, %w b_inputs(%scales, %zeros, %rs : tensor<8x2xbf16>, tensor<8x2xbf16>, tensor<8x1xbf16>)
      epilogue(%bias : tensor<8xbf16>)
      {b_maps = [#g32, #g32, #perrow], epilogue_maps = [#row],
       nodes = ["wf", "s", "z", "ws", "wd", "wr", "y"],
       schedule = #kernel.schedule<kind = simt, warps = 4, rows = 1, kwarps = 1, vec = 16, unroll = 1, mtile = 4, splitk = 1>}
      : tensor<4x64xbf16>, tensor<8x64xi4> -> tensor<4x8xbf16>
  body {
  ^bb0(%a: bf16, %b: i4, %s: bf16, %z: bf16, %r: bf16):
    %1 = arith.extf %a : bf16 to f32
    %2 = arith.sitofp %b : i4 to bf16
    %3 = arith.extf %2 : bf16 to f32
    %4 = arith.extf %s : bf16 to f32
    %5 = arith.mulf %3, %4 : f32
    %6 = arith.truncf %5 : f32 to bf16
    %7 = arith.extf %6 : bf16 to f32
    %8 = arith.extf %z : bf16 to f32
    %9 = arith.addf %7, %8 : f32
    %10 = arith.truncf %9 : f32 to bf16
    %11 = arith.mulf %10, %r : bf16
    %12 = arith.extf %11 : bf16 to f32
    %13 = arith.mulf %1, %12 : f32
    kernel.yield %13 : f32
  } epilogue {
  ^bb0(%acc: f32, %e: bf16):
    %1 = arith.truncf %acc : f32 to bf16
    %2 = arith.extf %1 : bf16 to f32
    %3 = arith.extf %e : bf16 to f32
    %4 = arith.addf %2, %3 : f32
    %5 = arith.truncf %4 : f32 to bf16
    kernel.yield %5 : bf16
  }
  graph.return %0 : tensor<4x8xbf16>
}

// An i4 weight converted in the body without b inputs (no b_maps), and a
// graph.repeat as an elementwise kernel: its map divides the last dim
// (d2 floordiv 4), each input element read by 4 consecutive outputs.

// CHECK-LABEL: graph.func @contract_i4_and_repeat(
// CHECK-SAME:    %[[X:.*]]: tensor<1x64xf16>, %[[W:.*]]: tensor<8x64xi4>, %[[T:.*]]: tensor<2x3x4xf32>)
// CHECK:         %y = kernel.contract %[[X]], %[[W]] {epilogue_maps = [], nodes = ["wf", "y"]} : tensor<1x64xf16>, tensor<8x64xi4> -> tensor<1x8xf16> body {
// CHECK-NEXT:    ^bb0(%a: f16, %b: i4):
// CHECK-NEXT:      %[[AF:.*]] = arith.extf %a : f16 to f32
// CHECK-NEXT:      %[[BF:.*]] = arith.sitofp %b : i4 to f32
// CHECK-NEXT:      arith.mulf %[[AF]], %[[BF]] : f32
// CHECK:         %r = kernel.elementwise %[[T]] : tensor<2x3x4xf32> {indexing_maps = [#[[$REP3]]], nodes = ["r"]} -> tensor<2x3x16xf32> {
// CHECK-NEXT:    ^bb0(%in0: f32):
// CHECK-NEXT:      kernel.yield %in0 : f32
// CHECK-NEXT:    }
// CHECK:         graph.return %y, %r
#rep3 = affine_map<(d0, d1, d2) -> (d0, d1, d2 floordiv 4)>
graph.func @contract_i4_and_repeat(%x: tensor<1x64xf16>, %w: tensor<8x64xi4>, %t: tensor<2x3x4xf32>)
    -> (tensor<1x8xf16>, tensor<2x3x16xf32>) {
  %0 = kernel.contract %x, %w {epilogue_maps = [], nodes = ["wf", "y"]}
      : tensor<1x64xf16>, tensor<8x64xi4> -> tensor<1x8xf16>
  body {
  ^bb0(%a: f16, %b: i4):
    %1 = arith.extf %a : f16 to f32
    %2 = arith.sitofp %b : i4 to f32
    %3 = arith.mulf %1, %2 : f32
    kernel.yield %3 : f32
  } epilogue {
  ^bb0(%acc: f32):
    %1 = arith.truncf %acc : f32 to f16
    kernel.yield %1 : f16
  }
  %1 = kernel.elementwise %t : tensor<2x3x4xf32> {indexing_maps = [#rep3], nodes = ["r"]} -> tensor<2x3x16xf32> {
  ^bb0(%v: f32):
    kernel.yield %v : f32
  }
  graph.return %0, %1 : tensor<1x8xf16>, tensor<2x3x16xf32>
}

// kernel.reduce: a norm's row statistic with a b-like input along K and
// an epilogue input.

#rid = affine_map<(d0, d1) -> (d0, d1)>
#rcol = affine_map<(d0, d1) -> (d1)>
// CHECK-LABEL: graph.func @norm_stat(
// CHECK:         %r = kernel.reduce %{{.*}}, %{{.*}} : tensor<3x64xbf16>, tensor<64xbf16> epilogue(%{{.*}} : tensor<3x1xf32>)
// CHECK-SAME:      {epilogue_maps = [#{{.*}}], extent = 64 : i64, indexing_maps = [#{{.*}}, #{{.*}}], nodes = ["r"], schedule = #kernel.schedule<kind = reduce, warps = 4, rows = 1, kwarps = 1, vec = 8, unroll = 1, mtile = 1, splitk = 1>} -> tensor<3x1xf32> body {
// CHECK:         } epilogue {
// CHECK:           math.rsqrt
graph.func @norm_stat(%x: tensor<3x64xbf16>, %g: tensor<64xbf16>, %b: tensor<3x1xf32>) -> tensor<3x1xf32> {
  %r = kernel.reduce %x, %g : tensor<3x64xbf16>, tensor<64xbf16> epilogue(%b : tensor<3x1xf32>) {epilogue_maps = [#rid], extent = 64 : i64, indexing_maps = [#rid, #rcol], nodes = ["r"], schedule = #kernel.schedule<kind = reduce, warps = 4, rows = 1, kwarps = 1, vec = 8, unroll = 1, mtile = 1, splitk = 1>} -> tensor<3x1xf32> body {
  ^bb0(%in0: bf16, %in1: bf16):
    %0 = arith.extf %in0 : bf16 to f32
    %1 = arith.extf %in1 : bf16 to f32
    %2 = arith.mulf %0, %1 : f32
    kernel.yield %2 : f32
  } epilogue {
  ^bb0(%sum: f32, %e0: f32):
    %0 = arith.addf %sum, %e0 : f32
    %1 = math.rsqrt %0 : f32
    kernel.yield %1 : f32
  }
  graph.return %r : tensor<3x1xf32>
}


// kernel.reduce with apply: the statistic scales the rows it was reduced
// from (an RMSNorm in one kernel); the result is the iteration space.

// CHECK-LABEL: graph.func @norm_apply(
// CHECK:         %n = kernel.reduce %{{.*}} : tensor<3x64xbf16> epilogue() apply_inputs(%{{.*}}, %{{.*}} : tensor<64xbf16>, tensor<3x64xbf16>)
// CHECK-SAME:      {apply_maps = [#{{.*}}, #{{.*}}], epilogue_maps = [], extent = 64 : i64, indexing_maps = [#{{.*}}], nodes = ["n"]} -> tensor<3x64xbf16> body {
// CHECK:         } epilogue {
// CHECK:           math.rsqrt
// CHECK:         } apply {
// CHECK-NEXT:    ^bb0(%a0: bf16, %a1: bf16, %stat: f32):
// CHECK:           arith.mulf %{{.*}}, %stat : f32
graph.func @norm_apply(%x: tensor<3x64xbf16>, %g: tensor<64xbf16>) -> tensor<3x64xbf16> {
  %n = kernel.reduce %x : tensor<3x64xbf16> epilogue() apply_inputs(%g, %x : tensor<64xbf16>, tensor<3x64xbf16>) {apply_maps = [#rcol, #rid], epilogue_maps = [], extent = 64 : i64, indexing_maps = [#rid], nodes = ["n"]} -> tensor<3x64xbf16> body {
  ^bb0(%in0: bf16):
    %0 = arith.extf %in0 : bf16 to f32
    %1 = arith.mulf %0, %0 : f32
    kernel.yield %1 : f32
  } epilogue {
  ^bb0(%sum: f32):
    %0 = math.rsqrt %sum : f32
    kernel.yield %0 : f32
  } apply {
  ^bb0(%a0: bf16, %a1: bf16, %stat: f32):
    %0 = arith.extf %a1 : bf16 to f32
    %1 = arith.mulf %0, %stat : f32
    %2 = arith.truncf %1 : f32 to bf16
    %3 = arith.extf %2 : bf16 to f32
    %4 = arith.extf %a0 : bf16 to f32
    %5 = arith.mulf %3, %4 : f32
    %6 = arith.truncf %5 : f32 to bf16
    kernel.yield %6 : bf16
  }
  graph.return %n : tensor<3x64xbf16>
}


// kernel.contract with an activation prologue: a_inputs per k and per row.

// CHECK-LABEL: graph.func @prologue(
// CHECK:         %y = kernel.contract %{{.*}}, %{{.*}} a_inputs(%{{.*}}, %{{.*}} : tensor<64xbf16>, tensor<2x1xf32>) {a_maps = [#{{.*}}, #{{.*}}], epilogue_maps = []
// CHECK:         ^bb0(%a: bf16, %b: i8, %x0: bf16, %x1: f32):
// CHECK:           arith.mulf %{{.*}}, %x1 : f32
#pcol = affine_map<(d0, d1) -> (d1)>
#prow = affine_map<(d0, d1) -> (d0, 0)>
graph.func @prologue(%x: tensor<2x64xbf16>, %w: tensor<32x64xi8>, %g: tensor<64xbf16>, %r: tensor<2x1xf32>) -> tensor<2x32xbf16> {
  %y = kernel.contract %x, %w a_inputs(%g, %r : tensor<64xbf16>, tensor<2x1xf32>) {a_maps = [#pcol, #prow], epilogue_maps = [], nodes = ["y"], schedule = #kernel.schedule<kind = simt, warps = 4, rows = 1, kwarps = 1, vec = 16, unroll = 1, mtile = 2, splitk = 1>} : tensor<2x64xbf16>, tensor<32x64xi8> -> tensor<2x32xbf16> body {
  ^bb0(%a: bf16, %b: i8, %x0: bf16, %x1: f32):
    %0 = arith.extf %a : bf16 to f32
    %1 = arith.mulf %0, %x1 : f32
    %2 = arith.truncf %1 : f32 to bf16
    %3 = arith.extf %2 : bf16 to f32
    %4 = arith.sitofp %b : i8 to f32
    %5 = arith.mulf %3, %4 : f32
    kernel.yield %5 : f32
  } epilogue {
  ^bb0(%acc: f32):
    %0 = arith.truncf %acc : f32 to bf16
    kernel.yield %0 : bf16
  }
  graph.return %y : tensor<2x32xbf16>
}

// kernel.contract with a sibling (horizontal fusion): one sum per weight
// into the epilogue, named acc0 and acc1.

// CHECK-LABEL: graph.func @siblings(
// CHECK:         %y = kernel.contract %{{.*}}, %{{.*}} siblings(%{{.*}} : tensor<32x64xi8>) epilogue(%{{.*}} : tensor<32xbf16>)
// CHECK:         ^bb0(%acc0: f32, %acc1: f32, %e0: bf16):
#scol = affine_map<(d0, d1) -> (d1)>
graph.func @siblings(%x: tensor<2x64xbf16>, %w: tensor<32x64xi8>, %v: tensor<32x64xi8>, %s: tensor<32xbf16>) -> tensor<2x32xbf16> {
  %y = kernel.contract %x, %w siblings(%v : tensor<32x64xi8>) epilogue(%s : tensor<32xbf16>) {epilogue_maps = [#scol], nodes = ["y"], schedule = #kernel.schedule<kind = simt, warps = 4, rows = 1, kwarps = 1, vec = 16, unroll = 1, mtile = 2, splitk = 1>} : tensor<2x64xbf16>, tensor<32x64xi8> -> tensor<2x32xbf16> body {
  ^bb0(%a: bf16, %b: i8):
    %0 = arith.extf %a : bf16 to f32
    %1 = arith.sitofp %b : i8 to f32
    %2 = arith.mulf %0, %1 : f32
    kernel.yield %2 : f32
  } epilogue {
  ^bb0(%acc0: f32, %acc1: f32, %e0: bf16):
    %0 = arith.mulf %acc0, %acc1 : f32
    %1 = arith.extf %e0 : bf16 to f32
    %2 = arith.mulf %0, %1 : f32
    %3 = arith.truncf %2 : f32 to bf16
    kernel.yield %3 : bf16
  }
  graph.return %y : tensor<2x32xbf16>
}

// kernel.contract over two int4 weights, each with its own group-wise
// scales (sibling_b_inputs).

// CHECK-LABEL: graph.func @siblings_int4(
// CHECK:         %y = kernel.contract %{{.*}}, %{{.*}} b_inputs(%{{.*}} : tensor<32x2xbf16>) siblings(%{{.*}} : tensor<32x256xi4>) sibling_b_inputs(%{{.*}} : tensor<32x2xbf16>)
// CHECK:         ^bb0(%a: bf16, %b: i4, %w0: bf16):
// CHECK:         ^bb0(%acc0: f32, %acc1: f32):
#sgrp = affine_map<(d0, d1) -> (d0, d1 floordiv 128)>
graph.func @siblings_int4(%x: tensor<2x256xbf16>, %w: tensor<32x256xi4>, %s: tensor<32x2xbf16>, %v: tensor<32x256xi4>, %t: tensor<32x2xbf16>) -> tensor<2x32xbf16> {
  %y = kernel.contract %x, %w b_inputs(%s : tensor<32x2xbf16>) siblings(%v : tensor<32x256xi4>) sibling_b_inputs(%t : tensor<32x2xbf16>) {b_maps = [#sgrp], epilogue_maps = [], nodes = ["y"]} : tensor<2x256xbf16>, tensor<32x256xi4> -> tensor<2x32xbf16> body {
  ^bb0(%a: bf16, %b: i4, %w0: bf16):
    %0 = arith.extf %a : bf16 to f32
    %1 = arith.sitofp %b : i4 to bf16
    %2 = arith.mulf %1, %w0 : bf16
    %3 = arith.extf %2 : bf16 to f32
    %4 = arith.mulf %0, %3 : f32
    kernel.yield %4 : f32
  } epilogue {
  ^bb0(%acc0: f32, %acc1: f32):
    %0 = arith.mulf %acc0, %acc1 : f32
    %1 = arith.truncf %0 : f32 to bf16
    kernel.yield %1 : bf16
  }
  graph.return %y : tensor<2x32xbf16>
}

// kernel.contract that derives its rows' statistic (the `statistic`
// regions): the body reads it as its last argument, %stat.

// CHECK-LABEL: graph.func @row_statistic(
// CHECK:         %y = kernel.contract %{{.*}}, %{{.*}} a_inputs(%{{.*}} : tensor<64xbf16>)
// CHECK:         ^bb0(%a: bf16, %b: i8, %x0: bf16, %stat: f32):
// CHECK:         } statistic {
// CHECK-NEXT:    ^bb0(%x{{.*}}: bf16):
// CHECK:         } then {
// CHECK-NEXT:    ^bb0(%sum: f32):
// CHECK-NEXT:      math.rsqrt %sum : f32
#statcol = affine_map<(d0, d1) -> (d1)>
graph.func @row_statistic(%act: tensor<1x64xbf16>, %g: tensor<64xbf16>, %w: tensor<32x64xi8>) -> tensor<1x32xbf16> {
  %y = kernel.contract %act, %w a_inputs(%g : tensor<64xbf16>) {a_maps = [#scol], epilogue_maps = [], nodes = ["y"]} : tensor<1x64xbf16>, tensor<32x64xi8> -> tensor<1x32xbf16> body {
  ^bb0(%a: bf16, %b: i8, %x0: bf16, %stat: f32):
    %0 = arith.extf %a : bf16 to f32
    %1 = arith.mulf %0, %stat : f32
    %2 = arith.truncf %1 : f32 to bf16
    %3 = arith.extf %2 : bf16 to f32
    %4 = arith.extf %x0 : bf16 to f32
    %5 = arith.mulf %3, %4 : f32
    %6 = arith.truncf %5 : f32 to bf16
    %7 = arith.extf %6 : bf16 to f32
    %8 = arith.sitofp %b : i8 to f32
    %9 = arith.mulf %7, %8 : f32
    kernel.yield %9 : f32
  } epilogue {
  ^bb0(%acc: f32):
    %0 = arith.truncf %acc : f32 to bf16
    kernel.yield %0 : bf16
  } statistic {
  ^bb0(%x: bf16):
    %0 = arith.extf %x : bf16 to f32
    %1 = arith.mulf %0, %0 : f32
    kernel.yield %1 : f32
  } then {
  ^bb0(%sum: f32):
    %0 = math.rsqrt %sum : f32
    kernel.yield %0 : f32
  }
  graph.return %y : tensor<1x32xbf16>
}
