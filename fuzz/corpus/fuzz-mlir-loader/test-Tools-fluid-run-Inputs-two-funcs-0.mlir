func.func @a(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = fluid.relu %x : tensor<4xf32>
  return %0 : tensor<4xf32>
}
func.func @b(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = fluid.tanh %x : tensor<4xf32>
  return %0 : tensor<4xf32>
}
