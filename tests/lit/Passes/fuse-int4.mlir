// RUN: %mtc-opt %s --pass-pipeline='builtin.module(graph.func(mtc-fuse))' | FileCheck %s
// RUN: %mtc-opt %s --mtc-fuse | FileCheck %s

// Group-wise int4 (and int8) weights: the dequantization of the weight
// (convert, the scales and zeros repeated over each group, mul and add or
// sub and mul) folds into the contraction that reads it (FoldWeightDequant).
// The weight is read as it is stored, i4 [N, K]; the scales and zeros
// become b_inputs, read through b_maps from (n, k) per row and group
// (d1 floordiv G); the body keeps every node's rounding. Where the
// dequantized weight has another user, or the expression is not a
// dequantization, nothing folds and the graph's kernels stay as they were.

// CHECK-DAG: #[[$G128:.*]] = affine_map<(d0, d1) -> (d0, d1 floordiv 128)>
// CHECK-DAG: #[[$G64:.*]] = affine_map<(d0, d1) -> (d0, d1 floordiv 64)>
// CHECK-DAG: #[[$G32:.*]] = affine_map<(d0, d1) -> (d0, d1 floordiv 32)>
// CHECK-DAG: #[[$ROW3:.*]] = affine_map<(d0, d1, d2) -> (d2)>
// CHECK-DAG: #[[$PERROW:.*]] = affine_map<(d0, d1) -> (d0, 0)>
// CHECK-DAG: #[[$ID2:.*]] = affine_map<(d0, d1) -> (d0, d1)>

// gpt-fast's form, w * s + z, groups of 128: one kernel. The i4 weight goes
// straight into the body, converted to bf16 (exact), scaled and offset with
// a rounding to bf16 after each step, as the graph's nodes round.

// CHECK-LABEL: graph.func @woq_int4_gptfast(
// CHECK-SAME:    %[[X:.*]]: tensor<1x256xbf16>, %[[W:.*]]: tensor<64x256xi4>, %[[S:.*]]: tensor<64x2xbf16>, %[[Z:.*]]: tensor<64x2xbf16>)
// CHECK-NOT:     graph.
// CHECK-NOT:     kernel.elementwise
// CHECK:         %[[Y:.*]] = kernel.contract %[[X]], %[[W]] b_inputs(%[[Z]], %[[S]] : tensor<64x2xbf16>, tensor<64x2xbf16>)
// CHECK-SAME:      {b_maps = [#[[$G128]], #[[$G128]]], epilogue_maps = [], nodes = ["s", "wf", "z", "ws", "wd", "y"]}
// CHECK-SAME:      : tensor<1x256xbf16>, tensor<64x256xi4> -> tensor<1x64xbf16> body {
// CHECK-NEXT:    ^bb0(%[[A:.*]]: bf16, %[[B:.*]]: i4, %[[ZE:.*]]: bf16, %[[SE:.*]]: bf16):
// CHECK-NEXT:      %[[AF:.*]] = arith.extf %[[A]] : bf16 to f32
// CHECK-NEXT:      %[[BH:.*]] = arith.sitofp %[[B]] : i4 to bf16
// CHECK-NEXT:      %[[BF:.*]] = arith.extf %[[BH]] : bf16 to f32
// CHECK-NEXT:      %[[SF:.*]] = arith.extf %[[SE]] : bf16 to f32
// CHECK-NEXT:      %[[WS:.*]] = arith.mulf %[[BF]], %[[SF]] : f32
// CHECK-NEXT:      %[[WSH:.*]] = arith.truncf %[[WS]] : f32 to bf16
// CHECK-NEXT:      %[[WSF:.*]] = arith.extf %[[WSH]] : bf16 to f32
// CHECK-NEXT:      %[[ZF:.*]] = arith.extf %[[ZE]] : bf16 to f32
// CHECK-NEXT:      %[[WD:.*]] = arith.addf %[[WSF]], %[[ZF]] : f32
// CHECK-NEXT:      %[[WDH:.*]] = arith.truncf %[[WD]] : f32 to bf16
// CHECK-NEXT:      %[[WDF:.*]] = arith.extf %[[WDH]] : bf16 to f32
// CHECK-NEXT:      %[[P:.*]] = arith.mulf %[[AF]], %[[WDF]] : f32
// CHECK-NEXT:      kernel.yield %[[P]] : f32
// CHECK-NEXT:    } epilogue {
// CHECK-NEXT:    ^bb0(%[[ACC:.*]]: f32):
// CHECK-NEXT:      %[[R:.*]] = arith.truncf %[[ACC]] : f32 to bf16
// CHECK-NEXT:      kernel.yield %[[R]] : bf16
// CHECK-NEXT:    }
// CHECK-NEXT:    graph.return %[[Y]]
graph.func @woq_int4_gptfast(%x: tensor<1x256xbf16>, %w: tensor<64x256xi4>, %scales: tensor<64x2xbf16>, %zeros: tensor<64x2xbf16>) -> tensor<1x64xbf16> {
  %wf = graph.convert %w : tensor<64x256xi4> -> tensor<64x256xbf16>
  %s = graph.repeat %scales {group = 128 : i64} : tensor<64x2xbf16> -> tensor<64x256xbf16>
  %z = graph.repeat %zeros {group = 128 : i64} : tensor<64x2xbf16> -> tensor<64x256xbf16>
  %ws = graph.mul %wf, %s : tensor<64x256xbf16>, tensor<64x256xbf16> -> tensor<64x256xbf16>
  %wd = graph.add %ws, %z : tensor<64x256xbf16>, tensor<64x256xbf16> -> tensor<64x256xbf16>
  %y = graph.linear %x, %wd : tensor<1x256xbf16>, tensor<64x256xbf16> -> tensor<1x64xbf16>
  graph.return %y : tensor<1x64xbf16>
}

// The AWQ form, (w - z) * s, in f16 with groups of 64.

// CHECK-LABEL: graph.func @woq_int4_awq(
// CHECK-SAME:    %[[X:.*]]: tensor<4x256xf16>, %[[W:.*]]: tensor<64x256xi4>, %[[S:.*]]: tensor<64x4xf16>, %[[Z:.*]]: tensor<64x4xf16>)
// CHECK-NOT:     graph.
// CHECK-NOT:     kernel.elementwise
// CHECK:         %[[Y:.*]] = kernel.contract %[[X]], %[[W]] b_inputs(%[[S]], %[[Z]] : tensor<64x4xf16>, tensor<64x4xf16>)
// CHECK-SAME:      {b_maps = [#[[$G64]], #[[$G64]]], epilogue_maps = [], nodes = ["z", "wf", "s", "d", "wd", "y"]}
// CHECK-SAME:      : tensor<4x256xf16>, tensor<64x256xi4> -> tensor<4x64xf16> body {
// CHECK-NEXT:    ^bb0(%[[A:.*]]: f16, %[[B:.*]]: i4, %[[SE:.*]]: f16, %[[ZE:.*]]: f16):
// CHECK-NEXT:      %[[AF:.*]] = arith.extf %[[A]] : f16 to f32
// CHECK-NEXT:      %[[BH:.*]] = arith.sitofp %[[B]] : i4 to f16
// CHECK-NEXT:      %[[BF:.*]] = arith.extf %[[BH]] : f16 to f32
// CHECK-NEXT:      %[[ZF:.*]] = arith.extf %[[ZE]] : f16 to f32
// CHECK-NEXT:      %[[D:.*]] = arith.subf %[[BF]], %[[ZF]] : f32
// CHECK-NEXT:      %[[DH:.*]] = arith.truncf %[[D]] : f32 to f16
// CHECK-NEXT:      %[[DF:.*]] = arith.extf %[[DH]] : f16 to f32
// CHECK-NEXT:      %[[SF:.*]] = arith.extf %[[SE]] : f16 to f32
// CHECK-NEXT:      %[[WD:.*]] = arith.mulf %[[DF]], %[[SF]] : f32
// CHECK-NEXT:      %[[WDH:.*]] = arith.truncf %[[WD]] : f32 to f16
// CHECK-NEXT:      %[[WDF:.*]] = arith.extf %[[WDH]] : f16 to f32
// CHECK-NEXT:      %[[P:.*]] = arith.mulf %[[AF]], %[[WDF]] : f32
// CHECK-NEXT:      kernel.yield %[[P]] : f32
// CHECK-NEXT:    } epilogue {
// CHECK:         graph.return %[[Y]]
graph.func @woq_int4_awq(%x: tensor<4x256xf16>, %w: tensor<64x256xi4>, %scales: tensor<64x4xf16>, %zeros: tensor<64x4xf16>) -> tensor<4x64xf16> {
  %wf = graph.convert %w : tensor<64x256xi4> -> tensor<64x256xf16>
  %s = graph.repeat %scales {group = 64 : i64} : tensor<64x4xf16> -> tensor<64x256xf16>
  %z = graph.repeat %zeros {group = 64 : i64} : tensor<64x4xf16> -> tensor<64x256xf16>
  %d = graph.sub %wf, %z : tensor<64x256xf16>, tensor<64x256xf16> -> tensor<64x256xf16>
  %wd = graph.mul %d, %s : tensor<64x256xf16>, tensor<64x256xf16> -> tensor<64x256xf16>
  %y = graph.linear %x, %wd : tensor<4x256xf16>, tensor<64x256xf16> -> tensor<4x64xf16>
  graph.return %y : tensor<4x64xf16>
}

// Rank-3 activations, operands of the dequantization swapped (s * w, z + ws),
// and a bias and silu after the linear: b maps and the epilogue's map side
// by side in one kernel.

// CHECK-LABEL: graph.func @woq_int4_epilogue(
// CHECK-SAME:    %[[X:.*]]: tensor<2x8x256xbf16>, %[[W:.*]]: tensor<64x256xi4>, %[[S:.*]]: tensor<64x8xbf16>, %[[Z:.*]]: tensor<64x8xbf16>, %[[BIAS:.*]]: tensor<64xbf16>)
// CHECK-NOT:     kernel.elementwise
// CHECK:         %[[O:.*]] = kernel.contract %[[X]], %[[W]] b_inputs(%[[Z]], %[[S]] : tensor<64x8xbf16>, tensor<64x8xbf16>) epilogue(%[[BIAS]] : tensor<64xbf16>)
// CHECK-SAME:      {b_maps = [#[[$G32]], #[[$G32]]], epilogue_maps = [#[[$ROW3]]], nodes = ["wf", "s", "ws", "z", "wd", "y", "yb", "o"]}
// CHECK-SAME:      : tensor<2x8x256xbf16>, tensor<64x256xi4> -> tensor<2x8x64xbf16> body {
// CHECK-NEXT:    ^bb0(%[[A:.*]]: bf16, %[[B:.*]]: i4, %[[ZE:.*]]: bf16, %[[SE:.*]]: bf16):
// CHECK:           %[[SF:.*]] = arith.extf %[[SE]] : bf16 to f32
// CHECK:           arith.mulf %[[SF]], %{{.*}} : f32
// CHECK:           %[[ZF:.*]] = arith.extf %[[ZE]] : bf16 to f32
// CHECK:           arith.addf %[[ZF]], %{{.*}} : f32
// CHECK:         } epilogue {
// CHECK-NEXT:    ^bb0(%[[ACC:.*]]: f32, %[[E:.*]]: bf16):
// CHECK:           math.exp
// CHECK:           kernel.yield %{{.*}} : bf16
// CHECK-NEXT:    }
// CHECK-NOT:     kernel.
// CHECK:         graph.return %[[O]]
graph.func @woq_int4_epilogue(%x: tensor<2x8x256xbf16>, %w: tensor<64x256xi4>, %scales: tensor<64x8xbf16>, %zeros: tensor<64x8xbf16>, %bias: tensor<64xbf16>) -> tensor<2x8x64xbf16> {
  %wf = graph.convert %w : tensor<64x256xi4> -> tensor<64x256xbf16>
  %s = graph.repeat %scales {group = 32 : i64} : tensor<64x8xbf16> -> tensor<64x256xbf16>
  %z = graph.repeat %zeros {group = 32 : i64} : tensor<64x8xbf16> -> tensor<64x256xbf16>
  %ws = graph.mul %s, %wf : tensor<64x256xbf16>, tensor<64x256xbf16> -> tensor<64x256xbf16>
  %wd = graph.add %z, %ws : tensor<64x256xbf16>, tensor<64x256xbf16> -> tensor<64x256xbf16>
  %y = graph.linear %x, %wd : tensor<2x8x256xbf16>, tensor<64x256xbf16> -> tensor<2x8x64xbf16>
  %yb = graph.add %y, %bias : tensor<2x8x64xbf16>, tensor<64xbf16> -> tensor<2x8x64xbf16>
  %o = graph.silu %yb : tensor<2x8x64xbf16> -> tensor<2x8x64xbf16>
  graph.return %o : tensor<2x8x64xbf16>
}

// A convert of the activations folds into the same body: a chain on %a,
// the dequantization on %b and the b input.

// CHECK-LABEL: graph.func @woq_int4_convert_on_a(
// CHECK-SAME:    %[[X:.*]]: tensor<4x256xf32>, %[[W:.*]]: tensor<64x256xi4>, %[[S:.*]]: tensor<64x2xbf16>)
// CHECK-NOT:     kernel.elementwise
// CHECK:         %[[Y:.*]] = kernel.contract %[[X]], %[[W]] b_inputs(%[[S]] : tensor<64x2xbf16>)
// CHECK-SAME:      {b_maps = [#[[$G128]]], epilogue_maps = [], nodes = ["s", "wf", "wd", "xb", "y"]}
// CHECK-SAME:      : tensor<4x256xf32>, tensor<64x256xi4> -> tensor<4x64xbf16> body {
// CHECK-NEXT:    ^bb0(%[[A:.*]]: f32, %[[B:.*]]: i4, %[[SE:.*]]: bf16):
// CHECK-NEXT:      %[[AH:.*]] = arith.truncf %[[A]] : f32 to bf16
// CHECK-NEXT:      %[[AF:.*]] = arith.extf %[[AH]] : bf16 to f32
// CHECK-NEXT:      %[[BH:.*]] = arith.sitofp %[[B]] : i4 to bf16
// CHECK-NEXT:      %[[BF:.*]] = arith.extf %[[BH]] : bf16 to f32
// CHECK-NEXT:      %[[SF:.*]] = arith.extf %[[SE]] : bf16 to f32
// CHECK-NEXT:      %[[WD:.*]] = arith.mulf %[[BF]], %[[SF]] : f32
// CHECK-NEXT:      %[[WDH:.*]] = arith.truncf %[[WD]] : f32 to bf16
// CHECK-NEXT:      %[[WDF:.*]] = arith.extf %[[WDH]] : bf16 to f32
// CHECK-NEXT:      %[[P:.*]] = arith.mulf %[[AF]], %[[WDF]] : f32
// CHECK-NEXT:      kernel.yield %[[P]] : f32
// CHECK:         graph.return %[[Y]]
graph.func @woq_int4_convert_on_a(%x: tensor<4x256xf32>, %w: tensor<64x256xi4>, %scales: tensor<64x2xbf16>) -> tensor<4x64xbf16> {
  %xb = graph.convert %x : tensor<4x256xf32> -> tensor<4x256xbf16>
  %wf = graph.convert %w : tensor<64x256xi4> -> tensor<64x256xbf16>
  %s = graph.repeat %scales {group = 128 : i64} : tensor<64x2xbf16> -> tensor<64x256xbf16>
  %wd = graph.mul %wf, %s : tensor<64x256xbf16>, tensor<64x256xbf16> -> tensor<64x256xbf16>
  %y = graph.linear %xb, %wd : tensor<4x256xbf16>, tensor<64x256xbf16> -> tensor<4x64xbf16>
  graph.return %y : tensor<4x64xbf16>
}

// An int8 weight with a scale per row ([N, 1], not repeated) folds the same
// way: its b map reads (d0, 0).

// CHECK-LABEL: graph.func @woq_int8_row_scale(
// CHECK-SAME:    %[[X:.*]]: tensor<4x256xbf16>, %[[W:.*]]: tensor<64x256xi8>, %[[S:.*]]: tensor<64x1xbf16>)
// CHECK-NOT:     kernel.elementwise
// CHECK:         %[[Y:.*]] = kernel.contract %[[X]], %[[W]] b_inputs(%[[S]] : tensor<64x1xbf16>)
// CHECK-SAME:      {b_maps = [#[[$PERROW]]], epilogue_maps = [], nodes = ["wf", "wd", "y"]}
// CHECK-SAME:      : tensor<4x256xbf16>, tensor<64x256xi8> -> tensor<4x64xbf16> body {
// CHECK-NEXT:    ^bb0(%[[A:.*]]: bf16, %[[B:.*]]: i8, %[[SE:.*]]: bf16):
// CHECK-NEXT:      arith.extf %[[A]] : bf16 to f32
// CHECK-NEXT:      %[[BH:.*]] = arith.sitofp %[[B]] : i8 to bf16
// CHECK-NEXT:      %[[BF:.*]] = arith.extf %[[BH]] : bf16 to f32
// CHECK-NEXT:      %[[SF:.*]] = arith.extf %[[SE]] : bf16 to f32
// CHECK-NEXT:      arith.mulf %[[BF]], %[[SF]] : f32
// CHECK:         graph.return %[[Y]]
graph.func @woq_int8_row_scale(%x: tensor<4x256xbf16>, %w: tensor<64x256xi8>, %s: tensor<64x1xbf16>) -> tensor<4x64xbf16> {
  %wf = graph.convert %w : tensor<64x256xi8> -> tensor<64x256xbf16>
  %wd = graph.mul %wf, %s : tensor<64x256xbf16>, tensor<64x1xbf16> -> tensor<64x256xbf16>
  %y = graph.linear %x, %wd : tensor<4x256xbf16>, tensor<64x256xbf16> -> tensor<4x64xbf16>
  graph.return %y : tensor<4x64xbf16>
}

// The dequantized weight is also a graph output: it is computed once, by an
// elementwise kernel reading the i4 weight and the scales and zeros
// (d1 floordiv 128), and the contraction reads its bf16 result.

// CHECK-LABEL: graph.func @dequant_returned(
// CHECK-SAME:    %[[X:.*]]: tensor<1x256xbf16>, %[[W:.*]]: tensor<64x256xi4>, %[[S:.*]]: tensor<64x2xbf16>, %[[Z:.*]]: tensor<64x2xbf16>)
// CHECK:         %[[WD:.*]] = kernel.elementwise %[[Z]], %[[W]], %[[S]] : tensor<64x2xbf16>, tensor<64x256xi4>, tensor<64x2xbf16>
// CHECK-SAME:      {indexing_maps = [#[[$G128]], #[[$ID2]], #[[$G128]]], nodes = ["s", "wf", "z", "ws", "wd"]} -> tensor<64x256xbf16> {
// CHECK-NEXT:    ^bb0(%[[ZE:.*]]: bf16, %[[B:.*]]: i4, %[[SE:.*]]: bf16):
// CHECK-NEXT:      arith.sitofp %[[B]] : i4 to bf16
// CHECK:           arith.mulf
// CHECK:           arith.addf
// CHECK:           kernel.yield %{{.*}} : bf16
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[Y:.*]] = kernel.contract %[[X]], %[[WD]] {epilogue_maps = [], nodes = ["y"]} : tensor<1x256xbf16>, tensor<64x256xbf16> -> tensor<1x64xbf16> body {
// CHECK-NEXT:    ^bb0(%[[A:.*]]: bf16, %[[BB:.*]]: bf16):
// CHECK-NEXT:      %[[AF:.*]] = arith.extf %[[A]] : bf16 to f32
// CHECK-NEXT:      %[[BF:.*]] = arith.extf %[[BB]] : bf16 to f32
// CHECK-NEXT:      arith.mulf %[[AF]], %[[BF]] : f32
// CHECK:         graph.return %[[Y]], %[[WD]]
graph.func @dequant_returned(%x: tensor<1x256xbf16>, %w: tensor<64x256xi4>, %scales: tensor<64x2xbf16>, %zeros: tensor<64x2xbf16>) -> (tensor<1x64xbf16>, tensor<64x256xbf16>) {
  %wf = graph.convert %w : tensor<64x256xi4> -> tensor<64x256xbf16>
  %s = graph.repeat %scales {group = 128 : i64} : tensor<64x2xbf16> -> tensor<64x256xbf16>
  %z = graph.repeat %zeros {group = 128 : i64} : tensor<64x2xbf16> -> tensor<64x256xbf16>
  %ws = graph.mul %wf, %s : tensor<64x256xbf16>, tensor<64x256xbf16> -> tensor<64x256xbf16>
  %wd = graph.add %ws, %z : tensor<64x256xbf16>, tensor<64x256xbf16> -> tensor<64x256xbf16>
  %y = graph.linear %x, %wd : tensor<1x256xbf16>, tensor<64x256xbf16> -> tensor<1x64xbf16>
  graph.return %y, %wd : tensor<1x64xbf16>, tensor<64x256xbf16>
}

// relu is not a dequantization step: the weight's expression stays an
// elementwise kernel.

// CHECK-LABEL: graph.func @relu_in_weight(
// CHECK-SAME:    %[[X:.*]]: tensor<1x256xbf16>, %[[W:.*]]: tensor<64x256xi4>, %[[S:.*]]: tensor<64x2xbf16>)
// CHECK:         %[[WR:.*]] = kernel.elementwise %[[W]], %[[S]] : tensor<64x256xi4>, tensor<64x2xbf16>
// CHECK-SAME:      {indexing_maps = [#[[$ID2]], #[[$G128]]], nodes = ["s", "wf", "ws", "wr"]} -> tensor<64x256xbf16> {
// CHECK:           arith.maximumf
// CHECK:         %[[Y:.*]] = kernel.contract %[[X]], %[[WR]] {epilogue_maps = [], nodes = ["y"]} : tensor<1x256xbf16>, tensor<64x256xbf16> -> tensor<1x64xbf16>
// CHECK:         graph.return %[[Y]]
graph.func @relu_in_weight(%x: tensor<1x256xbf16>, %w: tensor<64x256xi4>, %scales: tensor<64x2xbf16>) -> tensor<1x64xbf16> {
  %wf = graph.convert %w : tensor<64x256xi4> -> tensor<64x256xbf16>
  %s = graph.repeat %scales {group = 128 : i64} : tensor<64x2xbf16> -> tensor<64x256xbf16>
  %ws = graph.mul %wf, %s : tensor<64x256xbf16>, tensor<64x256xbf16> -> tensor<64x256xbf16>
  %wr = graph.relu %ws : tensor<64x256xbf16> -> tensor<64x256xbf16>
  %y = graph.linear %x, %wr : tensor<1x256xbf16>, tensor<64x256xbf16> -> tensor<1x64xbf16>
  graph.return %y : tensor<1x64xbf16>
}

// Two linears read the same dequantized weight: it is materialised once.

// CHECK-LABEL: graph.func @shared_dequant(
// CHECK:         %[[WD:.*]] = kernel.elementwise %{{.*}}, %{{.*}} : tensor<64x256xi4>, tensor<64x2xbf16>
// CHECK-SAME:      nodes = ["s", "wf", "wd"]
// CHECK:         %[[Y:.*]] = kernel.contract %{{.*}}, %[[WD]] {epilogue_maps = [], nodes = ["y"]}
// CHECK:         %[[Y2:.*]] = kernel.contract %{{.*}}, %[[WD]] {epilogue_maps = [], nodes = ["y2"]}
// CHECK:         graph.return %[[Y]], %[[Y2]]
graph.func @shared_dequant(%x: tensor<1x256xbf16>, %x2: tensor<1x256xbf16>, %w: tensor<64x256xi4>, %scales: tensor<64x2xbf16>) -> (tensor<1x64xbf16>, tensor<1x64xbf16>) {
  %wf = graph.convert %w : tensor<64x256xi4> -> tensor<64x256xbf16>
  %s = graph.repeat %scales {group = 128 : i64} : tensor<64x2xbf16> -> tensor<64x256xbf16>
  %wd = graph.mul %wf, %s : tensor<64x256xbf16>, tensor<64x256xbf16> -> tensor<64x256xbf16>
  %y = graph.linear %x, %wd : tensor<1x256xbf16>, tensor<64x256xbf16> -> tensor<1x64xbf16>
  %y2 = graph.linear %x2, %wd : tensor<1x256xbf16>, tensor<64x256xbf16> -> tensor<1x64xbf16>
  graph.return %y, %y2 : tensor<1x64xbf16>, tensor<1x64xbf16>
}

// A scale per element ([N, K], as large as the weight) is not read per row
// or group: no fold.

// CHECK-LABEL: graph.func @per_element_scale(
// CHECK-SAME:    %[[X:.*]]: tensor<1x256xbf16>, %[[W:.*]]: tensor<64x256xi4>, %[[S:.*]]: tensor<64x256xbf16>)
// CHECK:         %[[WD:.*]] = kernel.elementwise %[[S]], %[[W]] : tensor<64x256xbf16>, tensor<64x256xi4>
// CHECK-SAME:      {indexing_maps = [#[[$ID2]], #[[$ID2]]], nodes = ["wf", "wd"]}
// CHECK:         %[[Y:.*]] = kernel.contract %[[X]], %[[WD]] {epilogue_maps = [], nodes = ["y"]}
// CHECK:         graph.return %[[Y]]
graph.func @per_element_scale(%x: tensor<1x256xbf16>, %w: tensor<64x256xi4>, %s: tensor<64x256xbf16>) -> tensor<1x64xbf16> {
  %wf = graph.convert %w : tensor<64x256xi4> -> tensor<64x256xbf16>
  %wd = graph.mul %wf, %s : tensor<64x256xbf16>, tensor<64x256xbf16> -> tensor<64x256xbf16>
  %y = graph.linear %x, %wd : tensor<1x256xbf16>, tensor<64x256xbf16> -> tensor<1x64xbf16>
  graph.return %y : tensor<1x64xbf16>
}
