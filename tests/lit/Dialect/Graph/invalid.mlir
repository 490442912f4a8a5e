// RUN: %mtc-opt %s -split-input-file -verify-diagnostics

// One case per verifier error of the graph dialect. Shape and dtype messages
// come from ShapeRules.cpp through the ops' type inference; MLIR's verifier
// then adds "failed to infer returned types" at the same op.

graph.func @linear_k_mismatch(%x: tensor<1x4096xbf16>, %w: tensor<8192x4095xbf16>) -> tensor<1x8192xbf16> {
  // expected-error @+2 {{linear: x [1, 4096] and w [8192, 4095] disagree on K (4096 vs 4095)}}
  // expected-error @+1 {{'graph.linear' op failed to infer returned types}}
  %y = graph.linear %x, %w : tensor<1x4096xbf16>, tensor<8192x4095xbf16> -> tensor<1x8192xbf16>
  graph.return %y : tensor<1x8192xbf16>
}

// -----

graph.func @matmul_k_mismatch(%a: tensor<2x8x64xf32>, %b: tensor<32x16xf32>) -> tensor<2x8x16xf32> {
  // expected-error @+2 {{matmul: a [2, 8, 64] and b [32, 16] disagree on K (64 vs 32)}}
  // expected-error @+1 {{'graph.matmul' op failed to infer returned types}}
  %y = graph.matmul %a, %b : tensor<2x8x64xf32>, tensor<32x16xf32> -> tensor<2x8x16xf32>
  graph.return %y : tensor<2x8x16xf32>
}

// -----

graph.func @linear_w_rank(%x: tensor<1x64xf32>, %w: tensor<2x8x64xf32>) -> tensor<1x8xf32> {
  // expected-error @+2 {{linear: w must be 2-D [N, K], got [2, 8, 64]}}
  // expected-error @+1 {{'graph.linear' op failed to infer returned types}}
  %y = graph.linear %x, %w : tensor<1x64xf32>, tensor<2x8x64xf32> -> tensor<1x8xf32>
  graph.return %y : tensor<1x8xf32>
}

// -----

graph.func @matmul_a_rank(%a: tensor<64xf32>, %b: tensor<64x16xf32>) -> tensor<16xf32> {
  // expected-error @+2 {{matmul: a must have at least two dimensions [..., M, K], got [64]}}
  // expected-error @+1 {{'graph.matmul' op failed to infer returned types}}
  %y = graph.matmul %a, %b : tensor<64xf32>, tensor<64x16xf32> -> tensor<16xf32>
  graph.return %y : tensor<16xf32>
}

// -----

graph.func @matmul_b_rank(%a: tensor<4x64xf32>, %b: tensor<64xf32>) -> tensor<4xf32> {
  // expected-error @+2 {{matmul: b must be 2-D [K, N], got [64]}}
  // expected-error @+1 {{'graph.matmul' op failed to infer returned types}}
  %y = graph.matmul %a, %b : tensor<4x64xf32>, tensor<64xf32> -> tensor<4xf32>
  graph.return %y : tensor<4xf32>
}

// -----

graph.func @linear_dtype_mismatch(%x: tensor<1x4096xbf16>, %w: tensor<8192x4096xi8>) -> tensor<1x8192xbf16> {
  // expected-error @+2 {{linear: element types differ (bf16 vs i8); insert a convert}}
  // expected-error @+1 {{'graph.linear' op failed to infer returned types}}
  %y = graph.linear %x, %w : tensor<1x4096xbf16>, tensor<8192x4096xi8> -> tensor<1x8192xbf16>
  graph.return %y : tensor<1x8192xbf16>
}

// -----

graph.func @matmul_dtype_mismatch(%a: tensor<4x8xf16>, %b: tensor<8x4xbf16>) -> tensor<4x4xf16> {
  // expected-error @+2 {{matmul: element types differ (f16 vs bf16); insert a convert}}
  // expected-error @+1 {{'graph.matmul' op failed to infer returned types}}
  %y = graph.matmul %a, %b : tensor<4x8xf16>, tensor<8x4xbf16> -> tensor<4x4xf16>
  graph.return %y : tensor<4x4xf16>
}

// -----

graph.func @linear_integer(%x: tensor<1x8xi8>, %w: tensor<4x8xi8>) -> tensor<1x4xi8> {
  // expected-error @+2 {{linear: operands must be floating point, got i8; insert a convert}}
  // expected-error @+1 {{'graph.linear' op failed to infer returned types}}
  %y = graph.linear %x, %w : tensor<1x8xi8>, tensor<4x8xi8> -> tensor<1x4xi8>
  graph.return %y : tensor<1x4xi8>
}

// -----

graph.func @relu_integer(%t: tensor<4xi8>) -> tensor<4xi8> {
  // expected-error @+2 {{relu: operands must be floating point, got i8; insert a convert}}
  // expected-error @+1 {{'graph.relu' op failed to infer returned types}}
  %y = graph.relu %t : tensor<4xi8> -> tensor<4xi8>
  graph.return %y : tensor<4xi8>
}

// -----

graph.func @silu_integer(%t: tensor<2x3xi8>) -> tensor<2x3xi8> {
  // expected-error @+2 {{silu: operands must be floating point, got i8; insert a convert}}
  // expected-error @+1 {{'graph.silu' op failed to infer returned types}}
  %y = graph.silu %t : tensor<2x3xi8> -> tensor<2x3xi8>
  graph.return %y : tensor<2x3xi8>
}

// -----

graph.func @mul_broadcast(%a: tensor<1x8192xbf16>, %b: tensor<4096xbf16>) -> tensor<1x8192xbf16> {
  // expected-error @+2 {{mul: shapes [1, 8192] and [4096] cannot be broadcast together (dim 1: 8192 vs 4096)}}
  // expected-error @+1 {{'graph.mul' op failed to infer returned types}}
  %y = graph.mul %a, %b : tensor<1x8192xbf16>, tensor<4096xbf16> -> tensor<1x8192xbf16>
  graph.return %y : tensor<1x8192xbf16>
}

// -----

graph.func @add_broadcast_leading(%a: tensor<3x1x4xf32>, %b: tensor<2x4x4xf32>) -> tensor<3x4x4xf32> {
  // expected-error @+2 {{add: shapes [3, 1, 4] and [2, 4, 4] cannot be broadcast together (dim 0: 3 vs 2)}}
  // expected-error @+1 {{'graph.add' op failed to infer returned types}}
  %y = graph.add %a, %b : tensor<3x1x4xf32>, tensor<2x4x4xf32> -> tensor<3x4x4xf32>
  graph.return %y : tensor<3x4x4xf32>
}

// -----

graph.func @sub_broadcast(%a: tensor<4x3xf16>, %b: tensor<4xf16>) -> tensor<4x3xf16> {
  // expected-error @+2 {{sub: shapes [4, 3] and [4] cannot be broadcast together (dim 1: 3 vs 4)}}
  // expected-error @+1 {{'graph.sub' op failed to infer returned types}}
  %y = graph.sub %a, %b : tensor<4x3xf16>, tensor<4xf16> -> tensor<4x3xf16>
  graph.return %y : tensor<4x3xf16>
}

// -----

graph.func @convert_shape(%w: tensor<4x8xi8>) -> tensor<8x4xbf16> {
  // expected-error @+1 {{'graph.convert' op changes the shape from [4, 8] to [8, 4]; convert keeps the shape}}
  %wf = graph.convert %w : tensor<4x8xi8> -> tensor<8x4xbf16>
  graph.return %wf : tensor<8x4xbf16>
}

// -----

graph.func @transpose_rank1(%t: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error @+2 {{transpose: needs at least two dimensions, got [3]}}
  // expected-error @+1 {{'graph.transpose' op failed to infer returned types}}
  %y = graph.transpose %t : tensor<3xf32> -> tensor<3xf32>
  graph.return %y : tensor<3xf32>
}

// -----

graph.func @transpose_result(%t: tensor<3x4xi8>) -> tensor<3x4xi8> {
  // expected-error @+2 {{'graph.transpose' op inferred type(s) 'tensor<4x3xi8>' are incompatible with return type(s) of operation 'tensor<3x4xi8>'}}
  // expected-error @+1 {{'graph.transpose' op failed to infer returned types}}
  %y = graph.transpose %t : tensor<3x4xi8> -> tensor<3x4xi8>
  graph.return %y : tensor<3x4xi8>
}

// -----

graph.func @add_result_shape(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<8xf32> {
  // expected-error @+2 {{'graph.add' op inferred type(s) 'tensor<4xf32>' are incompatible with return type(s) of operation 'tensor<8xf32>'}}
  // expected-error @+1 {{'graph.add' op failed to infer returned types}}
  %y = graph.add %a, %b : tensor<4xf32>, tensor<4xf32> -> tensor<8xf32>
  graph.return %y : tensor<8xf32>
}

// -----

graph.func @linear_result_dtype(%x: tensor<1x8xbf16>, %w: tensor<4x8xbf16>) -> tensor<1x4xf32> {
  // expected-error @+2 {{'graph.linear' op inferred type(s) 'tensor<1x4xbf16>' are incompatible with return type(s) of operation 'tensor<1x4xf32>'}}
  // expected-error @+1 {{'graph.linear' op failed to infer returned types}}
  %y = graph.linear %x, %w : tensor<1x8xbf16>, tensor<4x8xbf16> -> tensor<1x4xf32>
  graph.return %y : tensor<1x4xf32>
}

// -----

graph.func @return_count(%a: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  // expected-error @+1 {{'graph.return' op returns 1 value but the graph declares 2 outputs}}
  graph.return %a : tensor<4xf32>
}

// -----

graph.func @return_type(%a: tensor<4xf32>, %b: tensor<4xbf16>) -> (tensor<4xf32>, tensor<4xf32>) {
  // expected-error @+1 {{'graph.return' op output #1 has type 'tensor<4xbf16>' but the graph declares 'tensor<4xf32>'}}
  graph.return %a, %b : tensor<4xf32>, tensor<4xbf16>
}

// -----

// expected-error @+1 {{'graph.func' op input #1 must be a statically shaped tensor (rank >= 1) of i4, i8, f16, bf16 or f32, got 'f32'}}
graph.func @scalar_input(%a: tensor<4xf32>, %s: f32) -> tensor<4xf32> {
  graph.return %a : tensor<4xf32>
}

// -----

// expected-error @+1 {{'graph.func' op input #0 must be a statically shaped tensor (rank >= 1) of i4, i8, f16, bf16 or f32, got 'tensor<?x4xf32>'}}
graph.func @dynamic_input(%a: tensor<?x4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  graph.return %b : tensor<4xf32>
}

// -----

// expected-error @+1 {{'graph.func' op input #0 must be a statically shaped tensor (rank >= 1) of i4, i8, f16, bf16 or f32, got 'tensor<f32>'}}
graph.func @rank0_input(%a: tensor<f32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  graph.return %b : tensor<4xf32>
}

// -----

// expected-error @+1 {{'graph.func' op input #0 must be a statically shaped tensor (rank >= 1) of i4, i8, f16, bf16 or f32, got 'tensor<4xf64>'}}
graph.func @f64_input(%a: tensor<4xf64>, %b: tensor<4xf32>) -> tensor<4xf32> {
  graph.return %b : tensor<4xf32>
}

// -----

// expected-error @+1 {{'graph.func' op result #0 must be a statically shaped tensor, got 'tensor<?xf32>'}}
graph.func @dynamic_result(%b: tensor<4xf32>) -> tensor<?xf32> {
  graph.return %b : tensor<4xf32>
}

// -----

// The signature and the entry block disagree; only the generic form can say
// so. FunctionOpInterface's verifier catches this before FuncOp::verify.
// expected-error @+1 {{'graph.func' op type of entry block argument #0('tensor<4xf16>') must match the type of the corresponding argument in function signature('tensor<4xf32>')}}
"graph.func"() <{function_type = (tensor<4xf32>) -> (), sym_name = "block_arg_type"}> ({
^bb0(%a: tensor<4xf16>):
  "graph.return"() : () -> ()
}) : () -> ()

// -----

// expected-error @+1 {{'graph.func' op entry block must have 1 arguments to match function signature}}
"graph.func"() <{function_type = (tensor<4xf32>) -> (), sym_name = "block_arg_count"}> ({
^bb0:
  "graph.return"() : () -> ()
}) : () -> ()

// -----

graph.func @node_result_f64(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'graph.convert' op result #0 must be statically shaped tensor (rank >= 1) of i4, i8, f16, bf16 or f32, but got 'tensor<4xf64>'}}
  %y = graph.convert %a : tensor<4xf32> -> tensor<4xf64>
  graph.return %a : tensor<4xf32>
}

// -----

// Operand types are checked by the op definition before type inference.
graph.func @node_operand_f64(%a: tensor<4xf32>) -> tensor<4xf32> {
  %x = builtin.unrealized_conversion_cast %a : tensor<4xf32> to tensor<4xf64>
  // expected-error @+1 {{'graph.relu' op operand #0 must be statically shaped tensor (rank >= 1) of i4, i8, f16, bf16 or f32, but got 'tensor<4xf64>'}}
  %r = graph.relu %x : tensor<4xf64> -> tensor<4xf32>
  graph.return %a : tensor<4xf32>
}

// -----

// graph.repeat and i4 (a storage type: two elements a byte, only converted).
graph.func @repeat_result_shape(%s: tensor<8x2xbf16>) -> tensor<8x128xbf16> {
  // expected-error @+1 {{'graph.repeat' op result type 'tensor<8x128xbf16>' does not match the input repeated in groups of 32; expected 'tensor<8x64xbf16>'}}
  %r = graph.repeat %s {group = 32 : i64} : tensor<8x2xbf16> -> tensor<8x128xbf16>
  graph.return %r : tensor<8x128xbf16>
}

// -----

// repeat keeps the element type.
graph.func @repeat_result_dtype(%s: tensor<8x2xbf16>) -> tensor<8x128xf32> {
  // expected-error @+1 {{'graph.repeat' op result type 'tensor<8x128xf32>' does not match the input repeated in groups of 64; expected 'tensor<8x128xbf16>'}}
  %r = graph.repeat %s {group = 64 : i64} : tensor<8x2xbf16> -> tensor<8x128xf32>
  graph.return %r : tensor<8x128xf32>
}

// -----

graph.func @repeat_group_zero(%s: tensor<8x2xbf16>) -> tensor<8x2xbf16> {
  // expected-error @+1 {{'graph.repeat' op attribute 'group' failed to satisfy constraint: 64-bit signless integer attribute whose value is positive}}
  %r = graph.repeat %s {group = 0 : i64} : tensor<8x2xbf16> -> tensor<8x2xbf16>
  graph.return %r : tensor<8x2xbf16>
}

// -----

graph.func @repeat_too_large(%s: tensor<2x1048576xbf16>) -> tensor<2x1048576xbf16> {
  // expected-error @+1 {{'graph.repeat' op result: tensor of shape [2, 1099511627776] is too large (more than 2^40 elements)}}
  %r = graph.repeat %s {group = 1048576 : i64} : tensor<2x1048576xbf16> -> tensor<2x1099511627776xbf16>
  graph.return %s : tensor<2x1048576xbf16>
}

// -----

// i4 is a storage type: nothing produces it, not even a convert.
graph.func @convert_to_i4(%x: tensor<8x64xbf16>) -> tensor<8x64xbf16> {
  // expected-error @+1 {{'graph.convert' op cannot produce i4; i4 is a storage type for weights (graph inputs, converted before use)}}
  %q = graph.convert %x : tensor<8x64xbf16> -> tensor<8x64xi4>
  graph.return %x : tensor<8x64xbf16>
}

// -----

graph.func @convert_i4_to_i4(%w: tensor<8x64xi4>) -> tensor<8x64xbf16> {
  // expected-error @+1 {{'graph.convert' op cannot produce i4; i4 is a storage type for weights (graph inputs, converted before use)}}
  %q = graph.convert %w : tensor<8x64xi4> -> tensor<8x64xi4>
  %f = graph.convert %q : tensor<8x64xi4> -> tensor<8x64xbf16>
  graph.return %f : tensor<8x64xbf16>
}

// -----

// Only convert reads i4: not transpose, repeat, the binary ops or linear.
graph.func @transpose_i4(%w: tensor<8x64xi4>) -> tensor<8x64xi8> {
  // expected-error @+1 {{'graph.transpose' op i4 operands must be converted first (i4 is a storage type); insert a convert}}
  %t = graph.transpose %w : tensor<8x64xi4> -> tensor<64x8xi4>
  %q = graph.convert %w : tensor<8x64xi4> -> tensor<8x64xi8>
  graph.return %q : tensor<8x64xi8>
}

// -----

graph.func @repeat_i4(%w: tensor<8x64xi4>) -> tensor<8x64xi8> {
  // expected-error @+1 {{'graph.repeat' op i4 operands must be converted first (i4 is a storage type); insert a convert}}
  %r = graph.repeat %w {group = 2 : i64} : tensor<8x64xi4> -> tensor<8x128xi4>
  %q = graph.convert %w : tensor<8x64xi4> -> tensor<8x64xi8>
  graph.return %q : tensor<8x64xi8>
}

// -----

graph.func @add_i4(%w: tensor<8x64xi4>) -> tensor<8x64xi8> {
  // expected-error @+1 {{'graph.add' op i4 operands must be converted first (i4 is a storage type); insert a convert}}
  %a = graph.add %w, %w : tensor<8x64xi4>, tensor<8x64xi4> -> tensor<8x64xi4>
  %q = graph.convert %w : tensor<8x64xi4> -> tensor<8x64xi8>
  graph.return %q : tensor<8x64xi8>
}

// -----

graph.func @linear_i4(%x: tensor<1x64xbf16>, %w: tensor<8x64xi4>) -> tensor<1x8xbf16> {
  // expected-error @+1 {{'graph.linear' op i4 operands must be converted first (i4 is a storage type); insert a convert}}
  %y = graph.linear %x, %w : tensor<1x64xbf16>, tensor<8x64xi4> -> tensor<1x8xbf16>
  graph.return %y : tensor<1x8xbf16>
}

// -----

// An i4 input cannot be returned either.
// expected-error @+1 {{'graph.func' op result #0 is i4; graph results cannot be i4 (a storage type for weights, which are graph inputs)}}
graph.func @i4_result(%w: tensor<8x64xi4>) -> tensor<8x64xi4> {
  graph.return %w : tensor<8x64xi4>
}

// -----

// Two elements a byte along the last dimension: it must be even.
// expected-error @+1 {{'graph.func' op input #0: i4 tensors pack two elements a byte along the last dimension, which must be even; got [8, 63]}}
graph.func @i4_odd_last_dim(%w: tensor<8x63xi4>) -> tensor<8x63xbf16> {
  %f = graph.convert %w : tensor<8x63xi4> -> tensor<8x63xbf16>
  graph.return %f : tensor<8x63xbf16>
}

// -----

// expected-error @+1 {{'graph.func' op input #0: i4 tensors pack two elements a byte along the last dimension, which must be even; got [7]}}
graph.func @i4_odd_rank1(%w: tensor<7xi4>) -> tensor<7xf32> {
  %f = graph.convert %w : tensor<7xi4> -> tensor<7xf32>
  graph.return %f : tensor<7xf32>
}

// -----

// A node's result type is checked before its op's rules: an odd i4 result
// gets the packing error, not convert's "cannot produce i4".
graph.func @i4_odd_node_result(%x: tensor<8x64xbf16>) -> tensor<8x64xbf16> {
  // expected-error @+1 {{'graph.convert' op result: i4 tensors pack two elements a byte along the last dimension, which must be even; got [8, 63]}}
  %q = graph.convert %x : tensor<8x64xbf16> -> tensor<8x63xi4>
  graph.return %x : tensor<8x64xbf16>
}

// -----

graph.func @sum_of_integers(%x: tensor<4x8xi8>) -> tensor<4x1xi8> {
  // expected-error @+2 {{sum: operands must be floating point, got i8; insert a convert}}
  // expected-error @+1 {{'graph.sum' op failed to infer returned types}}
  %s = graph.sum %x : tensor<4x8xi8> -> tensor<4x1xi8>
  graph.return %s : tensor<4x1xi8>
}

// -----

graph.func @mean_keeps_the_dimension(%x: tensor<4x8xf32>) -> tensor<4xf32> {
  // expected-error @+2 {{'graph.mean' op inferred type(s) 'tensor<4x1xf32>' are incompatible with return type(s) of operation 'tensor<4xf32>'}}
  // expected-error @+1 {{'graph.mean' op failed to infer returned types}}
  %s = graph.mean %x : tensor<4x8xf32> -> tensor<4xf32>
  graph.return %s : tensor<4xf32>
}

// -----

graph.func @constant_shape() -> tensor<2xf32> {
  // expected-error @+1 {{'graph.constant' op result must be a tensor<1x...> of a float type, got 'tensor<2xf32>'}}
  %c = graph.constant 1.0 : tensor<2xf32>
  graph.return %c : tensor<2xf32>
}

// -----

graph.func @constant_integer() -> tensor<1xi8> {
  // expected-error @+1 {{'graph.constant' op result must be a tensor<1x...> of a float type, got 'tensor<1xi8>'}}
  %c = graph.constant 1.0 : tensor<1xi8>
  graph.return %c : tensor<1xi8>
}

// -----

graph.func @constant_infinite() -> tensor<1xf32> {
  // expected-error @+1 {{'graph.constant' op value must be finite}}
  %c = graph.constant 1.0e400 : tensor<1xf32>
  graph.return %c : tensor<1xf32>
}
