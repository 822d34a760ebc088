func.func @real_reshape(%x: tensor<2x3xf32>) -> tensor<6xf32> {
  %0 = fluid.reshape %x : tensor<2x3xf32> -> tensor<6xf32>
  return %0 : tensor<6xf32>
}
