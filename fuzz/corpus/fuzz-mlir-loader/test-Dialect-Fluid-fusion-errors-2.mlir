func.func @sum_used_inside(%x: tensor<2x3xf32>) -> tensor<3xf32> {
  %r = fluid.fusion ins(%x : tensor<2x3xf32>) -> (tensor<3xf32>) {
  ^bb0(%a: tensor<2x3xf32>):
    %e = fluid.exp %a : tensor<2x3xf32>
    %s = fluid.reduce_sum %e {axes = array<i64: 0>} : tensor<2x3xf32> -> tensor<3xf32>
    %t = fluid.neg %s : tensor<3xf32>
    fluid.yield %t : tensor<3xf32>
  }
  return %r : tensor<3xf32>
}
