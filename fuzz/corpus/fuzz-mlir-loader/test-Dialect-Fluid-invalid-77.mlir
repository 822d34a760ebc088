fluid.param @step : tensor<i64> init normal(std = 1.0)
