fluid.param @w : tensor<4xf32> init zeros
fluid.param @w : tensor<4xf32> init ones
