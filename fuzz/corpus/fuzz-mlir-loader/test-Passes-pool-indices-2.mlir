// Left alone: a kernel of 17x16 = 272 cells (too many for ui8 picks).
func.func @large_kernel(%x: tensor<1x1x17x16xf32>, %dy: tensor<1x1x1x1xf32>) -> (tensor<1x1x1x1xf32>, tensor<1x1x17x16xf32>) {
  %y = fluid.max_pool2d %x {kernel_size = array<i64: 17, 16>} : tensor<1x1x17x16xf32> -> tensor<1x1x1x1xf32>
  %dx = fluid.max_pool2d_grad %dy, %x {kernel_size = array<i64: 17, 16>} : tensor<1x1x1x1xf32>, tensor<1x1x17x16xf32>
  return %y, %dx : tensor<1x1x1x1xf32>, tensor<1x1x17x16xf32>
}
