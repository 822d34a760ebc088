// A reduction that is not per channel is a library call; integer step
// arithmetic is not fused either.
func.func @not_fusible(%x: tensor<2x3xf32>, %i: tensor<i64>) -> (tensor<2xf32>, tensor<i64>) {
  %r = fluid.relu %x : tensor<2x3xf32>
  %s = fluid.reduce_sum %r {axes = array<i64: 1>} : tensor<2x3xf32> -> tensor<2xf32>
  %a = fluid.add %i, %i : tensor<i64>, tensor<i64> -> tensor<i64>
  %b = fluid.mul %a, %i : tensor<i64>, tensor<i64> -> tensor<i64>
  return %s, %b : tensor<2xf32>, tensor<i64>
}
