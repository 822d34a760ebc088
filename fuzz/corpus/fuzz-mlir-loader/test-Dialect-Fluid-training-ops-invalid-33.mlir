func.func @f(%dy: tensor<1x3x5x6xf32>, %i: tensor<1x3x6x5xui8>) {
  %0 = fluid.max_pool2d_grad_indices %dy, %i {kernel_size = array<i64: 3, 3>, strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>}
      : tensor<1x3x5x6xf32>, tensor<1x3x6x5xui8> -> tensor<1x3x10x11xf32>
  return
}
