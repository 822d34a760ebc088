fluid.param @a : tensor<4xf32> init ones
fluid.param @b : tensor<4xf32> init ones
fluid.param @c : tensor<4xf32> init ones
fluid.param @d : tensor<4xf32> init ones
fluid.param @e : tensor<4xf32> init ones

// Left alone, since grouping would be visible: @a's new value is also
// returned, @b is read again before the group's place, and @c is updated
// twice (the first update's set cannot move past the second's read; the
// second sets a name the group would already set). @d and @e group.
func.func @visible(%g: tensor<4xf32>, %lr: tensor<f32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %a = fluid.get_param @a : tensor<4xf32>
  %na = fluid.sgd %a, %g, %lr : tensor<4xf32>, tensor<f32>
  fluid.set_param @a, %na : tensor<4xf32>
  %b = fluid.get_param @b : tensor<4xf32>
  %nb = fluid.sgd %b, %g, %lr : tensor<4xf32>, tensor<f32>
  fluid.set_param @b, %nb : tensor<4xf32>
  %c = fluid.get_param @c : tensor<4xf32>
  %nc = fluid.sgd %c, %g, %lr : tensor<4xf32>, tensor<f32>
  fluid.set_param @c, %nc : tensor<4xf32>
  %b2 = fluid.get_param @b : tensor<4xf32>
  %d = fluid.get_param @d : tensor<4xf32>
  %nd = fluid.sgd %d, %g, %lr : tensor<4xf32>, tensor<f32>
  fluid.set_param @d, %nd : tensor<4xf32>
  %c2 = fluid.get_param @c : tensor<4xf32>
  %nc2 = fluid.sgd %c2, %g, %lr : tensor<4xf32>, tensor<f32>
  fluid.set_param @c, %nc2 : tensor<4xf32>
  %e = fluid.get_param @e : tensor<4xf32>
  %ne = fluid.sgd %e, %g, %lr : tensor<4xf32>, tensor<f32>
  fluid.set_param @e, %ne : tensor<4xf32>
  return %na, %b2 : tensor<4xf32>, tensor<4xf32>
}
