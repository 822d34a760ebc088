fluid.param @huge : tensor<3037000500x3037000500x2xf32> init zeros
