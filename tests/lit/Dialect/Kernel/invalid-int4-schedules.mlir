// RUN: %mtc-opt %s -split-input-file -verify-diagnostics

// The schedule rules of int4 weights and of b inputs (Schedule.cpp,
// docs/schedule-errors.md); invalid-b-inputs.mlir has the verifier's
// rules of the b inputs themselves.

// The bodies below are gpt-fast's dequantization w * s + z, each step
// rounded, which the tensor-core kinds compute on pairs. Those kinds take
// groups of a multiple of 16 k's.
#g8 = affine_map<(d0, d1) -> (d0, d1 floordiv 8)>
graph.func @mma_group_8(%x: tensor<4x256xbf16>, %w: tensor<64x256xi4>, %s: tensor<64x32xbf16>, %z: tensor<64x32xbf16>) -> tensor<4x64xbf16> {
  // expected-error @+1 {{'kernel.contract' op schedule mma w4 r1 kw1 v32 u1 mt8 sk1 is illegal: tensor-core (mma) schedules need a group size that is a multiple of 16, got 8}}
  %0 = kernel.contract %x, %w b_inputs(%s, %z : tensor<64x32xbf16>, tensor<64x32xbf16>)
      {b_maps = [#g8, #g8], epilogue_maps = [], nodes = ["y"],
       schedule = #kernel.schedule<kind = mma, warps = 4, rows = 1, kwarps = 1, vec = 32, unroll = 1, mtile = 8, splitk = 1>}
      : tensor<4x256xbf16>, tensor<64x256xi4> -> tensor<4x64xbf16>
  body {
  ^bb0(%a: bf16, %b: i4, %sc: bf16, %zp: bf16):
    %1 = arith.extf %a : bf16 to f32
    %2 = arith.sitofp %b : i4 to bf16
    %3 = arith.extf %2 : bf16 to f32
    %4 = arith.extf %sc : bf16 to f32
    %5 = arith.mulf %3, %4 : f32
    %6 = arith.truncf %5 : f32 to bf16
    %7 = arith.extf %6 : bf16 to f32
    %8 = arith.extf %zp : bf16 to f32
    %9 = arith.addf %7, %8 : f32
    %10 = arith.truncf %9 : f32 to bf16
    %11 = arith.extf %10 : bf16 to f32
    %12 = arith.mulf %1, %11 : f32
    kernel.yield %12 : f32
  } epilogue {
  ^bb0(%acc: f32):
    %1 = arith.truncf %acc : f32 to bf16
    kernel.yield %1 : bf16
  }
  graph.return %0 : tensor<4x64xbf16>
}

// -----

#g48 = affine_map<(d0, d1) -> (d0, d1 floordiv 48)>
graph.func @mma_vec_and_group(%x: tensor<4x384xbf16>, %w: tensor<64x384xi4>, %s: tensor<64x8xbf16>, %z: tensor<64x8xbf16>) -> tensor<4x64xbf16> {
  // expected-error @+1 {{'kernel.contract' op schedule mma w4 r1 kw1 v32 u1 mt8 sk1 is illegal: mma vec 32 gives a lane 32 consecutive k's; they and the group size 48 must divide one another (a lane's k's lie in whole groups or in one)}}
  %0 = kernel.contract %x, %w b_inputs(%s, %z : tensor<64x8xbf16>, tensor<64x8xbf16>)
      {b_maps = [#g48, #g48], epilogue_maps = [], nodes = ["y"],
       schedule = #kernel.schedule<kind = mma, warps = 4, rows = 1, kwarps = 1, vec = 32, unroll = 1, mtile = 8, splitk = 1>}
      : tensor<4x384xbf16>, tensor<64x384xi4> -> tensor<4x64xbf16>
  body {
  ^bb0(%a: bf16, %b: i4, %sc: bf16, %zp: bf16):
    %1 = arith.extf %a : bf16 to f32
    %2 = arith.sitofp %b : i4 to bf16
    %3 = arith.extf %2 : bf16 to f32
    %4 = arith.extf %sc : bf16 to f32
    %5 = arith.mulf %3, %4 : f32
    %6 = arith.truncf %5 : f32 to bf16
    %7 = arith.extf %6 : bf16 to f32
    %8 = arith.extf %zp : bf16 to f32
    %9 = arith.addf %7, %8 : f32
    %10 = arith.truncf %9 : f32 to bf16
    %11 = arith.extf %10 : bf16 to f32
    %12 = arith.mulf %1, %11 : f32
    kernel.yield %12 : f32
  } epilogue {
  ^bb0(%acc: f32):
    %1 = arith.truncf %acc : f32 to bf16
    kernel.yield %1 : bf16
  }
  graph.return %0 : tensor<4x64xbf16>
}

// -----

#g128 = affine_map<(d0, d1) -> (d0, d1 floordiv 128)>
graph.func @tiled_vec_16(%x: tensor<32x256xbf16>, %w: tensor<64x256xi4>, %s: tensor<64x2xbf16>, %z: tensor<64x2xbf16>) -> tensor<32x64xbf16> {
  // expected-error @+1 {{'kernel.contract' op schedule tiled w4 r1 kw1 v16 u1 mt32 sk1 st4 is illegal: tiled schedules take vec = 32 or 64 for int4 weights (a lane's k's of a tile fill whole 16-byte pieces of shared memory)}}
  %0 = kernel.contract %x, %w b_inputs(%s, %z : tensor<64x2xbf16>, tensor<64x2xbf16>)
      {b_maps = [#g128, #g128], epilogue_maps = [], nodes = ["y"],
       schedule = #kernel.schedule<kind = tiled, warps = 4, rows = 1, kwarps = 1, vec = 16, unroll = 1, mtile = 32, splitk = 1, stages = 4>}
      : tensor<32x256xbf16>, tensor<64x256xi4> -> tensor<32x64xbf16>
  body {
  ^bb0(%a: bf16, %b: i4, %sc: bf16, %zp: bf16):
    %1 = arith.extf %a : bf16 to f32
    %2 = arith.sitofp %b : i4 to bf16
    %3 = arith.extf %2 : bf16 to f32
    %4 = arith.extf %sc : bf16 to f32
    %5 = arith.mulf %3, %4 : f32
    %6 = arith.truncf %5 : f32 to bf16
    %7 = arith.extf %6 : bf16 to f32
    %8 = arith.extf %zp : bf16 to f32
    %9 = arith.addf %7, %8 : f32
    %10 = arith.truncf %9 : f32 to bf16
    %11 = arith.extf %10 : bf16 to f32
    %12 = arith.mulf %1, %11 : f32
    kernel.yield %12 : f32
  } epilogue {
  ^bb0(%acc: f32):
    %1 = arith.truncf %acc : f32 to bf16
    kernel.yield %1 : bf16
  }
  graph.return %0 : tensor<32x64xbf16>
}

// -----

#g48 = affine_map<(d0, d1) -> (d0, d1 floordiv 48)>
graph.func @tiled_vec_and_group(%x: tensor<32x384xbf16>, %w: tensor<64x384xi4>, %s: tensor<64x8xbf16>, %z: tensor<64x8xbf16>) -> tensor<32x64xbf16> {
  // expected-error @+1 {{'kernel.contract' op schedule tiled w4 r1 kw1 v32 u1 mt32 sk1 st4 is illegal: tiled vec 32 gives a lane 32 consecutive k's; they and the group size 48 must divide one another (a lane's k's lie in whole groups or in one)}}
  %0 = kernel.contract %x, %w b_inputs(%s, %z : tensor<64x8xbf16>, tensor<64x8xbf16>)
      {b_maps = [#g48, #g48], epilogue_maps = [], nodes = ["y"],
       schedule = #kernel.schedule<kind = tiled, warps = 4, rows = 1, kwarps = 1, vec = 32, unroll = 1, mtile = 32, splitk = 1, stages = 4>}
      : tensor<32x384xbf16>, tensor<64x384xi4> -> tensor<32x64xbf16>
  body {
  ^bb0(%a: bf16, %b: i4, %sc: bf16, %zp: bf16):
    %1 = arith.extf %a : bf16 to f32
    %2 = arith.sitofp %b : i4 to bf16
    %3 = arith.extf %2 : bf16 to f32
    %4 = arith.extf %sc : bf16 to f32
    %5 = arith.mulf %3, %4 : f32
    %6 = arith.truncf %5 : f32 to bf16
    %7 = arith.extf %6 : bf16 to f32
    %8 = arith.extf %zp : bf16 to f32
    %9 = arith.addf %7, %8 : f32
    %10 = arith.truncf %9 : f32 to bf16
    %11 = arith.extf %10 : bf16 to f32
    %12 = arith.mulf %1, %11 : f32
    kernel.yield %12 : f32
  } epilogue {
  ^bb0(%acc: f32):
    %1 = arith.truncf %acc : f32 to bf16
    kernel.yield %1 : bf16
  }
  graph.return %0 : tensor<32x64xbf16>
}

// -----

// simt's vec is in bytes: v16 loads 32 i4 elements.
#g48 = affine_map<(d0, d1) -> (d0, d1 floordiv 48)>
graph.func @simt_vec_and_group(%x: tensor<1x4800xbf16>, %w: tensor<64x4800xi4>, %s: tensor<64x100xbf16>, %z: tensor<64x100xbf16>) -> tensor<1x64xbf16> {
  // expected-error @+1 {{'kernel.contract' op schedule simt w4 r1 kw1 v16 u1 mt1 sk1 is illegal: simt vec 16 gives a lane 32 consecutive k's; they and the group size 48 must divide one another (a lane's k's lie in whole groups or in one)}}
  %0 = kernel.contract %x, %w b_inputs(%s, %z : tensor<64x100xbf16>, tensor<64x100xbf16>)
      {b_maps = [#g48, #g48], epilogue_maps = [], nodes = ["y"],
       schedule = #kernel.schedule<kind = simt, warps = 4, rows = 1, kwarps = 1, vec = 16, unroll = 1, mtile = 1, splitk = 1>}
      : tensor<1x4800xbf16>, tensor<64x4800xi4> -> tensor<1x64xbf16>
  body {
  ^bb0(%a: bf16, %b: i4, %sc: bf16, %zp: bf16):
    %1 = arith.extf %a : bf16 to f32
    %2 = arith.sitofp %b : i4 to bf16
    %3 = arith.extf %2 : bf16 to f32
    %4 = arith.extf %sc : bf16 to f32
    %5 = arith.mulf %3, %4 : f32
    %6 = arith.truncf %5 : f32 to bf16
    %7 = arith.extf %6 : bf16 to f32
    %8 = arith.extf %zp : bf16 to f32
    %9 = arith.addf %7, %8 : f32
    %10 = arith.truncf %9 : f32 to bf16
    %11 = arith.extf %10 : bf16 to f32
    %12 = arith.mulf %1, %11 : f32
    kernel.yield %12 : f32
  } epilogue {
  ^bb0(%acc: f32):
    %1 = arith.truncf %acc : f32 to bf16
    kernel.yield %1 : bf16
  }
  graph.return %0 : tensor<1x64xbf16>
}

// -----

#g32 = affine_map<(d0, d1) -> (d0, d1 floordiv 32)>
graph.func @simt_vec_32(%x: tensor<1x256xbf16>, %w: tensor<64x256xi4>, %s: tensor<64x8xbf16>, %z: tensor<64x8xbf16>) -> tensor<1x64xbf16> {
  // expected-error @+1 {{'kernel.contract' op schedule simt w4 r1 kw1 v32 u1 mt1 sk1 is illegal: vec must be a power of two in [1, 16] bytes for i4 weights}}
  %0 = kernel.contract %x, %w b_inputs(%s, %z : tensor<64x8xbf16>, tensor<64x8xbf16>)
      {b_maps = [#g32, #g32], epilogue_maps = [], nodes = ["y"],
       schedule = #kernel.schedule<kind = simt, warps = 4, rows = 1, kwarps = 1, vec = 32, unroll = 1, mtile = 1, splitk = 1>}
      : tensor<1x256xbf16>, tensor<64x256xi4> -> tensor<1x64xbf16>
  body {
  ^bb0(%a: bf16, %b: i4, %sc: bf16, %zp: bf16):
    %1 = arith.extf %a : bf16 to f32
    %2 = arith.sitofp %b : i4 to bf16
    %3 = arith.extf %2 : bf16 to f32
    %4 = arith.extf %sc : bf16 to f32
    %5 = arith.mulf %3, %4 : f32
    %6 = arith.truncf %5 : f32 to bf16
    %7 = arith.extf %6 : bf16 to f32
    %8 = arith.extf %zp : bf16 to f32
    %9 = arith.addf %7, %8 : f32
    %10 = arith.truncf %9 : f32 to bf16
    %11 = arith.extf %10 : bf16 to f32
    %12 = arith.mulf %1, %11 : f32
    kernel.yield %12 : f32
  } epilogue {
  ^bb0(%acc: f32):
    %1 = arith.truncf %acc : f32 to bf16
    kernel.yield %1 : bf16
  }
  graph.return %0 : tensor<1x64xbf16>
}

// -----

// A row of K = 4112 i4 elements is 2056 bytes, not a multiple of 16.
#g16 = affine_map<(d0, d1) -> (d0, d1 floordiv 16)>
graph.func @wgmma_k_32(%x: tensor<64x4112xbf16>, %w: tensor<64x4112xi4>, %s: tensor<64x257xbf16>, %z: tensor<64x257xbf16>) -> tensor<64x64xbf16> {
  // expected-error @+1 {{'kernel.contract' op schedule wgmma w8 r1 kw1 v16 u1 mt64 sk1 st4 is illegal: wgmma schedules need K to be a multiple of 32 for int4 weights (the rows of the weight are copied by TMA, whose strides are multiples of 16 bytes)}}
  %0 = kernel.contract %x, %w b_inputs(%s, %z : tensor<64x257xbf16>, tensor<64x257xbf16>)
      {b_maps = [#g16, #g16], epilogue_maps = [], nodes = ["y"],
       schedule = #kernel.schedule<kind = wgmma, warps = 8, rows = 1, kwarps = 1, vec = 16, unroll = 1, mtile = 64, splitk = 1, stages = 4>}
      : tensor<64x4112xbf16>, tensor<64x4112xi4> -> tensor<64x64xbf16>
  body {
  ^bb0(%a: bf16, %b: i4, %sc: bf16, %zp: bf16):
    %1 = arith.extf %a : bf16 to f32
    %2 = arith.sitofp %b : i4 to bf16
    %3 = arith.extf %2 : bf16 to f32
    %4 = arith.extf %sc : bf16 to f32
    %5 = arith.mulf %3, %4 : f32
    %6 = arith.truncf %5 : f32 to bf16
    %7 = arith.extf %6 : bf16 to f32
    %8 = arith.extf %zp : bf16 to f32
    %9 = arith.addf %7, %8 : f32
    %10 = arith.truncf %9 : f32 to bf16
    %11 = arith.extf %10 : bf16 to f32
    %12 = arith.mulf %1, %11 : f32
    kernel.yield %12 : f32
  } epilogue {
  ^bb0(%acc: f32):
    %1 = arith.truncf %acc : f32 to bf16
    kernel.yield %1 : bf16
  }
  graph.return %0 : tensor<64x64xbf16>
}

// -----

// An i4 weight stored [K, N] (without b inputs, which need [N, K]).
graph.func @i4_transposed(%x: tensor<1x64xbf16>, %w: tensor<64x8xi4>) -> tensor<1x8xbf16> {
  // expected-error @+1 {{'kernel.contract' op schedule simt w4 r1 kw1 v4 u1 mt1 sk1 is illegal: int4 weights must be stored [N, K] (the layout of linear)}}
  %0 = kernel.contract %x, %w
      {b_transposed, epilogue_maps = [], nodes = ["y"],
       schedule = #kernel.schedule<kind = simt, warps = 4, rows = 1, kwarps = 1, vec = 4, unroll = 1, mtile = 1, splitk = 1>}
      : tensor<1x64xbf16>, tensor<64x8xi4> -> tensor<1x8xbf16>
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
  graph.return %0 : tensor<1x8xbf16>
}

// -----

// The weight side on pairs must round every step to the activations' type;
// unrounded f32 is for the simt kind, or mma in the factored form q * s + z
// (WeightSide.h), which q - s is not.
graph.func @mma_unrounded_dequant(%x: tensor<4x256xbf16>, %w: tensor<64x256xi4>, %s: tensor<64x2xbf16>) -> tensor<4x64xbf16> {
  // expected-error @+1 {{'kernel.contract' op schedule mma w4 r1 kw1 v32 u1 mt8 sk1 is illegal: tensor-core (mma) schedules need an int8 or int4 weight converted to the activations' type (a dequantization rounding each step to that type, with scales and zeros of that type; on mma also one in f32, q * s + z), or a weight of that type}}
  %0 = kernel.contract %x, %w b_inputs(%s : tensor<64x2xbf16>)
      {b_maps = [affine_map<(d0, d1) -> (d0, d1 floordiv 128)>], epilogue_maps = [], nodes = ["y"],
       schedule = #kernel.schedule<kind = mma, warps = 4, rows = 1, kwarps = 1, vec = 32, unroll = 1, mtile = 8, splitk = 1>}
      : tensor<4x256xbf16>, tensor<64x256xi4> -> tensor<4x64xbf16>
  body {
  ^bb0(%a: bf16, %b: i4, %sc: bf16):
    %1 = arith.extf %a : bf16 to f32
    %2 = arith.sitofp %b : i4 to f32
    %3 = arith.extf %sc : bf16 to f32
    %4 = arith.subf %2, %3 : f32
    %5 = arith.mulf %1, %4 : f32
    kernel.yield %5 : f32
  } epilogue {
  ^bb0(%acc: f32):
    %1 = arith.truncf %acc : f32 to bf16
    kernel.yield %1 : bf16
  }
  graph.return %0 : tensor<4x64xbf16>
}

// -----

// The factored form applies a group's scale to a step's sums: a step of
// 4 x 64 k's spans two groups of 128.
graph.func @mma_factored_step_past_group(%x: tensor<4x256xbf16>, %w: tensor<64x256xi4>, %s: tensor<64x2xbf16>) -> tensor<4x64xbf16> {
  // expected-error @+1 {{'kernel.contract' op schedule mma w4 r1 kw1 v64 u1 mt8 sk1 is illegal: mma vec 64 sums 256 k's a step before applying their group's scale and zero (an f32 dequantization); the group size 128 must be a multiple of it}}
  %0 = kernel.contract %x, %w b_inputs(%s : tensor<64x2xbf16>)
      {b_maps = [affine_map<(d0, d1) -> (d0, d1 floordiv 128)>], epilogue_maps = [], nodes = ["y"],
       schedule = #kernel.schedule<kind = mma, warps = 4, rows = 1, kwarps = 1, vec = 64, unroll = 1, mtile = 8, splitk = 1>}
      : tensor<4x256xbf16>, tensor<64x256xi4> -> tensor<4x64xbf16>
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
  graph.return %0 : tensor<4x64xbf16>
}

// -----

// Only mma sums the factored form per step.
graph.func @tiled_factored(%x: tensor<4x256xbf16>, %w: tensor<64x256xi4>, %s: tensor<64x2xbf16>) -> tensor<4x64xbf16> {
  // expected-error @+1 {{'kernel.contract' op schedule tiled w4 r1 kw1 v64 u1 mt16 sk1 st4 is illegal: the tiled kind needs a dequantization rounded to the activations' type; an f32 one (q * s + z) runs on mma, which applies s and z to each step's sums of x * q, or on simt}}
  %0 = kernel.contract %x, %w b_inputs(%s : tensor<64x2xbf16>)
      {b_maps = [affine_map<(d0, d1) -> (d0, d1 floordiv 128)>], epilogue_maps = [], nodes = ["y"],
       schedule = #kernel.schedule<kind = tiled, warps = 4, rows = 1, kwarps = 1, vec = 64, unroll = 1, mtile = 16, splitk = 1, stages = 4>}
      : tensor<4x256xbf16>, tensor<64x256xi4> -> tensor<4x64xbf16>
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
  graph.return %0 : tensor<4x64xbf16>
}
