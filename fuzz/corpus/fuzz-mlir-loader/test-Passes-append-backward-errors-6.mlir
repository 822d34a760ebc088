// Only the optimizer writes trainable parameters.
fluid.param @w : tensor<4xf32> init ones
func.func @writes_trainable() -> tensor<f32> {
  %w = fluid.get_param @w : tensor<4xf32>
  %r = fluid.relu %w : tensor<4xf32>
  fluid.set_param @w, %r : tensor<4xf32>
  %l = fluid.mean %w : tensor<4xf32> -> tensor<f32>
  return %l : tensor<f32>
}
