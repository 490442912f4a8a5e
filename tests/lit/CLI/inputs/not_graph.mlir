// A module that holds something other than graph.func at the top level.
graph.func @g(%x: tensor<4xf32>) -> tensor<4xf32> {
  graph.return %x : tensor<4xf32>
}

llvm.func @helper()
