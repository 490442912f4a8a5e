// RUN: %mtc-opt %s -split-input-file -verify-diagnostics

// Illegal schedules (Schedule.cpp, checkSchedule), on kernel.contract and
// kernel.elementwise. Every case starts from a valid op and breaks one
// thing; invalid-int4-schedules.mlir has int4's.

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
