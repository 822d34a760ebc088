// Per-channel sums join their producers and siblings (relu_grad and the
// two sums of batch norm's gradient read dy once); a sum is only yielded,
// and the op that reads it is outside the region.
func.func @sums(%g: tensor<2x3x4x4xf32>, %y: tensor<2x3x4x4xf32>, %xhat: tensor<2x3x4x4xf32>) -> (tensor<2x3x4x4xf32>, tensor<3xf32>) {
  %d = fluid.relu_grad %g, %y : tensor<2x3x4x4xf32>
  %s1 = fluid.reduce_sum %d {axes = array<i64: 0, 2, 3>} : tensor<2x3x4x4xf32> -> tensor<3xf32>
  %p = fluid.mul %d, %xhat : tensor<2x3x4x4xf32>, tensor<2x3x4x4xf32> -> tensor<2x3x4x4xf32>
  %s2 = fluid.reduce_sum %p {axes = array<i64: 0, 2, 3>} : tensor<2x3x4x4xf32> -> tensor<3xf32>
  %q = fluid.mul %s1, %s2 : tensor<3xf32>, tensor<3xf32> -> tensor<3xf32>
  return %d, %q : tensor<2x3x4x4xf32>, tensor<3xf32>
}
