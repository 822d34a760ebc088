fluid.param @w : tensor<4x4xf32> init kaiming_uniform(fan_avg, gain = 1.0)
