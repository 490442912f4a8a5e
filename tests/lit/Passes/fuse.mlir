// RUN: %mtc-opt %s --pass-pipeline='builtin.module(graph.func(mtc-fuse))' | FileCheck %s
// RUN: %mtc-opt %s --mtc-fuse | FileCheck %s

// CHECK-DAG: #[[$ROW:.*]] = affine_map<(d0, d1) -> (d1)>
// CHECK-DAG: #[[$ROW3:.*]] = affine_map<(d0, d1, d2) -> (d2)>
// CHECK-DAG: #[[$ID1:.*]] = affine_map<(d0) -> (d0)>
// CHECK-DAG: #[[$ID2:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[$T3:.*]] = affine_map<(d0, d1, d2) -> (d0, d2, d1)>

// The weight-only int8 linear at M = 1 (examples/woq_int8_linear.graph): one
// contraction; the int8 -> bf16 convert is in the body (exact, so straight
// to f32), the scale multiplication in the epilogue. Nothing else is left.

// CHECK-LABEL: graph.func @woq_linear_m1(
// CHECK-SAME:    %[[X:.*]]: tensor<1x4096xbf16>, %[[W:.*]]: tensor<8192x4096xi8>, %[[S:.*]]: tensor<8192xbf16>)
// CHECK-NOT:     graph.convert
// CHECK-NOT:     kernel.elementwise
// CHECK:         %[[OUT:.*]] = kernel.contract %[[X]], %[[W]] epilogue(%[[S]] : tensor<8192xbf16>)
// CHECK-SAME:      {epilogue_maps = [#[[$ROW]]], nodes = ["wf", "y", "out"]}
// CHECK-SAME:      : tensor<1x4096xbf16>, tensor<8192x4096xi8> -> tensor<1x8192xbf16> body {
// CHECK-NEXT:    ^bb0(%[[A:.*]]: bf16, %[[B:.*]]: i8):
// CHECK-NEXT:      %[[AF:.*]] = arith.extf %[[A]] : bf16 to f32
// CHECK-NEXT:      %[[BF:.*]] = arith.sitofp %[[B]] : i8 to f32
// CHECK-NEXT:      %[[P:.*]] = arith.mulf %[[AF]], %[[BF]] : f32
// CHECK-NEXT:      kernel.yield %[[P]] : f32
// CHECK-NEXT:    } epilogue {
// CHECK-NEXT:    ^bb0(%[[ACC:.*]]: f32, %[[E:.*]]: bf16):
// CHECK-NEXT:      %[[Y:.*]] = arith.truncf %[[ACC]] : f32 to bf16
// CHECK-NEXT:      %[[YF:.*]] = arith.extf %[[Y]] : bf16 to f32
// CHECK-NEXT:      %[[SF:.*]] = arith.extf %[[E]] : bf16 to f32
// CHECK-NEXT:      %[[M:.*]] = arith.mulf %[[YF]], %[[SF]] : f32
// CHECK-NEXT:      %[[R:.*]] = arith.truncf %[[M]] : f32 to bf16
// CHECK-NEXT:      kernel.yield %[[R]] : bf16
// CHECK-NEXT:    }
// CHECK-NEXT:    graph.return %[[OUT]]
graph.func @woq_linear_m1(%x: tensor<1x4096xbf16>, %w: tensor<8192x4096xi8>, %scales: tensor<8192xbf16>) -> tensor<1x8192xbf16> {
  %wf = graph.convert %w : tensor<8192x4096xi8> -> tensor<8192x4096xbf16>
  %y = graph.linear %x, %wf : tensor<1x4096xbf16>, tensor<8192x4096xbf16> -> tensor<1x8192xbf16>
  %out = graph.mul %y, %scales : tensor<1x8192xbf16>, tensor<8192xbf16> -> tensor<1x8192xbf16>
  graph.return %out : tensor<1x8192xbf16>
}

// The same at M = 16.

// CHECK-LABEL: graph.func @woq_linear_m16(
// CHECK-SAME:    %[[X:.*]]: tensor<16x4096xbf16>, %[[W:.*]]: tensor<8192x4096xi8>, %[[S:.*]]: tensor<8192xbf16>)
// CHECK-NOT:     graph.convert
// CHECK-NOT:     kernel.elementwise
// CHECK:         %[[OUT:.*]] = kernel.contract %[[X]], %[[W]] epilogue(%[[S]] : tensor<8192xbf16>)
// CHECK-SAME:      {epilogue_maps = [#[[$ROW]]], nodes = ["wf", "y", "out"]}
// CHECK-SAME:      : tensor<16x4096xbf16>, tensor<8192x4096xi8> -> tensor<16x8192xbf16> body {
// CHECK-NEXT:    ^bb0(%[[A:.*]]: bf16, %[[B:.*]]: i8):
// CHECK-NEXT:      %[[AF:.*]] = arith.extf %[[A]] : bf16 to f32
// CHECK-NEXT:      %[[BF:.*]] = arith.sitofp %[[B]] : i8 to f32
// CHECK-NEXT:      %[[P:.*]] = arith.mulf %[[AF]], %[[BF]] : f32
// CHECK-NEXT:      kernel.yield %[[P]] : f32
// CHECK-NEXT:    } epilogue {
// CHECK-NEXT:    ^bb0(%[[ACC:.*]]: f32, %[[E:.*]]: bf16):
// CHECK:           %[[SF:.*]] = arith.extf %[[E]] : bf16 to f32
// CHECK-NEXT:      arith.mulf %{{.*}}, %[[SF]] : f32
// CHECK:           kernel.yield %{{.*}} : bf16
// CHECK-NEXT:    }
// CHECK-NEXT:    graph.return %[[OUT]]
graph.func @woq_linear_m16(%x: tensor<16x4096xbf16>, %w: tensor<8192x4096xi8>, %scales: tensor<8192xbf16>) -> tensor<16x8192xbf16> {
  %wf = graph.convert %w : tensor<8192x4096xi8> -> tensor<8192x4096xbf16>
  %y = graph.linear %x, %wf : tensor<16x4096xbf16>, tensor<8192x4096xbf16> -> tensor<16x8192xbf16>
  %out = graph.mul %y, %scales : tensor<16x8192xbf16>, tensor<8192xbf16> -> tensor<16x8192xbf16>
  graph.return %out : tensor<16x8192xbf16>
}

// The same with rank-3 activations: the scale map has three dims.

// CHECK-LABEL: graph.func @woq_linear_rank3(
// CHECK-SAME:    %[[X:.*]]: tensor<2x8x4096xbf16>, %[[W:.*]]: tensor<8192x4096xi8>, %[[S:.*]]: tensor<8192xbf16>)
// CHECK-NOT:     graph.convert
// CHECK-NOT:     kernel.elementwise
// CHECK:         %[[OUT:.*]] = kernel.contract %[[X]], %[[W]] epilogue(%[[S]] : tensor<8192xbf16>)
// CHECK-SAME:      {epilogue_maps = [#[[$ROW3]]], nodes = ["wf", "y", "out"]}
// CHECK-SAME:      : tensor<2x8x4096xbf16>, tensor<8192x4096xi8> -> tensor<2x8x8192xbf16> body {
// CHECK-NEXT:    ^bb0(%[[A:.*]]: bf16, %[[B:.*]]: i8):
// CHECK-NEXT:      arith.extf %[[A]] : bf16 to f32
// CHECK-NEXT:      arith.sitofp %[[B]] : i8 to f32
// CHECK:         } epilogue {
// CHECK-NEXT:    ^bb0(%[[ACC:.*]]: f32, %[[E:.*]]: bf16):
// CHECK:           %[[SF:.*]] = arith.extf %[[E]] : bf16 to f32
// CHECK-NEXT:      arith.mulf %{{.*}}, %[[SF]] : f32
// CHECK:         graph.return %[[OUT]]
graph.func @woq_linear_rank3(%x: tensor<2x8x4096xbf16>, %w: tensor<8192x4096xi8>, %scales: tensor<8192xbf16>) -> tensor<2x8x8192xbf16> {
  %wf = graph.convert %w : tensor<8192x4096xi8> -> tensor<8192x4096xbf16>
  %y = graph.linear %x, %wf : tensor<2x8x4096xbf16>, tensor<8192x4096xbf16> -> tensor<2x8x8192xbf16>
  %out = graph.mul %y, %scales : tensor<2x8x8192xbf16>, tensor<8192xbf16> -> tensor<2x8x8192xbf16>
  graph.return %out : tensor<2x8x8192xbf16>
}

// matmul(x, transpose(convert(w))): the transpose cancels the matmul's [K, N]
// reading, so the [N, K] int8 weight is read directly; no transpose kernel.

// CHECK-LABEL: graph.func @matmul_of_transposed_weight(
// CHECK-SAME:    %[[X:.*]]: tensor<4x64xbf16>, %[[W:.*]]: tensor<32x64xi8>)
// CHECK-NOT:     kernel.elementwise
// CHECK:         %[[Y:.*]] = kernel.contract %[[X]], %[[W]] {epilogue_maps = [], nodes = ["wf", "wt", "y"]} : tensor<4x64xbf16>, tensor<32x64xi8> -> tensor<4x32xbf16> body {
// CHECK-NEXT:    ^bb0(%[[A:.*]]: bf16, %[[B:.*]]: i8):
// CHECK-NEXT:      %[[AF:.*]] = arith.extf %[[A]] : bf16 to f32
// CHECK-NEXT:      %[[BF:.*]] = arith.sitofp %[[B]] : i8 to f32
// CHECK-NEXT:      arith.mulf %[[AF]], %[[BF]] : f32
// CHECK-NOT:     kernel.elementwise
// CHECK:         graph.return %[[Y]]
graph.func @matmul_of_transposed_weight(%x: tensor<4x64xbf16>, %w: tensor<32x64xi8>) -> tensor<4x32xbf16> {
  %wf = graph.convert %w : tensor<32x64xi8> -> tensor<32x64xbf16>
  %wt = graph.transpose %wf : tensor<32x64xbf16> -> tensor<64x32xbf16>
  %y = graph.matmul %x, %wt : tensor<4x64xbf16>, tensor<64x32xbf16> -> tensor<4x32xbf16>
  graph.return %y : tensor<4x32xbf16>
}

// matmul with a [K, N] int8 weight: b_transposed, convert still in the body.

// CHECK-LABEL: graph.func @matmul_kn_weight(
// CHECK-SAME:    %[[X:.*]]: tensor<4x64xbf16>, %[[W:.*]]: tensor<64x32xi8>)
// CHECK-NOT:     kernel.elementwise
// CHECK:         %[[Y:.*]] = kernel.contract %[[X]], %[[W]] {b_transposed, epilogue_maps = [], nodes = ["wf", "y"]} : tensor<4x64xbf16>, tensor<64x32xi8> -> tensor<4x32xbf16> body {
// CHECK-NEXT:    ^bb0(%[[A:.*]]: bf16, %[[B:.*]]: i8):
// CHECK-NEXT:      %[[AF:.*]] = arith.extf %[[A]] : bf16 to f32
// CHECK-NEXT:      %[[BF:.*]] = arith.sitofp %[[B]] : i8 to f32
// CHECK-NEXT:      arith.mulf %[[AF]], %[[BF]] : f32
// CHECK-NOT:     kernel.elementwise
// CHECK:         graph.return %[[Y]]
graph.func @matmul_kn_weight(%x: tensor<4x64xbf16>, %w: tensor<64x32xi8>) -> tensor<4x32xbf16> {
  %wf = graph.convert %w : tensor<64x32xi8> -> tensor<64x32xbf16>
  %y = graph.matmul %x, %wf : tensor<4x64xbf16>, tensor<64x32xbf16> -> tensor<4x32xbf16>
  graph.return %y : tensor<4x32xbf16>
}

// A convert on the A operand folds too; f32 -> bf16 rounds, so the body
// keeps both steps.

// CHECK-LABEL: graph.func @convert_on_a(
// CHECK-SAME:    %[[X:.*]]: tensor<4x64xf32>, %[[W:.*]]: tensor<32x64xbf16>)
// CHECK-NOT:     kernel.elementwise
// CHECK:         %[[Y:.*]] = kernel.contract %[[X]], %[[W]] {epilogue_maps = [], nodes = ["xb", "y"]} : tensor<4x64xf32>, tensor<32x64xbf16> -> tensor<4x32xbf16> body {
// CHECK-NEXT:    ^bb0(%[[A:.*]]: f32, %[[B:.*]]: bf16):
// CHECK-NEXT:      %[[AB:.*]] = arith.truncf %[[A]] : f32 to bf16
// CHECK-NEXT:      %[[AF:.*]] = arith.extf %[[AB]] : bf16 to f32
// CHECK-NEXT:      %[[BF:.*]] = arith.extf %[[B]] : bf16 to f32
// CHECK-NEXT:      arith.mulf %[[AF]], %[[BF]] : f32
// CHECK:         graph.return %[[Y]]
graph.func @convert_on_a(%x: tensor<4x64xf32>, %w: tensor<32x64xbf16>) -> tensor<4x32xbf16> {
  %xb = graph.convert %x : tensor<4x64xf32> -> tensor<4x64xbf16>
  %y = graph.linear %xb, %w : tensor<4x64xbf16>, tensor<32x64xbf16> -> tensor<4x32xbf16>
  graph.return %y : tensor<4x32xbf16>
}

// A 2-D transposed A operand is read transposed (a_transposed).

// CHECK-LABEL: graph.func @transpose_on_a(
// CHECK-SAME:    %[[X:.*]]: tensor<64x4xf16>, %[[W:.*]]: tensor<32x64xf16>)
// CHECK-NOT:     kernel.elementwise
// CHECK:         %[[Y:.*]] = kernel.contract %[[X]], %[[W]] {a_transposed, epilogue_maps = [], nodes = ["xt", "y"]} : tensor<64x4xf16>, tensor<32x64xf16> -> tensor<4x32xf16>
// CHECK:         graph.return %[[Y]]
graph.func @transpose_on_a(%x: tensor<64x4xf16>, %w: tensor<32x64xf16>) -> tensor<4x32xf16> {
  %xt = graph.transpose %x : tensor<64x4xf16> -> tensor<4x64xf16>
  %y = graph.linear %xt, %w : tensor<4x64xf16>, tensor<32x64xf16> -> tensor<4x32xf16>
  graph.return %y : tensor<4x32xf16>
}

// A batched A operand cannot be read transposed: the transpose stays a kernel.

// CHECK-LABEL: graph.func @batched_transpose_on_a(
// CHECK-SAME:    %[[X:.*]]: tensor<2x64x4xf16>, %[[W:.*]]: tensor<32x64xf16>)
// CHECK:         %[[XT:.*]] = kernel.elementwise %[[X]] : tensor<2x64x4xf16> {indexing_maps = [#[[$T3]]], nodes = ["xt"]} -> tensor<2x4x64xf16>
// CHECK:         %[[Y:.*]] = kernel.contract %[[XT]], %[[W]] {epilogue_maps = [], nodes = ["y"]}
// CHECK:         graph.return %[[Y]]
graph.func @batched_transpose_on_a(%x: tensor<2x64x4xf16>, %w: tensor<32x64xf16>) -> tensor<2x4x32xf16> {
  %xt = graph.transpose %x : tensor<2x64x4xf16> -> tensor<2x4x64xf16>
  %y = graph.linear %xt, %w : tensor<2x4x64xf16>, tensor<32x64xf16> -> tensor<2x4x32xf16>
  graph.return %y : tensor<2x4x32xf16>
}

// Bias add and silu become the epilogue: silu is x / (1 + exp(-x)), and each
// node still rounds to bf16.

// CHECK-LABEL: graph.func @bias_silu(
// CHECK-SAME:    %[[X:.*]]: tensor<1x64xbf16>, %[[W:.*]]: tensor<32x64xbf16>, %[[BIAS:.*]]: tensor<32xbf16>)
// CHECK-NOT:     kernel.elementwise
// CHECK:         %[[ACT:.*]] = kernel.contract %[[X]], %[[W]] epilogue(%[[BIAS]] : tensor<32xbf16>)
// CHECK-SAME:      {epilogue_maps = [#[[$ROW]]], nodes = ["y", "yb", "act"]}
// CHECK:         } epilogue {
// CHECK-NEXT:    ^bb0(%[[ACC:.*]]: f32, %[[E:.*]]: bf16):
// CHECK-NEXT:      %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT:      %[[Y:.*]] = arith.truncf %[[ACC]] : f32 to bf16
// CHECK-NEXT:      %[[YF:.*]] = arith.extf %[[Y]] : bf16 to f32
// CHECK-NEXT:      %[[BF:.*]] = arith.extf %[[E]] : bf16 to f32
// CHECK-NEXT:      %[[SUM:.*]] = arith.addf %[[YF]], %[[BF]] : f32
// CHECK-NEXT:      %[[YB:.*]] = arith.truncf %[[SUM]] : f32 to bf16
// CHECK-NEXT:      %[[V:.*]] = arith.extf %[[YB]] : bf16 to f32
// CHECK-NEXT:      %[[NEG:.*]] = arith.negf %[[V]] : f32
// CHECK-NEXT:      %[[EXP:.*]] = math.exp %[[NEG]] : f32
// CHECK-NEXT:      %[[DEN:.*]] = arith.addf %[[ONE]], %[[EXP]] : f32
// CHECK-NEXT:      %[[Q:.*]] = arith.divf %[[V]], %[[DEN]] : f32
// CHECK-NEXT:      %[[R:.*]] = arith.truncf %[[Q]] : f32 to bf16
// CHECK-NEXT:      kernel.yield %[[R]] : bf16
// CHECK-NEXT:    }
// CHECK-NEXT:    graph.return %[[ACT]]
graph.func @bias_silu(%x: tensor<1x64xbf16>, %w: tensor<32x64xbf16>, %bias: tensor<32xbf16>) -> tensor<1x32xbf16> {
  %y = graph.linear %x, %w : tensor<1x64xbf16>, tensor<32x64xbf16> -> tensor<1x32xbf16>
  %yb = graph.add %y, %bias : tensor<1x32xbf16>, tensor<32xbf16> -> tensor<1x32xbf16>
  %act = graph.silu %yb : tensor<1x32xbf16> -> tensor<1x32xbf16>
  graph.return %act : tensor<1x32xbf16>
}

// Elementwise nodes only: one kernel; %a is read twice at the same indexing
// and becomes one input.

// CHECK-LABEL: graph.func @elementwise_only(
// CHECK-SAME:    %[[A:.*]]: tensor<4x8xf16>, %[[B:.*]]: tensor<8xf16>)
// CHECK-NEXT:    %[[M:.*]] = kernel.elementwise %[[A]], %[[B]] : tensor<4x8xf16>, tensor<8xf16>
// CHECK-SAME:      {indexing_maps = [#[[$ID2]], #[[$ROW]]], nodes = ["s", "r", "m"]} -> tensor<4x8xf16> {
// CHECK-NEXT:    ^bb0(%[[IN0:.*]]: f16, %[[IN1:.*]]: f16):
// CHECK:           arith.addf
// CHECK:           arith.maximumf
// CHECK:           arith.mulf
// CHECK:           kernel.yield %{{.*}} : f16
// CHECK-NEXT:    }
// CHECK-NEXT:    graph.return %[[M]]
graph.func @elementwise_only(%a: tensor<4x8xf16>, %b: tensor<8xf16>) -> tensor<4x8xf16> {
  %s = graph.add %a, %b : tensor<4x8xf16>, tensor<8xf16> -> tensor<4x8xf16>
  %r = graph.relu %s : tensor<4x8xf16> -> tensor<4x8xf16>
  %m = graph.mul %r, %a : tensor<4x8xf16>, tensor<4x8xf16> -> tensor<4x8xf16>
  graph.return %m : tensor<4x8xf16>
}

// Two linears sharing x (the SwiGLU gate of examples/mlp_silu.graph): one
// contraction over both weights (siblings, fuse-siblings.mlir), with
// silu(gate) * up in its epilogue.

// CHECK-LABEL: graph.func @shared_activation(
// CHECK-SAME:    %[[X:.*]]: tensor<1x64xbf16>, %[[W1:.*]]: tensor<32x64xbf16>, %[[W3:.*]]: tensor<32x64xbf16>)
// CHECK-NOT:     kernel.elementwise
// CHECK:         %[[H:.*]] = kernel.contract %[[X]], %[[W1]] siblings(%[[W3]] : tensor<32x64xbf16>)
// CHECK-SAME:      nodes = ["gate", "act", "up", "h"]
// CHECK:           math.exp
// CHECK:           arith.mulf
// CHECK-NOT:     kernel.elementwise
// CHECK-NOT:     kernel.contract
// CHECK:         graph.return %[[H]]
graph.func @shared_activation(%x: tensor<1x64xbf16>, %w1: tensor<32x64xbf16>, %w3: tensor<32x64xbf16>) -> tensor<1x32xbf16> {
  %gate = graph.linear %x, %w1 : tensor<1x64xbf16>, tensor<32x64xbf16> -> tensor<1x32xbf16>
  %up = graph.linear %x, %w3 : tensor<1x64xbf16>, tensor<32x64xbf16> -> tensor<1x32xbf16>
  %act = graph.silu %gate : tensor<1x32xbf16> -> tensor<1x32xbf16>
  %h = graph.mul %act, %up : tensor<1x32xbf16>, tensor<1x32xbf16> -> tensor<1x32xbf16>
  graph.return %h : tensor<1x32xbf16>
}

// A contraction result that is also returned is not fused into the relu's
// epilogue: the relu stays its own kernel.

// CHECK-LABEL: graph.func @contraction_used_twice(
// CHECK:         %[[Y:.*]] = kernel.contract %{{.*}}, %{{.*}} {epilogue_maps = [], nodes = ["y"]}
// CHECK:         } epilogue {
// CHECK-NEXT:    ^bb0(%[[ACC:.*]]: f32):
// CHECK-NEXT:      %[[T:.*]] = arith.truncf %[[ACC]] : f32 to bf16
// CHECK-NEXT:      kernel.yield %[[T]] : bf16
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[R:.*]] = kernel.elementwise %[[Y]] : tensor<1x32xbf16> {indexing_maps = [#[[$ID2]]], nodes = ["r"]}
// CHECK:           arith.maximumf
// CHECK:         graph.return %[[Y]], %[[R]]
graph.func @contraction_used_twice(%x: tensor<1x64xbf16>, %w: tensor<32x64xbf16>) -> (tensor<1x32xbf16>, tensor<1x32xbf16>) {
  %y = graph.linear %x, %w : tensor<1x64xbf16>, tensor<32x64xbf16> -> tensor<1x32xbf16>
  %r = graph.relu %y : tensor<1x32xbf16> -> tensor<1x32xbf16>
  graph.return %y, %r : tensor<1x32xbf16>, tensor<1x32xbf16>
}

// A returned input gets a copy kernel, so every output has its own buffer.

// CHECK-LABEL: graph.func @returns_input(
// CHECK-SAME:    %[[X:.*]]: tensor<4xf32>)
// CHECK-NEXT:    %[[C:.*]] = kernel.elementwise %[[X]] : tensor<4xf32> {indexing_maps = [#[[$ID1]]], nodes = ["copy_0"]} -> tensor<4xf32> {
// CHECK-NEXT:    ^bb0(%[[IN:.*]]: f32):
// CHECK-NEXT:      kernel.yield %[[IN]] : f32
// CHECK-NEXT:    }
// CHECK-NEXT:    graph.return %[[C]]
graph.func @returns_input(%x: tensor<4xf32>) -> tensor<4xf32> {
  graph.return %x : tensor<4xf32>
}

// The same value returned twice: the second output is a copy.

// CHECK-LABEL: graph.func @returns_twice(
// CHECK:         %[[R:.*]] = kernel.elementwise %{{.*}} : tensor<4xf32> {indexing_maps = [#[[$ID1]]], nodes = ["r"]}
// CHECK:           arith.maximumf
// CHECK:         %[[C:.*]] = kernel.elementwise %[[R]] : tensor<4xf32> {indexing_maps = [#[[$ID1]]], nodes = ["copy_1"]} -> tensor<4xf32> {
// CHECK-NEXT:    ^bb0(%[[IN:.*]]: f32):
// CHECK-NEXT:      kernel.yield %[[IN]] : f32
// CHECK-NEXT:    }
// CHECK-NEXT:    graph.return %[[R]], %[[C]]
graph.func @returns_twice(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %r = graph.relu %x : tensor<4xf32> -> tensor<4xf32>
  graph.return %r, %r : tensor<4xf32>, tensor<4xf32>
}

// An input returned twice gets two copies.

// CHECK-LABEL: graph.func @returns_input_twice(
// CHECK-SAME:    %[[X:.*]]: tensor<4xf32>)
// CHECK-NEXT:    %[[C0:.*]] = kernel.elementwise %[[X]] : tensor<4xf32> {indexing_maps = [#[[$ID1]]], nodes = ["copy_0"]}
// CHECK:         %[[C1:.*]] = kernel.elementwise %[[X]] : tensor<4xf32> {indexing_maps = [#[[$ID1]]], nodes = ["copy_1"]}
// CHECK:         graph.return %[[C0]], %[[C1]]
graph.func @returns_input_twice(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  graph.return %x, %x : tensor<4xf32>, tensor<4xf32>
}
