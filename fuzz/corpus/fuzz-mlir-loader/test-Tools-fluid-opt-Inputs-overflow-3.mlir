func.func @f(%x: tensor<1x1x4x4xf32>) -> tensor<1x1x2x2xf32> {
  %0 = fluid.max_pool2d %x {kernel_size = array<i64: 2, 2>, dilation = array<i64: 1, 9223372036854775807>} : tensor<1x1x4x4xf32> -> tensor<1x1x2x2xf32>
  return %0 : tensor<1x1x2x2xf32>
}
