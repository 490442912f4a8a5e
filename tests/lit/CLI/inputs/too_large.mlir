// A graph-dialect input with a tensor of more than 2^40 elements.
graph.func @huge(%x: tensor<1048576x1048577xf32>) -> tensor<1048576x1048577xf32> {
  %r = graph.relu %x : tensor<1048576x1048577xf32> -> tensor<1048576x1048577xf32>
  graph.return %r : tensor<1048576x1048577xf32>
}
