// RUN: %mtc-opt %s -split-input-file -verify-diagnostics

// One case per kernel.contract / kernel.elementwise verifier error, then
// illegal schedules (Schedule.cpp, checkSchedule). Every case starts from a
// valid op and breaks one thing.

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

//===----------------------------------------------------------------------===//
// kernel.contract: the body
//===----------------------------------------------------------------------===//

// -----

graph.func @body_arg_count(%x: tensor<1x64xf32>, %w: tensor<8x64xf32>) -> tensor<1x8xf32> {
  // expected-error @+1 {{'kernel.contract' op body takes 1 argument, expected 2}}
  %0 = kernel.contract %x, %w {epilogue_maps = [], nodes = ["y"]}
      : tensor<1x64xf32>, tensor<8x64xf32> -> tensor<1x8xf32>
  body {
  ^bb0(%a: f32):
    %1 = arith.mulf %a, %a : f32
    kernel.yield %1 : f32
  } epilogue {
  ^bb0(%acc: f32):
    kernel.yield %acc : f32
  }
  graph.return %0 : tensor<1x8xf32>
}

// -----

graph.func @body_arg_type(%x: tensor<1x64xbf16>, %w: tensor<8x64xi8>) -> tensor<1x8xbf16> {
  // expected-error @+1 {{'kernel.contract' op body argument #1 has type 'bf16', expected 'i8'}}
  %0 = kernel.contract %x, %w {epilogue_maps = [], nodes = ["y"]}
      : tensor<1x64xbf16>, tensor<8x64xi8> -> tensor<1x8xbf16>
  body {
  ^bb0(%a: bf16, %b: bf16):
    %1 = arith.extf %a : bf16 to f32
    %2 = arith.extf %b : bf16 to f32
    %3 = arith.mulf %1, %2 : f32
    kernel.yield %3 : f32
  } epilogue {
  ^bb0(%acc: f32):
    %1 = arith.truncf %acc : f32 to bf16
    kernel.yield %1 : bf16
  }
  graph.return %0 : tensor<1x8xbf16>
}

// -----

graph.func @body_yield_type(%x: tensor<1x64xf16>, %w: tensor<8x64xf16>) -> tensor<1x8xf16> {
  // expected-error @+1 {{'kernel.contract' op body yields 'f16', expected 'f32'}}
  %0 = kernel.contract %x, %w {epilogue_maps = [], nodes = ["y"]}
      : tensor<1x64xf16>, tensor<8x64xf16> -> tensor<1x8xf16>
  body {
  ^bb0(%a: f16, %b: f16):
    %1 = arith.mulf %a, %b : f16
    kernel.yield %1 : f16
  } epilogue {
  ^bb0(%acc: f32):
    %1 = arith.truncf %acc : f32 to f16
    kernel.yield %1 : f16
  }
  graph.return %0 : tensor<1x8xf16>
}

// -----

graph.func @body_not_a_product(%x: tensor<1x64xf32>, %w: tensor<8x64xf32>) -> tensor<1x8xf32> {
  // expected-error @+1 {{'kernel.contract' op body must yield the arith.mulf of its two converted operands}}
  %0 = kernel.contract %x, %w {epilogue_maps = [], nodes = ["y"]}
      : tensor<1x64xf32>, tensor<8x64xf32> -> tensor<1x8xf32>
  body {
  ^bb0(%a: f32, %b: f32):
    %1 = arith.addf %a, %b : f32
    kernel.yield %1 : f32
  } epilogue {
  ^bb0(%acc: f32):
    kernel.yield %acc : f32
  }
  graph.return %0 : tensor<1x8xf32>
}

// -----

// %b's chain must start at %b, not at %a.
graph.func @body_wrong_chain(%x: tensor<1x64xbf16>, %w: tensor<8x64xi8>) -> tensor<1x8xbf16> {
  // expected-error @+1 {{'kernel.contract' op body must multiply %a and %b, each converted to f32 by a chain of arith conversions}}
  %0 = kernel.contract %x, %w {epilogue_maps = [], nodes = ["y"]}
      : tensor<1x64xbf16>, tensor<8x64xi8> -> tensor<1x8xbf16>
  body {
  ^bb0(%a: bf16, %b: i8):
    %1 = arith.extf %a : bf16 to f32
    %2 = arith.extf %a : bf16 to f32
    %3 = arith.mulf %1, %2 : f32
    kernel.yield %3 : f32
  } epilogue {
  ^bb0(%acc: f32):
    %1 = arith.truncf %acc : f32 to bf16
    kernel.yield %1 : bf16
  }
  graph.return %0 : tensor<1x8xbf16>
}

// -----

// A constant is not a conversion of %b.
graph.func @body_constant_operand(%x: tensor<1x64xf32>, %w: tensor<8x64xf32>) -> tensor<1x8xf32> {
  // expected-error @+1 {{'kernel.contract' op body must multiply %a and %b, each converted to f32 by a chain of arith conversions}}
  %0 = kernel.contract %x, %w {epilogue_maps = [], nodes = ["y"]}
      : tensor<1x64xf32>, tensor<8x64xf32> -> tensor<1x8xf32>
  body {
  ^bb0(%a: f32, %b: f32):
    %c = arith.constant 2.0 : f32
    %1 = arith.mulf %a, %c : f32
    kernel.yield %1 : f32
  } epilogue {
  ^bb0(%acc: f32):
    kernel.yield %acc : f32
  }
  graph.return %0 : tensor<1x8xf32>
}

// -----

// Arithmetic between the conversion and the product is not a conversion.
graph.func @body_scaled_chain(%x: tensor<1x64xf32>, %w: tensor<8x64xi8>) -> tensor<1x8xf32> {
  // expected-error @+1 {{'kernel.contract' op body must multiply %a and %b, each converted to f32 by a chain of arith conversions}}
  %0 = kernel.contract %x, %w {epilogue_maps = [], nodes = ["y"]}
      : tensor<1x64xf32>, tensor<8x64xi8> -> tensor<1x8xf32>
  body {
  ^bb0(%a: f32, %b: i8):
    %1 = arith.sitofp %b : i8 to f32
    %2 = arith.negf %1 : f32
    %3 = arith.mulf %a, %2 : f32
    kernel.yield %3 : f32
  } epilogue {
  ^bb0(%acc: f32):
    kernel.yield %acc : f32
  }
  graph.return %0 : tensor<1x8xf32>
}

// -----

graph.func @body_extra_op(%x: tensor<1x64xf32>, %w: tensor<8x64xf32>) -> tensor<1x8xf32> {
  // expected-error @+1 {{'kernel.contract' op body may only hold the two conversion chains, the product and the yield}}
  %0 = kernel.contract %x, %w {epilogue_maps = [], nodes = ["y"]}
      : tensor<1x64xf32>, tensor<8x64xf32> -> tensor<1x8xf32>
  body {
  ^bb0(%a: f32, %b: f32):
    %unused = arith.addf %a, %b : f32
    %1 = arith.mulf %a, %b : f32
    kernel.yield %1 : f32
  } epilogue {
  ^bb0(%acc: f32):
    kernel.yield %acc : f32
  }
  graph.return %0 : tensor<1x8xf32>
}

// -----

graph.func @body_integer_op(%x: tensor<1x64xi8>, %w: tensor<8x64xi8>) -> tensor<1x8xf32> {
  %0 = kernel.contract %x, %w {epilogue_maps = [], nodes = ["y"]}
      : tensor<1x64xi8>, tensor<8x64xi8> -> tensor<1x8xf32>
  body {
  ^bb0(%a: i8, %b: i8):
    // expected-error @+1 {{'arith.addi' op is not supported inside a kernel body (allowed: scalar arith conversions and arithmetic, math.exp, math.rsqrt)}}
    %s = arith.addi %a, %b : i8
    %1 = arith.sitofp %s : i8 to f32
    %2 = arith.sitofp %b : i8 to f32
    %3 = arith.mulf %1, %2 : f32
    kernel.yield %3 : f32
  } epilogue {
  ^bb0(%acc: f32):
    kernel.yield %acc : f32
  }
  graph.return %0 : tensor<1x8xf32>
}

//===----------------------------------------------------------------------===//
// kernel.contract: the epilogue
//===----------------------------------------------------------------------===//

// -----

graph.func @epilogue_yield_type(%x: tensor<1x64xbf16>, %w: tensor<8x64xbf16>) -> tensor<1x8xbf16> {
  // expected-error @+1 {{'kernel.contract' op epilogue yields 'f32', expected 'bf16'}}
  %0 = kernel.contract %x, %w {epilogue_maps = [], nodes = ["y"]}
      : tensor<1x64xbf16>, tensor<8x64xbf16> -> tensor<1x8xbf16>
  body {
  ^bb0(%a: bf16, %b: bf16):
    %1 = arith.extf %a : bf16 to f32
    %2 = arith.extf %b : bf16 to f32
    %3 = arith.mulf %1, %2 : f32
    kernel.yield %3 : f32
  } epilogue {
  ^bb0(%acc: f32):
    kernel.yield %acc : f32
  }
  graph.return %0 : tensor<1x8xbf16>
}

// -----

graph.func @epilogue_acc_type(%x: tensor<1x64xbf16>, %w: tensor<8x64xbf16>) -> tensor<1x8xbf16> {
  // expected-error @+1 {{'kernel.contract' op epilogue argument #0 has type 'bf16', expected 'f32'}}
  %0 = kernel.contract %x, %w {epilogue_maps = [], nodes = ["y"]}
      : tensor<1x64xbf16>, tensor<8x64xbf16> -> tensor<1x8xbf16>
  body {
  ^bb0(%a: bf16, %b: bf16):
    %1 = arith.extf %a : bf16 to f32
    %2 = arith.extf %b : bf16 to f32
    %3 = arith.mulf %1, %2 : f32
    kernel.yield %3 : f32
  } epilogue {
  ^bb0(%acc: bf16):
    kernel.yield %acc : bf16
  }
  graph.return %0 : tensor<1x8xbf16>
}

// -----

graph.func @epilogue_input_type(%x: tensor<1x64xbf16>, %w: tensor<8x64xbf16>, %s: tensor<8xbf16>) -> tensor<1x8xbf16> {
  // expected-error @+1 {{'kernel.contract' op epilogue argument #1 has type 'f32', expected 'bf16'}}
  %0 = kernel.contract %x, %w epilogue(%s : tensor<8xbf16>)
      {epilogue_maps = [affine_map<(d0, d1) -> (d1)>], nodes = ["y"]}
      : tensor<1x64xbf16>, tensor<8x64xbf16> -> tensor<1x8xbf16>
  body {
  ^bb0(%a: bf16, %b: bf16):
    %1 = arith.extf %a : bf16 to f32
    %2 = arith.extf %b : bf16 to f32
    %3 = arith.mulf %1, %2 : f32
    kernel.yield %3 : f32
  } epilogue {
  ^bb0(%acc: f32, %e: f32):
    %1 = arith.mulf %acc, %e : f32
    %2 = arith.truncf %1 : f32 to bf16
    kernel.yield %2 : bf16
  }
  graph.return %0 : tensor<1x8xbf16>
}

// -----

graph.func @epilogue_arg_count(%x: tensor<1x64xbf16>, %w: tensor<8x64xbf16>, %s: tensor<8xbf16>) -> tensor<1x8xbf16> {
  // expected-error @+1 {{'kernel.contract' op epilogue takes 1 argument, expected 2}}
  %0 = kernel.contract %x, %w epilogue(%s : tensor<8xbf16>)
      {epilogue_maps = [affine_map<(d0, d1) -> (d1)>], nodes = ["y"]}
      : tensor<1x64xbf16>, tensor<8x64xbf16> -> tensor<1x8xbf16>
  body {
  ^bb0(%a: bf16, %b: bf16):
    %1 = arith.extf %a : bf16 to f32
    %2 = arith.extf %b : bf16 to f32
    %3 = arith.mulf %1, %2 : f32
    kernel.yield %3 : f32
  } epilogue {
  ^bb0(%acc: f32):
    %1 = arith.truncf %acc : f32 to bf16
    kernel.yield %1 : bf16
  }
  graph.return %0 : tensor<1x8xbf16>
}

// -----

llvm.func @external(f32) -> f32

graph.func @epilogue_call(%x: tensor<1x64xf32>, %w: tensor<8x64xf32>) -> tensor<1x8xf32> {
  %0 = kernel.contract %x, %w {epilogue_maps = [], nodes = ["y"]}
      : tensor<1x64xf32>, tensor<8x64xf32> -> tensor<1x8xf32>
  body {
  ^bb0(%a: f32, %b: f32):
    %1 = arith.mulf %a, %b : f32
    kernel.yield %1 : f32
  } epilogue {
  ^bb0(%acc: f32):
    // expected-error @+1 {{'llvm.call' op is not supported inside a kernel epilogue (allowed: scalar arith conversions and arithmetic, math.exp, math.rsqrt)}}
    %1 = llvm.call @external(%acc) : (f32) -> f32
    kernel.yield %1 : f32
  }
  graph.return %0 : tensor<1x8xf32>
}

// -----

graph.func @epilogue_sqrt(%x: tensor<1x64xf32>, %w: tensor<8x64xf32>) -> tensor<1x8xf32> {
  %0 = kernel.contract %x, %w {epilogue_maps = [], nodes = ["y"]}
      : tensor<1x64xf32>, tensor<8x64xf32> -> tensor<1x8xf32>
  body {
  ^bb0(%a: f32, %b: f32):
    %1 = arith.mulf %a, %b : f32
    kernel.yield %1 : f32
  } epilogue {
  ^bb0(%acc: f32):
    // expected-error @+1 {{'math.sqrt' op is not supported inside a kernel epilogue (allowed: scalar arith conversions and arithmetic, math.exp, math.rsqrt)}}
    %1 = math.sqrt %acc : f32
    kernel.yield %1 : f32
  }
  graph.return %0 : tensor<1x8xf32>
}

//===----------------------------------------------------------------------===//
// kernel.elementwise
//===----------------------------------------------------------------------===//

// -----

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

//===----------------------------------------------------------------------===//
// Schedules
//===----------------------------------------------------------------------===//

// -----

graph.func @warps_3(%x: tensor<1x4096xbf16>, %w: tensor<8192x4096xi8>) -> tensor<1x8192xbf16> {
  // expected-error @+1 {{'kernel.contract' op schedule simt w3 r1 kw1 v16 u1 mt1 sk1 is illegal: warps must be a power of two in [1, 32]}}
  %0 = kernel.contract %x, %w {epilogue_maps = [], nodes = ["y"],
       schedule = #kernel.schedule<kind = simt, warps = 3, rows = 1, kwarps = 1, vec = 16, unroll = 1, mtile = 1, splitk = 1>}
      : tensor<1x4096xbf16>, tensor<8192x4096xi8> -> tensor<1x8192xbf16>
  body {
  ^bb0(%a: bf16, %b: i8):
    %1 = arith.extf %a : bf16 to f32
    %2 = arith.sitofp %b : i8 to f32
    %3 = arith.mulf %1, %2 : f32
    kernel.yield %3 : f32
  } epilogue {
  ^bb0(%acc: f32):
    %1 = arith.truncf %acc : f32 to bf16
    kernel.yield %1 : bf16
  }
  graph.return %0 : tensor<1x8192xbf16>
}

// -----

graph.func @kwarps_not_dividing(%x: tensor<1x4096xbf16>, %w: tensor<8192x4096xi8>) -> tensor<1x8192xbf16> {
  // expected-error @+1 {{'kernel.contract' op schedule simt w4 r1 kw8 v16 u1 mt1 sk1 is illegal: kwarps must be a power of two dividing warps}}
  %0 = kernel.contract %x, %w {epilogue_maps = [], nodes = ["y"],
       schedule = #kernel.schedule<kind = simt, warps = 4, rows = 1, kwarps = 8, vec = 16, unroll = 1, mtile = 1, splitk = 1>}
      : tensor<1x4096xbf16>, tensor<8192x4096xi8> -> tensor<1x8192xbf16>
  body {
  ^bb0(%a: bf16, %b: i8):
    %1 = arith.extf %a : bf16 to f32
    %2 = arith.sitofp %b : i8 to f32
    %3 = arith.mulf %1, %2 : f32
    kernel.yield %3 : f32
  } epilogue {
  ^bb0(%acc: f32):
    %1 = arith.truncf %acc : f32 to bf16
    kernel.yield %1 : bf16
  }
  graph.return %0 : tensor<1x8192xbf16>
}

// -----

graph.func @rows_32(%x: tensor<1x4096xbf16>, %w: tensor<8192x4096xi8>) -> tensor<1x8192xbf16> {
  // expected-error @+1 {{'kernel.contract' op schedule simt w4 r32 kw1 v16 u1 mt1 sk1 is illegal: rows must be a power of two in [1, 16]}}
  %0 = kernel.contract %x, %w {epilogue_maps = [], nodes = ["y"],
       schedule = #kernel.schedule<kind = simt, warps = 4, rows = 32, kwarps = 1, vec = 16, unroll = 1, mtile = 1, splitk = 1>}
      : tensor<1x4096xbf16>, tensor<8192x4096xi8> -> tensor<1x8192xbf16>
  body {
  ^bb0(%a: bf16, %b: i8):
    %1 = arith.extf %a : bf16 to f32
    %2 = arith.sitofp %b : i8 to f32
    %3 = arith.mulf %1, %2 : f32
    kernel.yield %3 : f32
  } epilogue {
  ^bb0(%acc: f32):
    %1 = arith.truncf %acc : f32 to bf16
    kernel.yield %1 : bf16
  }
  graph.return %0 : tensor<1x8192xbf16>
}

// -----

graph.func @unroll_3(%x: tensor<1x4096xbf16>, %w: tensor<8192x4096xi8>) -> tensor<1x8192xbf16> {
  // expected-error @+1 {{'kernel.contract' op schedule simt w4 r1 kw1 v16 u3 mt1 sk1 is illegal: unroll must be a power of two in [1, 16]}}
  %0 = kernel.contract %x, %w {epilogue_maps = [], nodes = ["y"],
       schedule = #kernel.schedule<kind = simt, warps = 4, rows = 1, kwarps = 1, vec = 16, unroll = 3, mtile = 1, splitk = 1>}
      : tensor<1x4096xbf16>, tensor<8192x4096xi8> -> tensor<1x8192xbf16>
  body {
  ^bb0(%a: bf16, %b: i8):
    %1 = arith.extf %a : bf16 to f32
    %2 = arith.sitofp %b : i8 to f32
    %3 = arith.mulf %1, %2 : f32
    kernel.yield %3 : f32
  } epilogue {
  ^bb0(%acc: f32):
    %1 = arith.truncf %acc : f32 to bf16
    kernel.yield %1 : bf16
  }
  graph.return %0 : tensor<1x8192xbf16>
}

// -----

graph.func @mtile_exceeds_m(%x: tensor<1x4096xbf16>, %w: tensor<8192x4096xi8>) -> tensor<1x8192xbf16> {
  // expected-error @+1 {{'kernel.contract' op schedule simt w4 r1 kw1 v16 u1 mt2 sk1 is illegal: mtile 2 exceeds M = 1}}
  %0 = kernel.contract %x, %w {epilogue_maps = [], nodes = ["y"],
       schedule = #kernel.schedule<kind = simt, warps = 4, rows = 1, kwarps = 1, vec = 16, unroll = 1, mtile = 2, splitk = 1>}
      : tensor<1x4096xbf16>, tensor<8192x4096xi8> -> tensor<1x8192xbf16>
  body {
  ^bb0(%a: bf16, %b: i8):
    %1 = arith.extf %a : bf16 to f32
    %2 = arith.sitofp %b : i8 to f32
    %3 = arith.mulf %1, %2 : f32
    kernel.yield %3 : f32
  } epilogue {
  ^bb0(%acc: f32):
    %1 = arith.truncf %acc : f32 to bf16
    kernel.yield %1 : bf16
  }
  graph.return %0 : tensor<1x8192xbf16>
}

// -----

graph.func @mtile_17(%x: tensor<32x4096xbf16>, %w: tensor<8192x4096xi8>) -> tensor<32x8192xbf16> {
  // expected-error @+1 {{'kernel.contract' op schedule simt w4 r1 kw1 v16 u1 mt17 sk1 is illegal: mtile must be in [1, 16]}}
  %0 = kernel.contract %x, %w {epilogue_maps = [], nodes = ["y"],
       schedule = #kernel.schedule<kind = simt, warps = 4, rows = 1, kwarps = 1, vec = 16, unroll = 1, mtile = 17, splitk = 1>}
      : tensor<32x4096xbf16>, tensor<8192x4096xi8> -> tensor<32x8192xbf16>
  body {
  ^bb0(%a: bf16, %b: i8):
    %1 = arith.extf %a : bf16 to f32
    %2 = arith.sitofp %b : i8 to f32
    %3 = arith.mulf %1, %2 : f32
    kernel.yield %3 : f32
  } epilogue {
  ^bb0(%acc: f32):
    %1 = arith.truncf %acc : f32 to bf16
    kernel.yield %1 : bf16
  }
  graph.return %0 : tensor<32x8192xbf16>
}

// -----

graph.func @splitk_128(%x: tensor<1x4096xbf16>, %w: tensor<8192x4096xi8>) -> tensor<1x8192xbf16> {
  // expected-error @+1 {{'kernel.contract' op schedule simt w4 r1 kw1 v16 u1 mt1 sk128 is illegal: splitk must be a power of two in [1, 64]}}
  %0 = kernel.contract %x, %w {epilogue_maps = [], nodes = ["y"],
       schedule = #kernel.schedule<kind = simt, warps = 4, rows = 1, kwarps = 1, vec = 16, unroll = 1, mtile = 1, splitk = 128>}
      : tensor<1x4096xbf16>, tensor<8192x4096xi8> -> tensor<1x8192xbf16>
  body {
  ^bb0(%a: bf16, %b: i8):
    %1 = arith.extf %a : bf16 to f32
    %2 = arith.sitofp %b : i8 to f32
    %3 = arith.mulf %1, %2 : f32
    kernel.yield %3 : f32
  } epilogue {
  ^bb0(%acc: f32):
    %1 = arith.truncf %acc : f32 to bf16
    kernel.yield %1 : bf16
  }
  graph.return %0 : tensor<1x8192xbf16>
}

// -----

graph.func @vec_too_small(%x: tensor<1x4096xbf16>, %w: tensor<8192x4096xbf16>) -> tensor<1x8192xbf16> {
  // expected-error @+1 {{'kernel.contract' op schedule simt w4 r1 kw1 v1 u1 mt1 sk1 is illegal: vec must be a power of two in [2, 16] bytes for bf16 weights}}
  %0 = kernel.contract %x, %w {epilogue_maps = [], nodes = ["y"],
       schedule = #kernel.schedule<kind = simt, warps = 4, rows = 1, kwarps = 1, vec = 1, unroll = 1, mtile = 1, splitk = 1>}
      : tensor<1x4096xbf16>, tensor<8192x4096xbf16> -> tensor<1x8192xbf16>
  body {
  ^bb0(%a: bf16, %b: bf16):
    %1 = arith.extf %a : bf16 to f32
    %2 = arith.extf %b : bf16 to f32
    %3 = arith.mulf %1, %2 : f32
    kernel.yield %3 : f32
  } epilogue {
  ^bb0(%acc: f32):
    %1 = arith.truncf %acc : f32 to bf16
    kernel.yield %1 : bf16
  }
  graph.return %0 : tensor<1x8192xbf16>
}

// -----

graph.func @vec_misaligned_k(%x: tensor<1x4104xbf16>, %w: tensor<8192x4104xi8>) -> tensor<1x8192xbf16> {
  // expected-error @+1 {{'kernel.contract' op schedule simt w4 r1 kw1 v16 u1 mt1 sk1 is illegal: vec 16 needs K = 4104 to be a multiple of 16 (aligned vector loads)}}
  %0 = kernel.contract %x, %w {epilogue_maps = [], nodes = ["y"],
       schedule = #kernel.schedule<kind = simt, warps = 4, rows = 1, kwarps = 1, vec = 16, unroll = 1, mtile = 1, splitk = 1>}
      : tensor<1x4104xbf16>, tensor<8192x4104xi8> -> tensor<1x8192xbf16>
  body {
  ^bb0(%a: bf16, %b: i8):
    %1 = arith.extf %a : bf16 to f32
    %2 = arith.sitofp %b : i8 to f32
    %3 = arith.mulf %1, %2 : f32
    kernel.yield %3 : f32
  } epilogue {
  ^bb0(%acc: f32):
    %1 = arith.truncf %acc : f32 to bf16
    kernel.yield %1 : bf16
  }
  graph.return %0 : tensor<1x8192xbf16>
}

// -----

// A [K, N] weight needs N aligned instead.
graph.func @vec_misaligned_n(%x: tensor<1x64xbf16>, %w: tensor<64x20xbf16>) -> tensor<1x20xbf16> {
  // expected-error @+1 {{'kernel.contract' op schedule simt w4 r1 kw1 v16 u1 mt1 sk1 is illegal: vec 16 needs N = 20 to be a multiple of 8 (aligned vector loads)}}
  %0 = kernel.contract %x, %w {b_transposed, epilogue_maps = [], nodes = ["y"],
       schedule = #kernel.schedule<kind = simt, warps = 4, rows = 1, kwarps = 1, vec = 16, unroll = 1, mtile = 1, splitk = 1>}
      : tensor<1x64xbf16>, tensor<64x20xbf16> -> tensor<1x20xbf16>
  body {
  ^bb0(%a: bf16, %b: bf16):
    %1 = arith.extf %a : bf16 to f32
    %2 = arith.extf %b : bf16 to f32
    %3 = arith.mulf %1, %2 : f32
    kernel.yield %3 : f32
  } epilogue {
  ^bb0(%acc: f32):
    %1 = arith.truncf %acc : f32 to bf16
    kernel.yield %1 : bf16
  }
  graph.return %0 : tensor<1x20xbf16>
}

// -----

graph.func @too_many_k_pieces(%x: tensor<1x4096xbf16>, %w: tensor<8192x4096xbf16>) -> tensor<1x8192xbf16> {
  // expected-error @+1 {{'kernel.contract' op schedule simt w4 r1 kw4 v16 u1 mt1 sk8 is illegal: kwarps * splitk = 32 exceeds the 16 K steps of 256}}
  %0 = kernel.contract %x, %w {epilogue_maps = [], nodes = ["y"],
       schedule = #kernel.schedule<kind = simt, warps = 4, rows = 1, kwarps = 4, vec = 16, unroll = 1, mtile = 1, splitk = 8>}
      : tensor<1x4096xbf16>, tensor<8192x4096xbf16> -> tensor<1x8192xbf16>
  body {
  ^bb0(%a: bf16, %b: bf16):
    %1 = arith.extf %a : bf16 to f32
    %2 = arith.extf %b : bf16 to f32
    %3 = arith.mulf %1, %2 : f32
    kernel.yield %3 : f32
  } epilogue {
  ^bb0(%acc: f32):
    %1 = arith.truncf %acc : f32 to bf16
    kernel.yield %1 : bf16
  }
  graph.return %0 : tensor<1x8192xbf16>
}

// -----

graph.func @too_many_k_pieces_kn(%x: tensor<1x16xbf16>, %w: tensor<16x64xbf16>) -> tensor<1x64xbf16> {
  // expected-error @+1 {{'kernel.contract' op schedule simt w4 r1 kw4 v16 u1 mt1 sk8 is illegal: kwarps * splitk exceeds K}}
  %0 = kernel.contract %x, %w {b_transposed, epilogue_maps = [], nodes = ["y"],
       schedule = #kernel.schedule<kind = simt, warps = 4, rows = 1, kwarps = 4, vec = 16, unroll = 1, mtile = 1, splitk = 8>}
      : tensor<1x16xbf16>, tensor<16x64xbf16> -> tensor<1x64xbf16>
  body {
  ^bb0(%a: bf16, %b: bf16):
    %1 = arith.extf %a : bf16 to f32
    %2 = arith.extf %b : bf16 to f32
    %3 = arith.mulf %1, %2 : f32
    kernel.yield %3 : f32
  } epilogue {
  ^bb0(%acc: f32):
    %1 = arith.truncf %acc : f32 to bf16
    kernel.yield %1 : bf16
  }
  graph.return %0 : tensor<1x64xbf16>
}

// -----

graph.func @register_budget(%x: tensor<16x4096xbf16>, %w: tensor<8192x4096xi8>) -> tensor<16x8192xbf16> {
  // expected-error @+1 {{'kernel.contract' op schedule simt w4 r16 kw1 v16 u1 mt16 sk1 is illegal: needs about 472 registers per thread (budget 224); it would spill}}
  %0 = kernel.contract %x, %w {epilogue_maps = [], nodes = ["y"],
       schedule = #kernel.schedule<kind = simt, warps = 4, rows = 16, kwarps = 1, vec = 16, unroll = 1, mtile = 16, splitk = 1>}
      : tensor<16x4096xbf16>, tensor<8192x4096xi8> -> tensor<16x8192xbf16>
  body {
  ^bb0(%a: bf16, %b: i8):
    %1 = arith.extf %a : bf16 to f32
    %2 = arith.sitofp %b : i8 to f32
    %3 = arith.mulf %1, %2 : f32
    kernel.yield %3 : f32
  } epilogue {
  ^bb0(%acc: f32):
    %1 = arith.truncf %acc : f32 to bf16
    kernel.yield %1 : bf16
  }
  graph.return %0 : tensor<16x8192xbf16>
}

// -----

graph.func @shared_memory(%x: tensor<4x4096xbf16>, %w: tensor<4096x8192xbf16>) -> tensor<4x8192xbf16> {
  // expected-error @+1 {{'kernel.contract' op schedule simt w32 r2 kw32 v16 u1 mt4 sk1 is illegal: needs 262144 bytes of shared memory (limit 48 KiB)}}
  %0 = kernel.contract %x, %w {b_transposed, epilogue_maps = [], nodes = ["y"],
       schedule = #kernel.schedule<kind = simt, warps = 32, rows = 2, kwarps = 32, vec = 16, unroll = 1, mtile = 4, splitk = 1>}
      : tensor<4x4096xbf16>, tensor<4096x8192xbf16> -> tensor<4x8192xbf16>
  body {
  ^bb0(%a: bf16, %b: bf16):
    %1 = arith.extf %a : bf16 to f32
    %2 = arith.extf %b : bf16 to f32
    %3 = arith.mulf %1, %2 : f32
    kernel.yield %3 : f32
  } epilogue {
  ^bb0(%acc: f32):
    %1 = arith.truncf %acc : f32 to bf16
    kernel.yield %1 : bf16
  }
  graph.return %0 : tensor<4x8192xbf16>
}

// -----

graph.func @mma(%x: tensor<16x4096xbf16>, %w: tensor<8192x4096xbf16>) -> tensor<16x8192xbf16> {
  // expected-error @+1 {{'kernel.contract' op schedule mma w4 r1 kw1 v8 u1 mt16 sk1 is illegal: mma schedules take vec = 16, 32 or 64 (K elements per lane and step)}}
  %0 = kernel.contract %x, %w {epilogue_maps = [], nodes = ["y"],
       schedule = #kernel.schedule<kind = mma, warps = 4, rows = 1, kwarps = 1, vec = 8, unroll = 1, mtile = 16, splitk = 1>}
      : tensor<16x4096xbf16>, tensor<8192x4096xbf16> -> tensor<16x8192xbf16>
  body {
  ^bb0(%a: bf16, %b: bf16):
    %1 = arith.extf %a : bf16 to f32
    %2 = arith.extf %b : bf16 to f32
    %3 = arith.mulf %1, %2 : f32
    kernel.yield %3 : f32
  } epilogue {
  ^bb0(%acc: f32):
    %1 = arith.truncf %acc : f32 to bf16
    kernel.yield %1 : bf16
  }
  graph.return %0 : tensor<16x8192xbf16>
}

// -----

graph.func @elementwise_schedule_on_contract(%x: tensor<1x4096xbf16>, %w: tensor<8192x4096xi8>) -> tensor<1x8192xbf16> {
  // expected-error @+1 {{'kernel.contract' op schedule elementwise w4 r1 kw1 v4 u1 mt1 sk1 is illegal: a contraction cannot use an elementwise schedule}}
  %0 = kernel.contract %x, %w {epilogue_maps = [], nodes = ["y"],
       schedule = #kernel.schedule<kind = elementwise, warps = 4, rows = 1, kwarps = 1, vec = 4, unroll = 1, mtile = 1, splitk = 1>}
      : tensor<1x4096xbf16>, tensor<8192x4096xi8> -> tensor<1x8192xbf16>
  body {
  ^bb0(%a: bf16, %b: i8):
    %1 = arith.extf %a : bf16 to f32
    %2 = arith.sitofp %b : i8 to f32
    %3 = arith.mulf %1, %2 : f32
    kernel.yield %3 : f32
  } epilogue {
  ^bb0(%acc: f32):
    %1 = arith.truncf %acc : f32 to bf16
    kernel.yield %1 : bf16
  }
  graph.return %0 : tensor<1x8192xbf16>
}

// -----

graph.func @contract_schedule_on_elementwise(%x: tensor<1024xf32>) -> tensor<1024xf32> {
  // expected-error @+1 {{'kernel.elementwise' op schedule simt w4 r1 kw1 v4 u1 mt1 sk1 is illegal: an elementwise kernel needs an elementwise schedule}}
  %0 = kernel.elementwise %x : tensor<1024xf32> {indexing_maps = [affine_map<(d0) -> (d0)>], nodes = ["r"],
       schedule = #kernel.schedule<kind = simt, warps = 4, rows = 1, kwarps = 1, vec = 4, unroll = 1, mtile = 1, splitk = 1>} -> tensor<1024xf32> {
  ^bb0(%v: f32):
    kernel.yield %v : f32
  }
  graph.return %0 : tensor<1024xf32>
}

// -----

graph.func @elementwise_warps_64(%x: tensor<1024xf32>) -> tensor<1024xf32> {
  // expected-error @+1 {{'kernel.elementwise' op schedule elementwise w64 r1 kw1 v4 u1 mt1 sk1 is illegal: warps must be a power of two in [1, 32]}}
  %0 = kernel.elementwise %x : tensor<1024xf32> {indexing_maps = [affine_map<(d0) -> (d0)>], nodes = ["r"],
       schedule = #kernel.schedule<kind = elementwise, warps = 64, rows = 1, kwarps = 1, vec = 4, unroll = 1, mtile = 1, splitk = 1>} -> tensor<1024xf32> {
  ^bb0(%v: f32):
    kernel.yield %v : f32
  }
  graph.return %0 : tensor<1024xf32>
}

// -----

graph.func @elementwise_vec_32(%x: tensor<1024xf32>) -> tensor<1024xf32> {
  // expected-error @+1 {{'kernel.elementwise' op schedule elementwise w4 r1 kw1 v32 u1 mt1 sk1 is illegal: vec (elements per thread) must be a power of two in [1, 16]}}
  %0 = kernel.elementwise %x : tensor<1024xf32> {indexing_maps = [affine_map<(d0) -> (d0)>], nodes = ["r"],
       schedule = #kernel.schedule<kind = elementwise, warps = 4, rows = 1, kwarps = 1, vec = 32, unroll = 1, mtile = 1, splitk = 1>} -> tensor<1024xf32> {
  ^bb0(%v: f32):
    kernel.yield %v : f32
  }
  graph.return %0 : tensor<1024xf32>
}

// -----

graph.func @elementwise_unroll(%x: tensor<1024xf32>) -> tensor<1024xf32> {
  // expected-error @+1 {{'kernel.elementwise' op schedule elementwise w4 r1 kw1 v4 u2 mt1 sk1 is illegal: rows, kwarps, unroll, mtile, splitk and cluster must be 1 for elementwise kernels}}
  %0 = kernel.elementwise %x : tensor<1024xf32> {indexing_maps = [affine_map<(d0) -> (d0)>], nodes = ["r"],
       schedule = #kernel.schedule<kind = elementwise, warps = 4, rows = 1, kwarps = 1, vec = 4, unroll = 2, mtile = 1, splitk = 1>} -> tensor<1024xf32> {
  ^bb0(%v: f32):
    kernel.yield %v : f32
  }
  graph.return %0 : tensor<1024xf32>
}

// -----

graph.func @tiled(%x: tensor<64x4096xbf16>, %w: tensor<8192x4096xi8>) -> tensor<64x8192xbf16> {
  // expected-error @+1 {{'kernel.contract' op schedule tiled w4 r1 kw1 v32 u1 mt64 sk1 is illegal: stages must be in [2, 8]}}
  %0 = kernel.contract %x, %w {epilogue_maps = [], nodes = ["y"],
       schedule = #kernel.schedule<kind = tiled, warps = 4, rows = 1, kwarps = 1, vec = 32, unroll = 1, mtile = 64, splitk = 1, stages = 1>}
      : tensor<64x4096xbf16>, tensor<8192x4096xi8> -> tensor<64x8192xbf16>
  body {
  ^bb0(%a: bf16, %b: i8):
    %1 = arith.extf %a : bf16 to f32
    %2 = arith.sitofp %b : i8 to f32
    %3 = arith.mulf %1, %2 : f32
    kernel.yield %3 : f32
  } epilogue {
  ^bb0(%acc: f32):
    %1 = arith.truncf %acc : f32 to bf16
    kernel.yield %1 : bf16
  }
  graph.return %0 : tensor<64x8192xbf16>
}
