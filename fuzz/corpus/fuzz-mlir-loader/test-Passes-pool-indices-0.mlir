// --fluid-pool-indices: a fluid.max_pool2d whose gradient is taken saves
// its picks (fluid.max_pool2d_with_indices), and its gradients read them
// (fluid.max_pool2d_grad_indices) instead of the pool's input; pools that
// cannot (a kernel of more than 256 cells, a max_pool2d_grad of the input
// that is not theirs) or need not (no gradient) stay as they are.

// The pool and both of its gradients (two, to be robust), attributes kept;
// the forward's other uses read the new output.
func.func @stem(%x: tensor<2x4x16x16xf32>, %dy: tensor<2x4x8x8xf32>) -> (tensor<2x4x8x8xf32>, tensor<2x4x16x16xf32>) {
  %y = fluid.max_pool2d %x {kernel_size = array<i64: 3, 3>, strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>} : tensor<2x4x16x16xf32> -> tensor<2x4x8x8xf32>
  %r = fluid.relu %y : tensor<2x4x8x8xf32>
  %dx = fluid.max_pool2d_grad %dy, %x {kernel_size = array<i64: 3, 3>, strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>} : tensor<2x4x8x8xf32>, tensor<2x4x16x16xf32>
  %dx2 = fluid.max_pool2d_grad %r, %x {kernel_size = array<i64: 3, 3>, strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>} : tensor<2x4x8x8xf32>, tensor<2x4x16x16xf32>
  %sum = fluid.add %dx, %dx2 : tensor<2x4x16x16xf32>, tensor<2x4x16x16xf32> -> tensor<2x4x16x16xf32>
  return %r, %sum : tensor<2x4x8x8xf32>, tensor<2x4x16x16xf32>
}
