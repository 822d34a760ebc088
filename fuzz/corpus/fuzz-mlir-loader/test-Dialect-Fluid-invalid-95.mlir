func.func @f(%x: tensor<1x1x4x0xf32>) -> tensor<1x1x2x1xf32> {
  %0 = fluid.max_pool2d %x {kernel_size = array<i64: 2, 2>, padding = array<i64: 0, 1, 0, 1>} : tensor<1x1x4x0xf32> -> tensor<1x1x2x1xf32>
  return %0 : tensor<1x1x2x1xf32>
}
