// The weight-only int8 linear of examples/woq_int8_linear.graph, written in
// the graph dialect.
graph.func @woq_linear(%x: tensor<1x4096xbf16>, %w: tensor<8192x4096xi8>,
                       %scales: tensor<8192xbf16>) -> tensor<1x8192xbf16> {
  %wf = graph.convert %w : tensor<8192x4096xi8> -> tensor<8192x4096xbf16>
  %y = graph.linear %x, %wf : tensor<1x4096xbf16>, tensor<8192x4096xbf16> -> tensor<1x8192xbf16>
  %out = graph.mul %y, %scales : tensor<1x8192xbf16>, tensor<8192xbf16> -> tensor<1x8192xbf16>
  graph.return %out : tensor<1x8192xbf16>
}
