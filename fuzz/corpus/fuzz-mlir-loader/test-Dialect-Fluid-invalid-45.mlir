func.func @f(%x: tensor<1x3x10x11xf32>) -> tensor<1x3x9x10xf32> {
  %0 = fluid.max_pool2d %x : tensor<1x3x10x11xf32> -> tensor<1x3x9x10xf32>
  return %0 : tensor<1x3x9x10xf32>
}
