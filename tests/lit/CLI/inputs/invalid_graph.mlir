// Graph-dialect IR that fails the verifier: K differs.
graph.func @g(%x: tensor<1x64xbf16>, %w: tensor<8x32xbf16>) -> tensor<1x8xbf16> {
  %y = graph.linear %x, %w : tensor<1x64xbf16>, tensor<8x32xbf16> -> tensor<1x8xbf16>
  graph.return %y : tensor<1x8xbf16>
}
