fluid.param @w : tensor<?x4xf32> init zeros
