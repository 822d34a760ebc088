func.func @stray_yield(%x: tensor<4xf32>) {
  fluid.yield %x : tensor<4xf32>
}
