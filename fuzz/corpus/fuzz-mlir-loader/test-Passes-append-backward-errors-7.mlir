// State is written once per step.
fluid.param @w : tensor<4xf32> init ones
fluid.param @stat : tensor<4xf32> init zeros {trainable = false}
func.func @writes_twice() -> tensor<f32> {
  %w = fluid.get_param @w : tensor<4xf32>
  fluid.set_param @stat, %w : tensor<4xf32>
  fluid.set_param @stat, %w : tensor<4xf32>
  %l = fluid.mean %w : tensor<4xf32> -> tensor<f32>
  return %l : tensor<f32>
}
