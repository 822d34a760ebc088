// A convolution's loss, for test/Passes/mixed-precision.mlir.
fluid.param @conv.weight : tensor<4x3x3x3xf32> init kaiming_normal(fan_out, gain = 1.4142135623730951)
func.func @loss(%x: tensor<2x3x8x8xf32>, %labels: tensor<2xi64>) -> tensor<f32> attributes {fluid.entry} {
  %w = fluid.get_param @conv.weight : tensor<4x3x3x3xf32>
  %c = fluid.conv2d %x, %w {padding = array<i64: 1, 1, 1, 1>} : (tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<2x4x8x8xf32>
  %p = fluid.global_avg_pool %c : tensor<2x4x8x8xf32> -> tensor<2x4x1x1xf32>
  %f = fluid.flatten %p : tensor<2x4x1x1xf32> -> tensor<2x4xf32>
  %l = fluid.softmax_cross_entropy %f, %labels : tensor<2x4xf32>, tensor<2xi64> -> tensor<f32>
  return %l : tensor<f32>
}
