// Every verifier message of the math, gradient and optimizer ops.

func.func @f(%dy: tensor<2x8x5x5xf32>, %w: tensor<8x4x3x3xf32>) {
  %0 = fluid.conv2d_grad_input %dy, %w {strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>}
      : (tensor<2x8x5x5xf32>, tensor<8x4x3x3xf32>) -> tensor<2x4x9x7xf32>
  return
}
