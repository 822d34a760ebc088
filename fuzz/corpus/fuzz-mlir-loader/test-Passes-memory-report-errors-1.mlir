fluid.param @w : tensor<4xf32> init ones

func.func @step() -> tensor<4xf32> attributes {fluid.entry} {
  %w = fluid.get_param @w : tensor<4xf32>
  return %w : tensor<4xf32>
}
