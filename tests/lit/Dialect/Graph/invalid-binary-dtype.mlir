// RUN: %mtc-opt %s -split-input-file -verify-diagnostics


graph.func @add_dtype_mismatch(%a: tensor<4xf32>, %b: tensor<4xbf16>) -> tensor<4xf32> {
  // expected-error-re @+2 {{{{^}}add: element types differ (f32 vs bf16); insert a convert{{$}}}}
  // expected-error @+1 {{'graph.add' op failed to infer returned types}}
  %y = graph.add %a, %b : tensor<4xf32>, tensor<4xbf16> -> tensor<4xf32>
  graph.return %y : tensor<4xf32>
}

// -----

graph.func @sub_dtype_mismatch(%a: tensor<4xf16>, %b: tensor<4xbf16>) -> tensor<4xf16> {
  // expected-error-re @+2 {{{{^}}sub: element types differ (f16 vs bf16); insert a convert{{$}}}}
  // expected-error @+1 {{'graph.sub' op failed to infer returned types}}
  %y = graph.sub %a, %b : tensor<4xf16>, tensor<4xbf16> -> tensor<4xf16>
  graph.return %y : tensor<4xf16>
}

// -----

graph.func @mul_integer(%a: tensor<4xi8>, %b: tensor<4xi8>) -> tensor<4xi8> {
  // expected-error-re @+2 {{{{^}}mul: operands must be floating point, got i8; insert a convert{{$}}}}
  // expected-error @+1 {{'graph.mul' op failed to infer returned types}}
  %y = graph.mul %a, %b : tensor<4xi8>, tensor<4xi8> -> tensor<4xi8>
  graph.return %y : tensor<4xi8>
}
