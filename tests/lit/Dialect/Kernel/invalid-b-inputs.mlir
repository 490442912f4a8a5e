// RUN: %mtc-opt %s -split-input-file -verify-diagnostics

// One case per verifier error of kernel.contract's b_inputs (the group-wise
// scales and zeros of an int4 or int8 weight, dequantized in the body).
// Every case starts from a valid op and breaks one thing; floordiv maps and
// i4 results are in invalid-floordiv.mlir, int4's illegal schedules in
// invalid-int4-schedules.mlir. The valid op: x [4, 64], an i4 weight
// [8, 64] and its scales [8, 2], one per row and group of 32 k's.

//===----------------------------------------------------------------------===//
// kernel.contract: b_inputs and b_maps
//===----------------------------------------------------------------------===//

graph.func @b_maps_missing(%x: tensor<4x64xbf16>, %w: tensor<8x64xi4>, %s: tensor<8x2xbf16>) -> tensor<4x8xbf16> {
  // expected-error @+1 {{'kernel.contract' op has 1 b inputs but 0 b maps}}
  %0 = kernel.contract %x, %w b_inputs(%s : tensor<8x2xbf16>)
      {epilogue_maps = [], nodes = ["y"]}
      : tensor<4x64xbf16>, tensor<8x64xi4> -> tensor<4x8xbf16>
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
    %1 = arith.truncf %acc : f32 to bf16
    kernel.yield %1 : bf16
  }
  graph.return %0 : tensor<4x8xbf16>
}

// -----

graph.func @b_maps_without_inputs(%x: tensor<4x64xbf16>, %w: tensor<8x64xi4>) -> tensor<4x8xbf16> {
  // expected-error @+1 {{'kernel.contract' op has 0 b inputs but 1 b maps}}
  %0 = kernel.contract %x, %w
      {b_maps = [affine_map<(d0, d1) -> (d0, d1 floordiv 32)>], epilogue_maps = [], nodes = ["y"]}
      : tensor<4x64xbf16>, tensor<8x64xi4> -> tensor<4x8xbf16>
  body {
  ^bb0(%a: bf16, %b: i4):
    %1 = arith.extf %a : bf16 to f32
    %2 = arith.sitofp %b : i4 to f32
    %3 = arith.mulf %1, %2 : f32
    kernel.yield %3 : f32
  } epilogue {
  ^bb0(%acc: f32):
    %1 = arith.truncf %acc : f32 to bf16
    kernel.yield %1 : bf16
  }
  graph.return %0 : tensor<4x8xbf16>
}

// -----

// A [K, N] weight (matmul's layout) takes no b inputs.
graph.func @b_transposed(%x: tensor<4x64xbf16>, %w: tensor<64x8xi4>, %s: tensor<8x2xbf16>) -> tensor<4x8xbf16> {
  // expected-error @+1 {{'kernel.contract' op b inputs need the weight stored [N, K] (not b_transposed)}}
  %0 = kernel.contract %x, %w b_inputs(%s : tensor<8x2xbf16>)
      {b_transposed, b_maps = [affine_map<(d0, d1) -> (d0, d1 floordiv 32)>], epilogue_maps = [], nodes = ["y"]}
      : tensor<4x64xbf16>, tensor<64x8xi4> -> tensor<4x8xbf16>
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
    %1 = arith.truncf %acc : f32 to bf16
    kernel.yield %1 : bf16
  }
  graph.return %0 : tensor<4x8xbf16>
}

// -----

graph.func @b_input_f64(%x: tensor<4x64xbf16>, %w: tensor<8x64xi4>, %s32: tensor<8x2xf32>) -> tensor<4x8xbf16> {
  %s = builtin.unrealized_conversion_cast %s32 : tensor<8x2xf32> to tensor<8x2xf64>
  // expected-error @+1 {{'kernel.contract' op b input #0 must be a statically shaped tensor (rank >= 1) of i4, i8, f16, bf16 or f32, got 'tensor<8x2xf64>'}}
  %0 = kernel.contract %x, %w b_inputs(%s : tensor<8x2xf64>)
      {b_maps = [affine_map<(d0, d1) -> (d0, d1 floordiv 32)>], epilogue_maps = [], nodes = ["y"]}
      : tensor<4x64xbf16>, tensor<8x64xi4> -> tensor<4x8xbf16>
  body {
  ^bb0(%a: bf16, %b: i4, %sc: f64):
    %1 = arith.extf %a : bf16 to f32
    %2 = arith.sitofp %b : i4 to f32
    %3 = arith.truncf %sc : f64 to f32
    %4 = arith.mulf %2, %3 : f32
    %5 = arith.mulf %1, %4 : f32
    kernel.yield %5 : f32
  } epilogue {
  ^bb0(%acc: f32):
    %1 = arith.truncf %acc : f32 to bf16
    kernel.yield %1 : bf16
  }
  graph.return %0 : tensor<4x8xbf16>
}

// -----

// b maps are maps from the weight's (n, k).
graph.func @b_map_dims(%x: tensor<4x64xbf16>, %w: tensor<8x64xi4>, %s: tensor<8x2xbf16>) -> tensor<4x8xbf16> {
  // expected-error @+1 {{'kernel.contract' op b input #0: map affine_map<(d0, d1, d2) -> (d0, d2 floordiv 32)> must have 2 dims and no symbols}}
  %0 = kernel.contract %x, %w b_inputs(%s : tensor<8x2xbf16>)
      {b_maps = [affine_map<(d0, d1, d2) -> (d0, d2 floordiv 32)>], epilogue_maps = [], nodes = ["y"]}
      : tensor<4x64xbf16>, tensor<8x64xi4> -> tensor<4x8xbf16>
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
    %1 = arith.truncf %acc : f32 to bf16
    kernel.yield %1 : bf16
  }
  graph.return %0 : tensor<4x8xbf16>
}

// -----

graph.func @b_map_row_size(%x: tensor<4x64xbf16>, %w: tensor<8x64xi4>, %s: tensor<4x2xbf16>) -> tensor<4x8xbf16> {
  // expected-error @+1 {{'kernel.contract' op b input #0: input dim 0 has size 4 but is indexed by d0 of size 8}}
  %0 = kernel.contract %x, %w b_inputs(%s : tensor<4x2xbf16>)
      {b_maps = [affine_map<(d0, d1) -> (d0, d1 floordiv 32)>], epilogue_maps = [], nodes = ["y"]}
      : tensor<4x64xbf16>, tensor<8x64xi4> -> tensor<4x8xbf16>
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
    %1 = arith.truncf %acc : f32 to bf16
    kernel.yield %1 : bf16
  }
  graph.return %0 : tensor<4x8xbf16>
}

// -----

// b inputs are read per row or per group of K, not per element.
graph.func @b_map_per_element(%x: tensor<4x64xbf16>, %w: tensor<8x64xi4>, %s: tensor<8x64xbf16>) -> tensor<4x8xbf16> {
  // expected-error @+1 {{'kernel.contract' op b input #0 is read per element of the weight (d1); b inputs are read per row (d0) or per group of K (d1 floordiv G)}}
  %0 = kernel.contract %x, %w b_inputs(%s : tensor<8x64xbf16>)
      {b_maps = [affine_map<(d0, d1) -> (d0, d1)>], epilogue_maps = [], nodes = ["y"]}
      : tensor<4x64xbf16>, tensor<8x64xi4> -> tensor<4x8xbf16>
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
    %1 = arith.truncf %acc : f32 to bf16
    kernel.yield %1 : bf16
  }
  graph.return %0 : tensor<4x8xbf16>
}

// -----

graph.func @b_map_groups_differ(%x: tensor<4x64xbf16>, %w: tensor<8x64xi4>, %s: tensor<8x2xbf16>, %z: tensor<8x4xbf16>) -> tensor<4x8xbf16> {
  // expected-error @+1 {{'kernel.contract' op b input #1 is read in groups of 16 but an earlier b input in groups of 32; all b inputs share one group size}}
  %0 = kernel.contract %x, %w b_inputs(%s, %z : tensor<8x2xbf16>, tensor<8x4xbf16>)
      {b_maps = [affine_map<(d0, d1) -> (d0, d1 floordiv 32)>, affine_map<(d0, d1) -> (d0, d1 floordiv 16)>], epilogue_maps = [], nodes = ["y"]}
      : tensor<4x64xbf16>, tensor<8x64xi4> -> tensor<4x8xbf16>
  body {
  ^bb0(%a: bf16, %b: i4, %sc: bf16, %zp: bf16):
    %1 = arith.extf %a : bf16 to f32
    %2 = arith.sitofp %b : i4 to f32
    %3 = arith.extf %sc : bf16 to f32
    %4 = arith.mulf %2, %3 : f32
    %5 = arith.extf %zp : bf16 to f32
    %6 = arith.addf %4, %5 : f32
    %7 = arith.mulf %1, %6 : f32
    kernel.yield %7 : f32
  } epilogue {
  ^bb0(%acc: f32):
    %1 = arith.truncf %acc : f32 to bf16
    kernel.yield %1 : bf16
  }
  graph.return %0 : tensor<4x8xbf16>
}

// -----

// Groups of 16 over K = 64 make 4 groups, not 2.
graph.func @b_map_group_size(%x: tensor<4x64xbf16>, %w: tensor<8x64xi4>, %s: tensor<8x2xbf16>) -> tensor<4x8xbf16> {
  // expected-error @+1 {{'kernel.contract' op b input #0: input dim 1 has size 2 but is indexed by d1 floordiv 16 over 64; a group size of at least 2 must divide the iteration dim into exactly the input's size}}
  %0 = kernel.contract %x, %w b_inputs(%s : tensor<8x2xbf16>)
      {b_maps = [affine_map<(d0, d1) -> (d0, d1 floordiv 16)>], epilogue_maps = [], nodes = ["y"]}
      : tensor<4x64xbf16>, tensor<8x64xi4> -> tensor<4x8xbf16>
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
    %1 = arith.truncf %acc : f32 to bf16
    kernel.yield %1 : bf16
  }
  graph.return %0 : tensor<4x8xbf16>
}

// -----

graph.func @b_map_group_negative(%x: tensor<4x64xbf16>, %w: tensor<8x64xi4>, %s: tensor<8x2xbf16>) -> tensor<4x8xbf16> {
  // expected-error @+1 {{'kernel.contract' op b input #0: input dim 1 has size 2 but is indexed by d1 floordiv -32 over 64; a group size of at least 2 must divide the iteration dim into exactly the input's size}}
  %0 = kernel.contract %x, %w b_inputs(%s : tensor<8x2xbf16>)
      {b_maps = [affine_map<(d0, d1) -> (d0, d1 floordiv -32)>], epilogue_maps = [], nodes = ["y"]}
      : tensor<4x64xbf16>, tensor<8x64xi4> -> tensor<4x8xbf16>
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
    %1 = arith.truncf %acc : f32 to bf16
    kernel.yield %1 : bf16
  }
  graph.return %0 : tensor<4x8xbf16>
}

// -----

graph.func @b_map_expr(%x: tensor<4x64xbf16>, %w: tensor<8x64xi4>, %s: tensor<8x2xbf16>) -> tensor<4x8xbf16> {
  // expected-error @+1 {{'kernel.contract' op b input #0: map result #1 must be a dim, a dim floordiv a constant, or the constant 0}}
  %0 = kernel.contract %x, %w b_inputs(%s : tensor<8x2xbf16>)
      {b_maps = [affine_map<(d0, d1) -> (d0, d1 mod 2)>], epilogue_maps = [], nodes = ["y"]}
      : tensor<4x64xbf16>, tensor<8x64xi4> -> tensor<4x8xbf16>
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
    %1 = arith.truncf %acc : f32 to bf16
    kernel.yield %1 : bf16
  }
  graph.return %0 : tensor<4x8xbf16>
}

// -----

// The body takes a, b, then one argument per b input.
graph.func @body_arg_count(%x: tensor<4x64xbf16>, %w: tensor<8x64xi4>, %s: tensor<8x2xbf16>) -> tensor<4x8xbf16> {
  // expected-error @+1 {{'kernel.contract' op body takes 2 arguments, expected 3}}
  %0 = kernel.contract %x, %w b_inputs(%s : tensor<8x2xbf16>)
      {b_maps = [affine_map<(d0, d1) -> (d0, d1 floordiv 32)>], epilogue_maps = [], nodes = ["y"]}
      : tensor<4x64xbf16>, tensor<8x64xi4> -> tensor<4x8xbf16>
  body {
  ^bb0(%a: bf16, %b: i4):
    %1 = arith.extf %a : bf16 to f32
    %2 = arith.sitofp %b : i4 to f32
    %3 = arith.mulf %1, %2 : f32
    kernel.yield %3 : f32
  } epilogue {
  ^bb0(%acc: f32):
    %1 = arith.truncf %acc : f32 to bf16
    kernel.yield %1 : bf16
  }
  graph.return %0 : tensor<4x8xbf16>
}

// -----

graph.func @body_arg_type(%x: tensor<4x64xbf16>, %w: tensor<8x64xi4>, %s: tensor<8x2xf32>) -> tensor<4x8xbf16> {
  // expected-error @+1 {{'kernel.contract' op body argument #2 has type 'bf16', expected 'f32'}}
  %0 = kernel.contract %x, %w b_inputs(%s : tensor<8x2xf32>)
      {b_maps = [affine_map<(d0, d1) -> (d0, d1 floordiv 32)>], epilogue_maps = [], nodes = ["y"]}
      : tensor<4x64xbf16>, tensor<8x64xi4> -> tensor<4x8xbf16>
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
    %1 = arith.truncf %acc : f32 to bf16
    kernel.yield %1 : bf16
  }
  graph.return %0 : tensor<4x8xbf16>
}

// -----

// The scale alone is not a weight.
graph.func @weight_side_without_b(%x: tensor<4x64xbf16>, %w: tensor<8x64xi4>, %s: tensor<8x2xbf16>) -> tensor<4x8xbf16> {
  // expected-error @+1 {{'kernel.contract' op body's weight side must read %b}}
  %0 = kernel.contract %x, %w b_inputs(%s : tensor<8x2xbf16>)
      {b_maps = [affine_map<(d0, d1) -> (d0, d1 floordiv 32)>], epilogue_maps = [], nodes = ["y"]}
      : tensor<4x64xbf16>, tensor<8x64xi4> -> tensor<4x8xbf16>
  body {
  ^bb0(%a: bf16, %b: i4, %sc: bf16):
    %1 = arith.extf %a : bf16 to f32
    %2 = arith.extf %sc : bf16 to f32
    %3 = arith.mulf %1, %2 : f32
    kernel.yield %3 : f32
  } epilogue {
  ^bb0(%acc: f32):
    %1 = arith.truncf %acc : f32 to bf16
    kernel.yield %1 : bf16
  }
  graph.return %0 : tensor<4x8xbf16>
}

// -----

// Only conversions, addf, subf and mulf form the weight side (the steps
// the tensor-core kinds compute with one fma.rn on pairs).
graph.func @weight_side_divf(%x: tensor<4x64xbf16>, %w: tensor<8x64xi4>, %s: tensor<8x2xbf16>) -> tensor<4x8xbf16> {
  // expected-error @+1 {{'kernel.contract' op body must multiply %a, converted to f32 by a chain of arith conversions, and an expression of arith conversions, addf, subf and mulf over %b and the b inputs}}
  %0 = kernel.contract %x, %w b_inputs(%s : tensor<8x2xbf16>)
      {b_maps = [affine_map<(d0, d1) -> (d0, d1 floordiv 32)>], epilogue_maps = [], nodes = ["y"]}
      : tensor<4x64xbf16>, tensor<8x64xi4> -> tensor<4x8xbf16>
  body {
  ^bb0(%a: bf16, %b: i4, %sc: bf16):
    %1 = arith.extf %a : bf16 to f32
    %2 = arith.sitofp %b : i4 to f32
    %3 = arith.extf %sc : bf16 to f32
    %4 = arith.divf %2, %3 : f32
    %5 = arith.mulf %1, %4 : f32
    kernel.yield %5 : f32
  } epilogue {
  ^bb0(%acc: f32):
    %1 = arith.truncf %acc : f32 to bf16
    kernel.yield %1 : bf16
  }
  graph.return %0 : tensor<4x8xbf16>
}

// -----

graph.func @weight_side_exp(%x: tensor<4x64xbf16>, %w: tensor<8x64xi4>, %s: tensor<8x2xbf16>) -> tensor<4x8xbf16> {
  // expected-error @+1 {{'kernel.contract' op body must multiply %a, converted to f32 by a chain of arith conversions, and an expression of arith conversions, addf, subf and mulf over %b and the b inputs}}
  %0 = kernel.contract %x, %w b_inputs(%s : tensor<8x2xbf16>)
      {b_maps = [affine_map<(d0, d1) -> (d0, d1 floordiv 32)>], epilogue_maps = [], nodes = ["y"]}
      : tensor<4x64xbf16>, tensor<8x64xi4> -> tensor<4x8xbf16>
  body {
  ^bb0(%a: bf16, %b: i4, %sc: bf16):
    %1 = arith.extf %a : bf16 to f32
    %2 = arith.sitofp %b : i4 to f32
    %3 = arith.extf %sc : bf16 to f32
    %4 = arith.mulf %2, %3 : f32
    %5 = math.exp %4 : f32
    %6 = arith.mulf %1, %5 : f32
    kernel.yield %6 : f32
  } epilogue {
  ^bb0(%acc: f32):
    %1 = arith.truncf %acc : f32 to bf16
    kernel.yield %1 : bf16
  }
  graph.return %0 : tensor<4x8xbf16>
}

// -----

// The weight side may not read the activations.
graph.func @weight_side_reads_a(%x: tensor<4x64xbf16>, %w: tensor<8x64xi4>, %s: tensor<8x2xbf16>) -> tensor<4x8xbf16> {
  // expected-error @+1 {{'kernel.contract' op body must multiply %a, converted to f32 by a chain of arith conversions, and an expression of arith conversions, addf, subf and mulf over %b and the b inputs}}
  %0 = kernel.contract %x, %w b_inputs(%s : tensor<8x2xbf16>)
      {b_maps = [affine_map<(d0, d1) -> (d0, d1 floordiv 32)>], epilogue_maps = [], nodes = ["y"]}
      : tensor<4x64xbf16>, tensor<8x64xi4> -> tensor<4x8xbf16>
  body {
  ^bb0(%a: bf16, %b: i4, %sc: bf16):
    %1 = arith.extf %a : bf16 to f32
    %2 = arith.sitofp %b : i4 to f32
    %3 = arith.extf %a : bf16 to f32
    %4 = arith.mulf %2, %3 : f32
    %5 = arith.mulf %1, %4 : f32
    kernel.yield %5 : f32
  } epilogue {
  ^bb0(%acc: f32):
    %1 = arith.truncf %acc : f32 to bf16
    kernel.yield %1 : bf16
  }
  graph.return %0 : tensor<4x8xbf16>
}

// -----

graph.func @weight_side_constant(%x: tensor<4x64xbf16>, %w: tensor<8x64xi4>, %s: tensor<8x2xbf16>) -> tensor<4x8xbf16> {
  // expected-error @+1 {{'kernel.contract' op body must multiply %a, converted to f32 by a chain of arith conversions, and an expression of arith conversions, addf, subf and mulf over %b and the b inputs}}
  %0 = kernel.contract %x, %w b_inputs(%s : tensor<8x2xbf16>)
      {b_maps = [affine_map<(d0, d1) -> (d0, d1 floordiv 32)>], epilogue_maps = [], nodes = ["y"]}
      : tensor<4x64xbf16>, tensor<8x64xi4> -> tensor<4x8xbf16>
  body {
  ^bb0(%a: bf16, %b: i4, %sc: bf16):
    %c = arith.constant 2.0 : f32
    %1 = arith.extf %a : bf16 to f32
    %2 = arith.sitofp %b : i4 to f32
    %3 = arith.extf %sc : bf16 to f32
    %4 = arith.mulf %2, %3 : f32
    %5 = arith.mulf %4, %c : f32
    %6 = arith.mulf %1, %5 : f32
    kernel.yield %6 : f32
  } epilogue {
  ^bb0(%acc: f32):
    %1 = arith.truncf %acc : f32 to bf16
    kernel.yield %1 : bf16
  }
  graph.return %0 : tensor<4x8xbf16>
}

// -----

// The activations' side stays a chain of conversions.
graph.func @activation_side_scaled(%x: tensor<4x64xbf16>, %w: tensor<8x64xi4>, %s: tensor<8x2xbf16>) -> tensor<4x8xbf16> {
  // expected-error @+1 {{'kernel.contract' op body must multiply %a, converted to f32 by a chain of arith conversions, and an expression of arith conversions, addf, subf and mulf over %b and the b inputs}}
  %0 = kernel.contract %x, %w b_inputs(%s : tensor<8x2xbf16>)
      {b_maps = [affine_map<(d0, d1) -> (d0, d1 floordiv 32)>], epilogue_maps = [], nodes = ["y"]}
      : tensor<4x64xbf16>, tensor<8x64xi4> -> tensor<4x8xbf16>
  body {
  ^bb0(%a: bf16, %b: i4, %sc: bf16):
    %1 = arith.extf %a : bf16 to f32
    %2 = arith.sitofp %b : i4 to f32
    %3 = arith.extf %sc : bf16 to f32
    %4 = arith.mulf %1, %3 : f32
    %5 = arith.mulf %4, %2 : f32
    kernel.yield %5 : f32
  } epilogue {
  ^bb0(%acc: f32):
    %1 = arith.truncf %acc : f32 to bf16
    kernel.yield %1 : bf16
  }
  graph.return %0 : tensor<4x8xbf16>
}

// -----

graph.func @body_extra_op(%x: tensor<4x64xbf16>, %w: tensor<8x64xi4>, %s: tensor<8x2xbf16>) -> tensor<4x8xbf16> {
  // expected-error @+1 {{'kernel.contract' op body may only hold the activations' conversion chain, the weight's expression, the product and the yield}}
  %0 = kernel.contract %x, %w b_inputs(%s : tensor<8x2xbf16>)
      {b_maps = [affine_map<(d0, d1) -> (d0, d1 floordiv 32)>], epilogue_maps = [], nodes = ["y"]}
      : tensor<4x64xbf16>, tensor<8x64xi4> -> tensor<4x8xbf16>
  body {
  ^bb0(%a: bf16, %b: i4, %sc: bf16):
    %1 = arith.extf %a : bf16 to f32
    %2 = arith.sitofp %b : i4 to f32
    %3 = arith.extf %sc : bf16 to f32
    %unused = arith.addf %2, %3 : f32
    %4 = arith.mulf %2, %3 : f32
    %5 = arith.mulf %1, %4 : f32
    kernel.yield %5 : f32
  } epilogue {
  ^bb0(%acc: f32):
    %1 = arith.truncf %acc : f32 to bf16
    kernel.yield %1 : bf16
  }
  graph.return %0 : tensor<4x8xbf16>
}
