fluid.param @w : tensor<4xf32> init ones

func.func @step() attributes {fluid.entry} {
  %w = fluid.get_param @w : tensor<4xf32>
  fluid.set_param @w, %w : tensor<4xf32>
  return
}
