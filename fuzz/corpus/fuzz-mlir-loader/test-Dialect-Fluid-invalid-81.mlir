fluid.param @w : tensor<4x4xf32> init uniform(1.0, -1.0)
