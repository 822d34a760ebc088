func.func @view_of_computed(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %r = fluid.fusion ins(%x : tensor<2x3xf32>) -> (tensor<2x3xf32>) {
  ^bb0(%a: tensor<2x3xf32>):
    %n = fluid.neg %a : tensor<2x3xf32>
    %s = fluid.slice %n {axis = 0 : i64, offset = 0 : i64} : tensor<2x3xf32> -> tensor<1x3xf32>
    %m = fluid.mul %a, %s : tensor<2x3xf32>, tensor<1x3xf32> -> tensor<2x3xf32>
    fluid.yield %m : tensor<2x3xf32>
  }
  return %r : tensor<2x3xf32>
}
