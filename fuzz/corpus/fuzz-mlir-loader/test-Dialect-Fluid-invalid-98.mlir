fluid.param @w : tensor<4xf32> init zeros {lr_multi = 2.0 : f64}
