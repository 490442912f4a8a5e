// RUN: %mtc-opt %s -split-input-file -verify-diagnostics

// One case per verifier error of kernel.contract's operands, result and
// epilogue maps. Every case starts from a valid op and breaks one thing.
// Its regions' errors are in invalid-regions.mlir, kernel.elementwise's in
// invalid-elementwise.mlir, illegal schedules in invalid-schedules.mlir.

//===----------------------------------------------------------------------===//
// kernel.contract: operands, result, epilogue maps
//===----------------------------------------------------------------------===//

// graph.func inputs are static; a cast makes a dynamic value.
graph.func @dynamic_a(%s: tensor<1x64xf32>, %w: tensor<8x64xf32>) -> tensor<1x8xf32> {
  %x = builtin.unrealized_conversion_cast %s : tensor<1x64xf32> to tensor<?x64xf32>
  // expected-error @+1 {{'kernel.contract' op operand a must be a statically shaped tensor (rank >= 1) of i4, i8, f16, bf16 or f32, got 'tensor<?x64xf32>'}}
  %0 = kernel.contract %x, %w {epilogue_maps = [], nodes = ["y"]}
      : tensor<?x64xf32>, tensor<8x64xf32> -> tensor<1x8xf32>
  body {
  ^bb0(%a: f32, %b: f32):
    %1 = arith.mulf %a, %b : f32
    kernel.yield %1 : f32
  } epilogue {
  ^bb0(%acc: f32):
    kernel.yield %acc : f32
  }
  graph.return %0 : tensor<1x8xf32>
}

// -----

graph.func @f64_result(%x: tensor<1x64xf32>, %w: tensor<8x64xf32>) -> tensor<1x64xf32> {
  // expected-error @+1 {{'kernel.contract' op result must be a statically shaped tensor (rank >= 1) of i4, i8, f16, bf16 or f32, got 'tensor<1x8xf64>'}}
  %0 = kernel.contract %x, %w {epilogue_maps = [], nodes = ["y"]}
      : tensor<1x64xf32>, tensor<8x64xf32> -> tensor<1x8xf64>
  body {
  ^bb0(%a: f32, %b: f32):
    %1 = arith.mulf %a, %b : f32
    kernel.yield %1 : f32
  } epilogue {
  ^bb0(%acc: f32):
    %1 = arith.extf %acc : f32 to f64
    kernel.yield %1 : f64
  }
  graph.return %x : tensor<1x64xf32>
}

// -----

graph.func @b_rank(%x: tensor<1x64xf32>, %w: tensor<2x8x64xf32>) -> tensor<1x8xf32> {
  // expected-error @+1 {{'kernel.contract' op operand b must be 2-D, got [2, 8, 64]}}
  %0 = kernel.contract %x, %w {epilogue_maps = [], nodes = ["y"]}
      : tensor<1x64xf32>, tensor<2x8x64xf32> -> tensor<1x8xf32>
  body {
  ^bb0(%a: f32, %b: f32):
    %1 = arith.mulf %a, %b : f32
    kernel.yield %1 : f32
  } epilogue {
  ^bb0(%acc: f32):
    kernel.yield %acc : f32
  }
  graph.return %0 : tensor<1x8xf32>
}

// -----

graph.func @a_transposed_rank(%x: tensor<2x64x4xf32>, %w: tensor<8x64xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'kernel.contract' op a transposed operand a must be 2-D [K, M], got [2, 64, 4]}}
  %0 = kernel.contract %x, %w {a_transposed, epilogue_maps = [], nodes = ["y"]}
      : tensor<2x64x4xf32>, tensor<8x64xf32> -> tensor<4x8xf32>
  body {
  ^bb0(%a: f32, %b: f32):
    %1 = arith.mulf %a, %b : f32
    kernel.yield %1 : f32
  } epilogue {
  ^bb0(%acc: f32):
    kernel.yield %acc : f32
  }
  graph.return %0 : tensor<4x8xf32>
}

// -----

graph.func @k_mismatch(%x: tensor<1x64xf32>, %w: tensor<8x32xf32>) -> tensor<1x8xf32> {
  // expected-error @+1 {{'kernel.contract' op operands disagree on K: a [1, 64] vs b [8, 32]}}
  %0 = kernel.contract %x, %w {epilogue_maps = [], nodes = ["y"]}
      : tensor<1x64xf32>, tensor<8x32xf32> -> tensor<1x8xf32>
  body {
  ^bb0(%a: f32, %b: f32):
    %1 = arith.mulf %a, %b : f32
    kernel.yield %1 : f32
  } epilogue {
  ^bb0(%acc: f32):
    kernel.yield %acc : f32
  }
  graph.return %0 : tensor<1x8xf32>
}

// -----

// With b_transposed, b is [K, N]: the [8, 64] weight of a linear is wrong.
graph.func @k_mismatch_layout(%x: tensor<1x64xf32>, %w: tensor<8x64xf32>) -> tensor<1x64xf32> {
  // expected-error @+1 {{'kernel.contract' op operands disagree on K: a [1, 64] vs b [8, 64] (transposed)}}
  %0 = kernel.contract %x, %w {b_transposed, epilogue_maps = [], nodes = ["y"]}
      : tensor<1x64xf32>, tensor<8x64xf32> -> tensor<1x64xf32>
  body {
  ^bb0(%a: f32, %b: f32):
    %1 = arith.mulf %a, %b : f32
    kernel.yield %1 : f32
  } epilogue {
  ^bb0(%acc: f32):
    kernel.yield %acc : f32
  }
  graph.return %0 : tensor<1x64xf32>
}

// -----

graph.func @k_mismatch_a_transposed(%x: tensor<64x4xf32>, %w: tensor<8x32xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'kernel.contract' op operands disagree on K: a [64, 4] (transposed) vs b [8, 32]}}
  %0 = kernel.contract %x, %w {a_transposed, epilogue_maps = [], nodes = ["y"]}
      : tensor<64x4xf32>, tensor<8x32xf32> -> tensor<4x8xf32>
  body {
  ^bb0(%a: f32, %b: f32):
    %1 = arith.mulf %a, %b : f32
    kernel.yield %1 : f32
  } epilogue {
  ^bb0(%acc: f32):
    kernel.yield %acc : f32
  }
  graph.return %0 : tensor<4x8xf32>
}

// -----

graph.func @result_shape(%x: tensor<2x3x64xf32>, %w: tensor<8x64xf32>) -> tensor<6x8xf32> {
  // expected-error @+1 {{'kernel.contract' op result shape [6, 8] does not match the operands; expected [2, 3, 8]}}
  %0 = kernel.contract %x, %w {epilogue_maps = [], nodes = ["y"]}
      : tensor<2x3x64xf32>, tensor<8x64xf32> -> tensor<6x8xf32>
  body {
  ^bb0(%a: f32, %b: f32):
    %1 = arith.mulf %a, %b : f32
    kernel.yield %1 : f32
  } epilogue {
  ^bb0(%acc: f32):
    kernel.yield %acc : f32
  }
  graph.return %0 : tensor<6x8xf32>
}

// -----

graph.func @result_shape_transposed(%x: tensor<64x4xf32>, %w: tensor<64x8xf32>) -> tensor<8x4xf32> {
  // expected-error @+1 {{'kernel.contract' op result shape [8, 4] does not match the operands; expected [4, 8]}}
  %0 = kernel.contract %x, %w {a_transposed, b_transposed, epilogue_maps = [], nodes = ["y"]}
      : tensor<64x4xf32>, tensor<64x8xf32> -> tensor<8x4xf32>
  body {
  ^bb0(%a: f32, %b: f32):
    %1 = arith.mulf %a, %b : f32
    kernel.yield %1 : f32
  } epilogue {
  ^bb0(%acc: f32):
    kernel.yield %acc : f32
  }
  graph.return %0 : tensor<8x4xf32>
}

// -----

graph.func @map_count(%x: tensor<1x64xf32>, %w: tensor<8x64xf32>, %s: tensor<8xf32>) -> tensor<1x8xf32> {
  // expected-error @+1 {{'kernel.contract' op has 1 epilogue inputs but 0 epilogue maps}}
  %0 = kernel.contract %x, %w epilogue(%s : tensor<8xf32>) {epilogue_maps = [], nodes = ["y"]}
      : tensor<1x64xf32>, tensor<8x64xf32> -> tensor<1x8xf32>
  body {
  ^bb0(%a: f32, %b: f32):
    %1 = arith.mulf %a, %b : f32
    kernel.yield %1 : f32
  } epilogue {
  ^bb0(%acc: f32, %e: f32):
    %1 = arith.mulf %acc, %e : f32
    kernel.yield %1 : f32
  }
  graph.return %0 : tensor<1x8xf32>
}

// -----

graph.func @map_dims(%x: tensor<1x64xf32>, %w: tensor<8x64xf32>, %s: tensor<8xf32>) -> tensor<1x8xf32> {
  // expected-error @+1 {{'kernel.contract' op epilogue input #0: map affine_map<(d0) -> (d0)> must have 2 dims and no symbols}}
  %0 = kernel.contract %x, %w epilogue(%s : tensor<8xf32>)
      {epilogue_maps = [affine_map<(d0) -> (d0)>], nodes = ["y"]}
      : tensor<1x64xf32>, tensor<8x64xf32> -> tensor<1x8xf32>
  body {
  ^bb0(%a: f32, %b: f32):
    %1 = arith.mulf %a, %b : f32
    kernel.yield %1 : f32
  } epilogue {
  ^bb0(%acc: f32, %e: f32):
    %1 = arith.mulf %acc, %e : f32
    kernel.yield %1 : f32
  }
  graph.return %0 : tensor<1x8xf32>
}

// -----

graph.func @map_symbols(%x: tensor<1x64xf32>, %w: tensor<8x64xf32>, %s: tensor<8xf32>) -> tensor<1x8xf32> {
  // expected-error @+1 {{'kernel.contract' op epilogue input #0: map affine_map<(d0, d1)[s0] -> (d1)> must have 2 dims and no symbols}}
  %0 = kernel.contract %x, %w epilogue(%s : tensor<8xf32>)
      {epilogue_maps = [affine_map<(d0, d1)[s0] -> (d1)>], nodes = ["y"]}
      : tensor<1x64xf32>, tensor<8x64xf32> -> tensor<1x8xf32>
  body {
  ^bb0(%a: f32, %b: f32):
    %1 = arith.mulf %a, %b : f32
    kernel.yield %1 : f32
  } epilogue {
  ^bb0(%acc: f32, %e: f32):
    %1 = arith.mulf %acc, %e : f32
    kernel.yield %1 : f32
  }
  graph.return %0 : tensor<1x8xf32>
}

// -----

graph.func @map_results(%x: tensor<1x64xf32>, %w: tensor<8x64xf32>, %s: tensor<8xf32>) -> tensor<1x8xf32> {
  // expected-error @+1 {{'kernel.contract' op epilogue input #0: map affine_map<(d0, d1) -> (d0, d1)> has 2 results but the input has rank 1}}
  %0 = kernel.contract %x, %w epilogue(%s : tensor<8xf32>)
      {epilogue_maps = [affine_map<(d0, d1) -> (d0, d1)>], nodes = ["y"]}
      : tensor<1x64xf32>, tensor<8x64xf32> -> tensor<1x8xf32>
  body {
  ^bb0(%a: f32, %b: f32):
    %1 = arith.mulf %a, %b : f32
    kernel.yield %1 : f32
  } epilogue {
  ^bb0(%acc: f32, %e: f32):
    %1 = arith.mulf %acc, %e : f32
    kernel.yield %1 : f32
  }
  graph.return %0 : tensor<1x8xf32>
}

// -----

graph.func @map_dim_size(%x: tensor<4x64xf32>, %w: tensor<8x64xf32>, %s: tensor<8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'kernel.contract' op epilogue input #0: input dim 0 has size 8 but is indexed by d0 of size 4}}
  %0 = kernel.contract %x, %w epilogue(%s : tensor<8xf32>)
      {epilogue_maps = [affine_map<(d0, d1) -> (d0)>], nodes = ["y"]}
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

graph.func @map_expr(%x: tensor<4x64xf32>, %w: tensor<8x64xf32>, %s: tensor<8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'kernel.contract' op epilogue input #0: map result #0 must be a dim, a dim floordiv a constant, or the constant 0}}
  %0 = kernel.contract %x, %w epilogue(%s : tensor<8xf32>)
      {epilogue_maps = [affine_map<(d0, d1) -> (d1 * 2)>], nodes = ["y"]}
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

graph.func @map_constant(%x: tensor<4x64xf32>, %w: tensor<8x64xf32>, %s: tensor<1xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'kernel.contract' op epilogue input #0: map result #0 must be a dim, a dim floordiv a constant, or the constant 0}}
  %0 = kernel.contract %x, %w epilogue(%s : tensor<1xf32>)
      {epilogue_maps = [affine_map<(d0, d1) -> (1)>], nodes = ["y"]}
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

graph.func @broadcast_non_1(%x: tensor<4x64xf32>, %w: tensor<8x64xf32>, %s: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'kernel.contract' op epilogue input #0: input dim 0 has size 4 but is broadcast (indexed by 0); only size-1 dims broadcast}}
  %0 = kernel.contract %x, %w epilogue(%s : tensor<4x8xf32>)
      {epilogue_maps = [affine_map<(d0, d1) -> (0, d1)>], nodes = ["y"]}
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

graph.func @epilogue_input_f64(%x: tensor<1x64xf32>, %w: tensor<8x64xf32>, %s32: tensor<8xf32>) -> tensor<1x8xf32> {
  %s = builtin.unrealized_conversion_cast %s32 : tensor<8xf32> to tensor<8xf64>
  // expected-error @+1 {{'kernel.contract' op epilogue input #0 must be a statically shaped tensor (rank >= 1) of i4, i8, f16, bf16 or f32, got 'tensor<8xf64>'}}
  %0 = kernel.contract %x, %w epilogue(%s : tensor<8xf64>)
      {epilogue_maps = [affine_map<(d0, d1) -> (d1)>], nodes = ["y"]}
      : tensor<1x64xf32>, tensor<8x64xf32> -> tensor<1x8xf32>
  body {
  ^bb0(%a: f32, %b: f32):
    %1 = arith.mulf %a, %b : f32
    kernel.yield %1 : f32
  } epilogue {
  ^bb0(%acc: f32, %e: f64):
    kernel.yield %acc : f32
  }
  graph.return %0 : tensor<1x8xf32>
}
