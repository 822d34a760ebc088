func.func @f(%x: tensor<3x10x11xf32>) -> tensor<3x9x10xf32> {
  %0 = fluid.max_pool2d %x {kernel_size = array<i64: 2, 2>} : tensor<3x10x11xf32> -> tensor<3x9x10xf32>
  return %0 : tensor<3x9x10xf32>
}
