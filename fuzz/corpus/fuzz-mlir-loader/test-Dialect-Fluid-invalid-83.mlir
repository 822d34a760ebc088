fluid.param @w : tensor<4x4xf32> init constant(0x7FF8000000000000)
