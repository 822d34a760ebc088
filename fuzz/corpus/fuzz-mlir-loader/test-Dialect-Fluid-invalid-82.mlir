fluid.param @w : tensor<4x4xf32> init xavier_uniform(gain = -2.0)
