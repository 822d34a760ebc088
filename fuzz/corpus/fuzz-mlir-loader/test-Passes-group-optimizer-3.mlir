fluid.param @a : tensor<4xf32> init ones
fluid.param @b : tensor<4xf32> init ones

// A group of one is the single op.
func.func @alone(%g: tensor<4xf32>, %lr: tensor<f32>, %lr2: tensor<f32>) {
  %a = fluid.get_param @a : tensor<4xf32>
  %na = fluid.sgd %a, %g, %lr : tensor<4xf32>, tensor<f32>
  fluid.set_param @a, %na : tensor<4xf32>
  %b = fluid.get_param @b : tensor<4xf32>
  %nb = fluid.sgd %b, %g, %lr2 : tensor<4xf32>, tensor<f32>
  fluid.set_param @b, %nb : tensor<4xf32>
  return
}
