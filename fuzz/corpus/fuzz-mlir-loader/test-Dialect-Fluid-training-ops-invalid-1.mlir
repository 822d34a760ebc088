func.func @f(%dy: tensor<2x8x5x4xf32>, %x: tensor<2x4x9x7xf32>) {
  %0 = fluid.conv2d_grad_filter %dy, %x {strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>}
      : (tensor<2x8x5x4xf32>, tensor<2x4x9x7xf32>) -> tensor<8x2x3x3xf32>
  return
}
