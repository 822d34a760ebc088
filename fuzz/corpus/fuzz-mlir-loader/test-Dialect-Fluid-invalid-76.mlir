fluid.param @b : tensor<8xf32> init kaiming_normal(fan_in, gain = 1.0)
