fluid.param @w : tensor<4xf32> init zeros {fluid.optimizer_state = "yes"}
