// A trainable parameter the loss does not reach is worth a warning.
fluid.param @used : tensor<4xf32> init ones
fluid.param @unused : tensor<4xf32> init ones
func.func @partly_used() -> tensor<f32> {
  %w = fluid.get_param @used : tensor<4xf32>
  %l = fluid.mean %w : tensor<4xf32> -> tensor<f32>
  return %l : tensor<f32>
}
