fluid.param @w : tensor<4xf32> init zeros {decay_mult = 0x7FF0000000000000 : f64}
