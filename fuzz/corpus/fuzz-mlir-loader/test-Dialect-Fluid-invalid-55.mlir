func.func @f(%x: tensor<2x3xf32>) -> tensor<7xf32> {
  %0 = fluid.reshape %x : tensor<2x3xf32> -> tensor<7xf32>
  return %0 : tensor<7xf32>
}
