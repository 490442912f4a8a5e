// RUN: %mtc-opt %s -split-input-file -verify-diagnostics


// expected-error @+1 {{dimensions must be positive, got [0, 4]}}
graph.func @zero_input(%x: tensor<0x4xf32>) -> tensor<0x4xf32> {
  graph.return %x : tensor<0x4xf32>
}

// -----

// expected-error @+1 {{tensor of shape [1048576, 1048577] is too large (more than 2^40 elements)}}
graph.func @huge_input(%x: tensor<1048576x1048577xf32>) -> tensor<1048576x1048577xf32> {
  graph.return %x : tensor<1048576x1048577xf32>
}

// -----

graph.func @huge_node(%a: tensor<1048576x1xf32>, %b: tensor<2097152xf32>) -> tensor<1048576x1xf32> {
  // expected-error @+1 {{tensor of shape [1048576, 2097152] is too large (more than 2^40 elements)}}
  %c = graph.add %a, %b : tensor<1048576x1xf32>, tensor<2097152xf32> -> tensor<1048576x2097152xf32>
  graph.return %a : tensor<1048576x1xf32>
}
