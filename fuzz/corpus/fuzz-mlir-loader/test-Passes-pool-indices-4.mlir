// Left alone: a max_pool2d_grad of the pool's input with other attributes
// (3x3 pad 1, not 2x2) is not its gradient; every gradient or none is
// rewritten, so neither pool is (each sees the other's gradient).
func.func @other_attributes(%x: tensor<2x4x8x8xf32>, %dy: tensor<2x4x4x4xf32>) -> (tensor<2x4x4x4xf32>, tensor<2x4x4x4xf32>, tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>) {
  %y = fluid.max_pool2d %x {kernel_size = array<i64: 2, 2>, strides = array<i64: 2, 2>} : tensor<2x4x8x8xf32> -> tensor<2x4x4x4xf32>
  %z = fluid.max_pool2d %x {kernel_size = array<i64: 3, 3>, strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>} : tensor<2x4x8x8xf32> -> tensor<2x4x4x4xf32>
  %dz = fluid.max_pool2d_grad %dy, %x {kernel_size = array<i64: 3, 3>, strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>} : tensor<2x4x4x4xf32>, tensor<2x4x8x8xf32>
  %dx = fluid.max_pool2d_grad %dy, %x {kernel_size = array<i64: 2, 2>, strides = array<i64: 2, 2>} : tensor<2x4x4x4xf32>, tensor<2x4x8x8xf32>
  return %y, %z, %dx, %dz : tensor<2x4x4x4xf32>, tensor<2x4x4x4xf32>, tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>
}
