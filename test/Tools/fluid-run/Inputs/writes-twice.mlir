fluid.param @stat : tensor<4xf32> init zeros {trainable = false}
func.func @step(%x: tensor<4xf32>) -> tensor<f32> attributes {fluid.entry} {
  fluid.set_param @stat, %x : tensor<4xf32>
  %r = fluid.relu %x : tensor<4xf32>
  fluid.set_param @stat, %r : tensor<4xf32>
  %l = fluid.mean %r : tensor<4xf32> -> tensor<f32>
  return %l : tensor<f32>
}
