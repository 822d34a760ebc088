func.func @f(%x: tensor<4x3xf32>) {
  %0 = fluid.sum_to %x : tensor<4x3xf32> -> tensor<2x3xf32>
  return
}
