// A value used before the region's last op by an op outside it cannot be
// fused with that later op (the region would run after its use): the
// relu's group stops there.
func.func @use_in_between(%x: tensor<1x2x4x4xf32>) -> (tensor<1x2x1x1xf32>, tensor<1x2x4x4xf32>) {
  %r = fluid.relu %x : tensor<1x2x4x4xf32>
  %t = fluid.tanh %r : tensor<1x2x4x4xf32>
  %p = fluid.global_avg_pool %r : tensor<1x2x4x4xf32> -> tensor<1x2x1x1xf32>
  %n = fluid.neg %t : tensor<1x2x4x4xf32>
  return %p, %n : tensor<1x2x1x1xf32>, tensor<1x2x4x4xf32>
}
