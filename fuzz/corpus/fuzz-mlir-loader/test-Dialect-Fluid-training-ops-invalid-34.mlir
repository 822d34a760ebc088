func.func @f(%dy: tensor<1x1x1x1xf32>, %i: tensor<1x1x1x1xui8>) {
  %0 = fluid.max_pool2d_grad_indices %dy, %i {kernel_size = array<i64: 16, 17>}
      : tensor<1x1x1x1xf32>, tensor<1x1x1x1xui8> -> tensor<1x1x16x17xf32>
  return
}
