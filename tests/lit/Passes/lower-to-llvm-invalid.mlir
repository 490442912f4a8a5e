// RUN: %mtc-opt %s --mtc-lower-to-llvm -verify-diagnostics

// mtc-lower-to-llvm runs after mtc-lower-to-nvvm: anything that is not a GPU
// kernel by then is an error.
// expected-error @+1 {{failed to legalize operation 'graph.func'}}
graph.func @g(%a: tensor<4xf32>) -> tensor<4xf32> {
  graph.return %a : tensor<4xf32>
}
