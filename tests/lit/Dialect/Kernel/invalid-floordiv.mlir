// RUN: %mtc-opt %s -split-input-file -verify-diagnostics

// One case per verifier error of floordiv indexing maps (an input read per
// group of outputs or of K) and of i4 results. Every case starts from a
// valid op and breaks one thing; invalid-b-inputs.mlir has b_inputs'.

// An epilogue input may be read per group of outputs too (a repeated
// per-channel input), but the sizes must match.
graph.func @epilogue_floordiv_size(%x: tensor<4x64xf32>, %w: tensor<8x64xf32>, %s: tensor<4xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'kernel.contract' op epilogue input #0: input dim 0 has size 4 but is indexed by d1 floordiv 4 over 8; a group size of at least 2 must divide the iteration dim into exactly the input's size}}
  %0 = kernel.contract %x, %w epilogue(%s : tensor<4xf32>)
      {epilogue_maps = [affine_map<(d0, d1) -> (d1 floordiv 4)>], nodes = ["y"]}
      : tensor<4x64xf32>, tensor<8x64xf32> -> tensor<4x8xf32>
  body {
  ^bb0(%a: f32, %b: f32):
    %1 = arith.mulf %a, %b : f32
    kernel.yield %1 : f32
  } epilogue {
  ^bb0(%acc: f32, %e: f32):
    %1 = arith.mulf %acc, %e : f32
    kernel.yield %1 : f32
  }
  graph.return %0 : tensor<4x8xf32>
}

// -----

// graph.repeat's kernel: groups of 16 over 64 outputs read 4 elements, not 2.
graph.func @ew_floordiv_size(%s: tensor<8x2xbf16>) -> tensor<8x64xbf16> {
  // expected-error @+1 {{'kernel.elementwise' op input #0: input dim 1 has size 2 but is indexed by d1 floordiv 16 over 64; a group size of at least 2 must divide the iteration dim into exactly the input's size}}
  %0 = kernel.elementwise %s : tensor<8x2xbf16> {indexing_maps = [affine_map<(d0, d1) -> (d0, d1 floordiv 16)>], nodes = ["r"]} -> tensor<8x64xbf16> {
  ^bb0(%v: bf16):
    kernel.yield %v : bf16
  }
  graph.return %0 : tensor<8x64xbf16>
}

// -----

// No kernel writes i4 (a storage type for weights).
graph.func @contract_result_i4(%x: tensor<4x64xbf16>, %w: tensor<8x64xi4>, %s: tensor<8x2xbf16>) -> tensor<4x64xbf16> {
  // expected-error @+1 {{'kernel.contract' op result cannot be i4 (a storage type for weights, which kernels only read)}}
  %0 = kernel.contract %x, %w b_inputs(%s : tensor<8x2xbf16>)
      {b_maps = [affine_map<(d0, d1) -> (d0, d1 floordiv 32)>], epilogue_maps = [], nodes = ["y"]}
      : tensor<4x64xbf16>, tensor<8x64xi4> -> tensor<4x8xi4>
  body {
  ^bb0(%a: bf16, %b: i4, %sc: bf16):
    %1 = arith.extf %a : bf16 to f32
    %2 = arith.sitofp %b : i4 to f32
    %3 = arith.extf %sc : bf16 to f32
    %4 = arith.mulf %2, %3 : f32
    %5 = arith.mulf %1, %4 : f32
    kernel.yield %5 : f32
  } epilogue {
  ^bb0(%acc: f32):
    %1 = arith.fptosi %acc : f32 to i4
    kernel.yield %1 : i4
  }
  graph.return %x : tensor<4x64xbf16>
}

// -----

graph.func @ew_result_i4(%x: tensor<4x8xbf16>) -> tensor<4x8xbf16> {
  // expected-error @+1 {{'kernel.elementwise' op result cannot be i4 (a storage type for weights, which kernels only read)}}
  %0 = kernel.elementwise %x : tensor<4x8xbf16> {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], nodes = ["q"]} -> tensor<4x8xi4> {
  ^bb0(%v: bf16):
    %1 = arith.fptosi %v : bf16 to i4
    kernel.yield %1 : i4
  }
  graph.return %x : tensor<4x8xbf16>
}
