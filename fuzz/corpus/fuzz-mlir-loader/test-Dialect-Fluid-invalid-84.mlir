fluid.param @w : tensor<4x4xf32> init gaussian(std = 1.0)
