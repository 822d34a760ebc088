fluid.param @w : tensor<4x4xf32> init normal(std = 0.0)
