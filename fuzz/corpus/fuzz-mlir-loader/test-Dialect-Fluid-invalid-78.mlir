fluid.param @w : tensor<4xf32> init zeros {lr_mult = -1.0 : f64}
