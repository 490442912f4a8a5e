// A graph-dialect input with a 0 dimension, which graph files cannot express.
graph.func @zero(%x: tensor<0x4xf32>) -> tensor<0x4xf32> {
  %r = graph.relu %x : tensor<0x4xf32> -> tensor<0x4xf32>
  graph.return %r : tensor<0x4xf32>
}
