func.func @f(%x: tensor<1x3x10x11xf32>) -> tensor<1x3x9x1xf32> {
  %0 = fluid.max_pool2d %x {kernel_size = array<i64: 2, 12>} : tensor<1x3x10x11xf32> -> tensor<1x3x9x1xf32>
  return %0 : tensor<1x3x9x1xf32>
}
