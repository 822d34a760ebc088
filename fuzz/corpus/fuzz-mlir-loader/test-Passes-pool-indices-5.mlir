// Left alone: a gradient before the pool (the picks would not exist yet).
func.func @gradient_first(%x: tensor<2x4x8x8xf32>, %dy: tensor<2x4x4x4xf32>) -> (tensor<2x4x8x8xf32>, tensor<2x4x4x4xf32>) {
  %dx = fluid.max_pool2d_grad %dy, %x {kernel_size = array<i64: 2, 2>, strides = array<i64: 2, 2>} : tensor<2x4x4x4xf32>, tensor<2x4x8x8xf32>
  %y = fluid.max_pool2d %x {kernel_size = array<i64: 2, 2>, strides = array<i64: 2, 2>} : tensor<2x4x8x8xf32> -> tensor<2x4x4x4xf32>
  return %dx, %y : tensor<2x4x8x8xf32>, tensor<2x4x4x4xf32>
}
