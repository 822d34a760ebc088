func.func @not_a_view(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %r = fluid.fusion ins(%x : tensor<2x3xf32>) -> (tensor<2x3xf32>) {
  ^bb0(%a: tensor<2x3xf32>):
    %s = fluid.slice %a {axis = 0 : i64, offset = 1 : i64} : tensor<2x3xf32> -> tensor<1x3xf32>
    %m = fluid.mul %a, %s : tensor<2x3xf32>, tensor<1x3xf32> -> tensor<2x3xf32>
    fluid.yield %m : tensor<2x3xf32>
  }
  return %r : tensor<2x3xf32>
}
