// RUN: %mtc-opt %s -split-input-file -verify-diagnostics

// kernel.partner and kernel.column (a rotary embedding's pairs of columns)
// and the `d mod P` maps that read its table: where they may appear. Every
// case starts from a valid op and breaks one thing.

graph.func @partner_ok(%x: tensor<2x8xf32>, %t: tensor<1x4xbf16>) -> tensor<2x8xf32> {
  %0 = kernel.elementwise %x, %t : tensor<2x8xf32>, tensor<1x4xbf16> {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (0, d1 mod 4)>], nodes = ["r"]} -> tensor<2x8xf32> {
  ^bb0(%v: f32, %c: bf16):
    %p = kernel.partner %v : f32
    %n = kernel.column : i32
    %odd = arith.trunci %n : i32 to i1
    %s = arith.select %odd, %v, %p : f32
    kernel.yield %s : f32
  }
  graph.return %0 : tensor<2x8xf32>
}

// -----

graph.func @partner_odd_columns(%x: tensor<2x7xf32>) -> tensor<2x7xf32> {
  %0 = kernel.elementwise %x : tensor<2x7xf32> {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], nodes = ["r"]} -> tensor<2x7xf32> {
  ^bb0(%v: f32):
    // expected-error @+1 {{'kernel.partner' op needs pairs of columns, but the output's last dimension is 7}}
    %p = kernel.partner %v : f32
    kernel.yield %p : f32
  }
  graph.return %0 : tensor<2x7xf32>
}

// -----

graph.func @column_in_reduce(%x: tensor<2x8xf32>) -> tensor<2x1xf32> {
  %0 = kernel.reduce %x : tensor<2x8xf32> epilogue() {extent = 8, indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], epilogue_maps = [], nodes = ["s"]} -> tensor<2x1xf32> body {
  ^bb0(%v: f32):
    // expected-error @+1 {{'kernel.column' op reads the output element's position, which a kernel body does not have (only an elementwise body and a contraction's epilogue do)}}
    %n = kernel.column : i32
    kernel.yield %v : f32
  } epilogue {
  ^bb0(%s: f32):
    kernel.yield %s : f32
  }
  graph.return %0 : tensor<2x1xf32>
}

// -----

graph.func @partner_in_contract_body(%x: tensor<1x64xbf16>, %w: tensor<8x64xi8>) -> tensor<1x8xbf16> {
  %0 = kernel.contract %x, %w {epilogue_maps = [], nodes = ["y"]}
      : tensor<1x64xbf16>, tensor<8x64xi8> -> tensor<1x8xbf16>
  body {
  ^bb0(%a: bf16, %b: i8):
    %1 = arith.extf %a : bf16 to f32
    // expected-error @+1 {{'kernel.partner' op reads the output element's position, which a kernel body does not have}}
    %p = kernel.partner %1 : f32
    %2 = arith.sitofp %b : i8 to f32
    %3 = arith.mulf %p, %2 : f32
    kernel.yield %3 : f32
  } epilogue {
  ^bb0(%acc: f32):
    %1 = arith.truncf %acc : f32 to bf16
    kernel.yield %1 : bf16
  }
  graph.return %0 : tensor<1x8xbf16>
}

// -----

graph.func @modulus_size(%x: tensor<2x8xf32>, %t: tensor<1x3xbf16>) -> tensor<2x8xf32> {
  // expected-error @+1 {{'kernel.elementwise' op input #1: input dim 1 has size 3 but is indexed by d1 mod 4 over 8; the modulus must be the input dim's size and divide the iteration dim}}
  %0 = kernel.elementwise %x, %t : tensor<2x8xf32>, tensor<1x3xbf16> {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (0, d1 mod 4)>], nodes = ["r"]} -> tensor<2x8xf32> {
  ^bb0(%v: f32, %c: bf16):
    kernel.yield %v : f32
  }
  graph.return %0 : tensor<2x8xf32>
}

// -----

graph.func @modulus_in_b_maps(%x: tensor<1x256xbf16>, %w: tensor<8x256xi8>, %s: tensor<8x128xbf16>) -> tensor<1x8xbf16> {
  // expected-error @+1 {{'kernel.contract' op b input #0: map result #1 must be a dim, a dim floordiv a constant, or the constant 0 (a dim mod P only indexes elementwise and epilogue inputs)}}
  %0 = kernel.contract %x, %w b_inputs(%s : tensor<8x128xbf16>) {b_maps = [affine_map<(d0, d1) -> (d0, d1 mod 128)>], epilogue_maps = [], nodes = ["y"]}
      : tensor<1x256xbf16>, tensor<8x256xi8> -> tensor<1x8xbf16>
  body {
  ^bb0(%a: bf16, %b: i8, %sc: bf16):
    %1 = arith.extf %a : bf16 to f32
    %2 = arith.sitofp %b : i8 to bf16
    %3 = arith.mulf %2, %sc : bf16
    %4 = arith.extf %3 : bf16 to f32
    %5 = arith.mulf %1, %4 : f32
    kernel.yield %5 : f32
  } epilogue {
  ^bb0(%acc: f32):
    %1 = arith.truncf %acc : f32 to bf16
    kernel.yield %1 : bf16
  }
  graph.return %0 : tensor<1x8xbf16>
}

// -----

graph.func @pairs_simt_odd_rows(%x: tensor<1x64xbf16>, %w: tensor<8x64xi8>) -> tensor<1x8xbf16> {
  // expected-error @+1 {{'kernel.contract' op schedule simt w4 r1 kw1 v16 u1 mt1 sk1 is illegal: an epilogue that reads each output's partner column (kernel.partner) needs the outputs of a simt warp in pairs: rows must be even, got 1}}
  %0 = kernel.contract %x, %w {epilogue_maps = [], nodes = ["y"],
       schedule = #kernel.schedule<kind = simt, warps = 4, rows = 1, kwarps = 1, vec = 16, unroll = 1, mtile = 1, splitk = 1>}
      : tensor<1x64xbf16>, tensor<8x64xi8> -> tensor<1x8xbf16>
  body {
  ^bb0(%a: bf16, %b: i8):
    %1 = arith.extf %a : bf16 to f32
    %2 = arith.sitofp %b : i8 to f32
    %3 = arith.mulf %1, %2 : f32
    kernel.yield %3 : f32
  } epilogue {
  ^bb0(%acc: f32):
    %p = kernel.partner %acc : f32
    %s = arith.addf %acc, %p : f32
    %1 = arith.truncf %s : f32 to bf16
    kernel.yield %1 : bf16
  }
  graph.return %0 : tensor<1x8xbf16>
}

// -----

graph.func @pairs_weight_kn(%x: tensor<1x64xbf16>, %w: tensor<64x8xi8>) -> tensor<1x8xbf16> {
  // expected-error @+1 {{'kernel.contract' op schedule simt w4 r2 kw1 v16 u1 mt1 sk1 is illegal: an epilogue that reads each output's partner column (kernel.partner) needs the weight stored [N, K] (the layout of linear)}}
  %0 = kernel.contract %x, %w {b_transposed, epilogue_maps = [], nodes = ["y"],
       schedule = #kernel.schedule<kind = simt, warps = 4, rows = 2, kwarps = 1, vec = 16, unroll = 1, mtile = 1, splitk = 1>}
      : tensor<1x64xbf16>, tensor<64x8xi8> -> tensor<1x8xbf16>
  body {
  ^bb0(%a: bf16, %b: i8):
    %1 = arith.extf %a : bf16 to f32
    %2 = arith.sitofp %b : i8 to f32
    %3 = arith.mulf %1, %2 : f32
    kernel.yield %3 : f32
  } epilogue {
  ^bb0(%acc: f32):
    %p = kernel.partner %acc : f32
    %s = arith.addf %acc, %p : f32
    %1 = arith.truncf %s : f32 to bf16
    kernel.yield %1 : bf16
  }
  graph.return %0 : tensor<1x8xbf16>
}
