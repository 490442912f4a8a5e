// RUN: %mtc-opt %s -split-input-file -verify-diagnostics

// graph.rope's rules (ShapeRules.h ropeShape), as the front end's.

graph.func @rope_not_f32(%x: tensor<2x128xbf16>, %t: tensor<1x64xbf16>) -> tensor<2x128xbf16> {
  // expected-error @+1 {{'graph.rope' op x must be f32 (the rotation computes in f32; convert it first), got bf16}}
  %r = graph.rope %x, %t {cols = 128 : i64} : tensor<2x128xbf16>, tensor<1x64xbf16> -> tensor<2x128xbf16>
  graph.return %r : tensor<2x128xbf16>
}

// -----

graph.func @rope_table_rows(%x: tensor<2x128xf32>, %t: tensor<3x64xbf16>) -> tensor<2x128xf32> {
  // expected-error @+1 {{'graph.rope' op the table must be [1, D] or [2, D] (a row per row of x) with D even, got [3, 64]}}
  %r = graph.rope %x, %t {cols = 128 : i64} : tensor<2x128xf32>, tensor<3x64xbf16> -> tensor<2x128xf32>
  graph.return %r : tensor<2x128xf32>
}

// -----

graph.func @rope_odd_table(%x: tensor<2x126xf32>, %t: tensor<1x63xf32>) -> tensor<2x126xf32> {
  // expected-error @+1 {{'graph.rope' op the table must be [1, D] or [2, D] (a row per row of x) with D even, got [1, 63]}}
  %r = graph.rope %x, %t {cols = 126 : i64} : tensor<2x126xf32>, tensor<1x63xf32> -> tensor<2x126xf32>
  graph.return %r : tensor<2x126xf32>
}

// -----

graph.func @rope_cols(%x: tensor<2x128xf32>, %t: tensor<2x64xf16>) -> tensor<2x128xf32> {
  // expected-error @+1 {{'graph.rope' op cols must be a positive multiple of the table's 64 columns, at most x's 128, got 96}}
  %r = graph.rope %x, %t {cols = 96 : i64} : tensor<2x128xf32>, tensor<2x64xf16> -> tensor<2x128xf32>
  graph.return %r : tensor<2x128xf32>
}

// -----

graph.func @rope_rank(%x: tensor<2x1x128xf32>, %t: tensor<1x64xf32>) -> tensor<2x1x128xf32> {
  // expected-error @+1 {{'graph.rope' op x must be [M, N], got [2, 1, 128]}}
  %r = graph.rope %x, %t {cols = 128 : i64} : tensor<2x1x128xf32>, tensor<1x64xf32> -> tensor<2x1x128xf32>
  graph.return %r : tensor<2x1x128xf32>
}

// -----

graph.func @rope_integer_table(%x: tensor<2x128xf32>, %t: tensor<1x64xi8>) -> tensor<2x128xf32> {
  // expected-error @+1 {{'graph.rope' op the table must be floating point, got i8; insert a convert}}
  %r = graph.rope %x, %t {cols = 128 : i64} : tensor<2x128xf32>, tensor<1x64xi8> -> tensor<2x128xf32>
  graph.return %r : tensor<2x128xf32>
}

// -----

graph.func @rope_result(%x: tensor<2x128xf32>, %t: tensor<1x64xf32>) -> tensor<2x128xbf16> {
  // expected-error @+1 {{'graph.rope' op result type 'tensor<2x128xbf16>' must be x's, 'tensor<2x128xf32>'}}
  %r = graph.rope %x, %t {cols = 128 : i64} : tensor<2x128xf32>, tensor<1x64xf32> -> tensor<2x128xbf16>
  graph.return %r : tensor<2x128xbf16>
}
