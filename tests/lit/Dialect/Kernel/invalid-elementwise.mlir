// RUN: %mtc-opt %s -split-input-file -verify-diagnostics

// One case per kernel.elementwise verifier error. Every case starts from a
// valid op and breaks one thing.

graph.func @ew_result(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'kernel.elementwise' op result must be a statically shaped tensor (rank >= 1) of i4, i8, f16, bf16 or f32, got 'tensor<?xf32>'}}
  %0 = kernel.elementwise %x : tensor<4xf32> {indexing_maps = [affine_map<(d0) -> (d0)>], nodes = ["r"]} -> tensor<?xf32> {
  ^bb0(%v: f32):
    kernel.yield %v : f32
  }
  graph.return %x : tensor<4xf32>
}

// -----

graph.func @ew_map_count(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'kernel.elementwise' op has 2 inputs but 1 indexing maps}}
  %0 = kernel.elementwise %x, %y : tensor<4xf32>, tensor<4xf32> {indexing_maps = [affine_map<(d0) -> (d0)>], nodes = ["r"]} -> tensor<4xf32> {
  ^bb0(%v: f32, %w: f32):
    %1 = arith.addf %v, %w : f32
    kernel.yield %1 : f32
  }
  graph.return %0 : tensor<4xf32>
}

// -----

graph.func @ew_input_type(%x: tensor<4xf32>, %y8: tensor<4xi8>) -> tensor<4xf32> {
  %y = builtin.unrealized_conversion_cast %y8 : tensor<4xi8> to tensor<4xi32>
  // expected-error @+1 {{'kernel.elementwise' op input #1 must be a statically shaped tensor (rank >= 1) of i4, i8, f16, bf16 or f32, got 'tensor<4xi32>'}}
  %0 = kernel.elementwise %x, %y : tensor<4xf32>, tensor<4xi32> {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], nodes = ["r"]} -> tensor<4xf32> {
  ^bb0(%v: f32, %w: i32):
    kernel.yield %v : f32
  }
  graph.return %0 : tensor<4xf32>
}

// -----

graph.func @ew_map_results(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'kernel.elementwise' op input #0: map affine_map<(d0, d1) -> (d1)> has 1 results but the input has rank 2}}
  %0 = kernel.elementwise %x : tensor<4x8xf32> {indexing_maps = [affine_map<(d0, d1) -> (d1)>], nodes = ["r"]} -> tensor<4x8xf32> {
  ^bb0(%v: f32):
    kernel.yield %v : f32
  }
  graph.return %0 : tensor<4x8xf32>
}

// -----

// A transpose map on a tensor that is not transposed.
graph.func @ew_transpose_size(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'kernel.elementwise' op input #0: input dim 0 has size 4 but is indexed by d1 of size 8}}
  %0 = kernel.elementwise %x : tensor<4x8xf32> {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>], nodes = ["r"]} -> tensor<4x8xf32> {
  ^bb0(%v: f32):
    kernel.yield %v : f32
  }
  graph.return %0 : tensor<4x8xf32>
}

// -----

graph.func @ew_bad_expr(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'kernel.elementwise' op input #0: map result #1 must be a dim, a dim floordiv a constant, or the constant 0}}
  %0 = kernel.elementwise %x : tensor<4x8xf32> {indexing_maps = [affine_map<(d0, d1) -> (d0, d1 + 1)>], nodes = ["r"]} -> tensor<4x8xf32> {
  ^bb0(%v: f32):
    kernel.yield %v : f32
  }
  graph.return %0 : tensor<4x8xf32>
}

// -----

graph.func @ew_broadcast_non_1(%x: tensor<4x8xf32>, %b: tensor<2x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'kernel.elementwise' op input #1: input dim 0 has size 2 but is broadcast (indexed by 0); only size-1 dims broadcast}}
  %0 = kernel.elementwise %x, %b : tensor<4x8xf32>, tensor<2x8xf32> {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (0, d1)>], nodes = ["r"]} -> tensor<4x8xf32> {
  ^bb0(%v: f32, %w: f32):
    %1 = arith.addf %v, %w : f32
    kernel.yield %1 : f32
  }
  graph.return %0 : tensor<4x8xf32>
}

// -----

graph.func @ew_arg_count(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'kernel.elementwise' op body takes 2 arguments, expected 1}}
  %0 = kernel.elementwise %x : tensor<4xf32> {indexing_maps = [affine_map<(d0) -> (d0)>], nodes = ["r"]} -> tensor<4xf32> {
  ^bb0(%v: f32, %w: f32):
    kernel.yield %v : f32
  }
  graph.return %0 : tensor<4xf32>
}

// -----

graph.func @ew_arg_type(%x: tensor<4xi8>) -> tensor<4xf32> {
  // expected-error @+1 {{'kernel.elementwise' op body argument #0 has type 'f32', expected 'i8'}}
  %0 = kernel.elementwise %x : tensor<4xi8> {indexing_maps = [affine_map<(d0) -> (d0)>], nodes = ["r"]} -> tensor<4xf32> {
  ^bb0(%v: f32):
    kernel.yield %v : f32
  }
  graph.return %0 : tensor<4xf32>
}

// -----

graph.func @ew_yield_type(%x: tensor<4xbf16>) -> tensor<4xbf16> {
  // expected-error @+1 {{'kernel.elementwise' op body yields 'f32', expected 'bf16'}}
  %0 = kernel.elementwise %x : tensor<4xbf16> {indexing_maps = [affine_map<(d0) -> (d0)>], nodes = ["r"]} -> tensor<4xbf16> {
  ^bb0(%v: bf16):
    %1 = arith.extf %v : bf16 to f32
    kernel.yield %1 : f32
  }
  graph.return %0 : tensor<4xbf16>
}

// -----

graph.func @ew_vector_op(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = kernel.elementwise %x : tensor<4xf32> {indexing_maps = [affine_map<(d0) -> (d0)>], nodes = ["r"]} -> tensor<4xf32> {
  ^bb0(%v: f32):
    // expected-error @+1 {{'arith.constant' op is not supported inside a kernel body (allowed: scalar arith conversions and arithmetic, math.exp, math.rsqrt)}}
    %c = arith.constant dense<1.0> : vector<4xf32>
    kernel.yield %v : f32
  }
  graph.return %0 : tensor<4xf32>
}

// -----

graph.func @ew_integer_op(%x: tensor<4xi8>) -> tensor<4xi8> {
  %0 = kernel.elementwise %x : tensor<4xi8> {indexing_maps = [affine_map<(d0) -> (d0)>], nodes = ["r"]} -> tensor<4xi8> {
  ^bb0(%v: i8):
    // expected-error @+1 {{'arith.muli' op is not supported inside a kernel body (allowed: scalar arith conversions and arithmetic, math.exp, math.rsqrt)}}
    %1 = arith.muli %v, %v : i8
    kernel.yield %1 : i8
  }
  graph.return %0 : tensor<4xi8>
}
