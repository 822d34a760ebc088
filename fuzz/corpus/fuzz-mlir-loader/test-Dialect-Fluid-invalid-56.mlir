func.func @f(%x: tensor<2x3xf32>) -> tensor<6xf64> {
  %0 = fluid.reshape %x : tensor<2x3xf32> -> tensor<6xf64>
  return %0 : tensor<6xf64>
}
