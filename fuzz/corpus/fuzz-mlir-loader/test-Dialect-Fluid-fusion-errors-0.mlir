func.func @not_elementwise(%x: tensor<1x2x4x4xf32>, %w: tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32> {
  %r = fluid.fusion ins(%x, %w : tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> (tensor<1x2x4x4xf32>) {
  ^bb0(%a: tensor<1x2x4x4xf32>, %b: tensor<2x2x1x1xf32>):
    %c = fluid.conv2d %a, %b : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
    fluid.yield %c : tensor<1x2x4x4xf32>
  }
  return %r : tensor<1x2x4x4xf32>
}
