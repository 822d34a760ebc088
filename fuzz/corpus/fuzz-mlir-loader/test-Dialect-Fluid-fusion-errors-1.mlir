func.func @two_shapes(%x: tensor<2x3xf32>, %y: tensor<3xf32>) -> tensor<2x3xf32> {
  %r = fluid.fusion ins(%x, %y : tensor<2x3xf32>, tensor<3xf32>) -> (tensor<2x3xf32>) {
  ^bb0(%a: tensor<2x3xf32>, %b: tensor<3xf32>):
    %m = fluid.mul %a, %b : tensor<2x3xf32>, tensor<3xf32> -> tensor<2x3xf32>
    %n = fluid.neg %b : tensor<3xf32>
    fluid.yield %m : tensor<2x3xf32>
  }
  return %r : tensor<2x3xf32>
}
