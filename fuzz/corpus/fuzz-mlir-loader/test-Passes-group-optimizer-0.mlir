// --fluid-group-optimizer: updates with the same rule, element type, rate
// (and step) and hyper-parameters become one grouped op where the last of
// them was, their set_params behind it; everything else stays apart.

fluid.param @a : tensor<4xf32> init ones
fluid.param @b : tensor<2x3xf32> init ones
fluid.param @c : tensor<4xf32> init ones
fluid.param @d : tensor<4xf64> init ones
fluid.param @e : tensor<3xf64> init ones
fluid.param @f : tensor<4xf32> init ones

// Two dtypes give two groups; a different weight decay stays single.
func.func @by_dtype_and_decay(%g4: tensor<4xf32>, %g23: tensor<2x3xf32>, %gd: tensor<4xf64>, %ge: tensor<3xf64>, %lr: tensor<f32>, %lr64: tensor<f64>) {
  %a = fluid.get_param @a : tensor<4xf32>
  %na = fluid.sgd %a, %g4, %lr {weight_decay = 1.0e-4 : f64} : tensor<4xf32>, tensor<f32>
  fluid.set_param @a, %na : tensor<4xf32>
  %b = fluid.get_param @b : tensor<2x3xf32>
  %nb = fluid.sgd %b, %g23, %lr {weight_decay = 1.0e-4 : f64} : tensor<2x3xf32>, tensor<f32>
  fluid.set_param @b, %nb : tensor<2x3xf32>
  %c = fluid.get_param @c : tensor<4xf32>
  %nc = fluid.sgd %c, %g4, %lr {weight_decay = 1.0e-3 : f64} : tensor<4xf32>, tensor<f32>
  fluid.set_param @c, %nc : tensor<4xf32>
  %d = fluid.get_param @d : tensor<4xf64>
  %nd = fluid.sgd %d, %gd, %lr64 {weight_decay = 1.0e-4 : f64} : tensor<4xf64>, tensor<f64>
  fluid.set_param @d, %nd : tensor<4xf64>
  %f = fluid.get_param @f : tensor<4xf32>
  %nf = fluid.sgd %f, %g4, %lr {weight_decay = 1.0e-4 : f64} : tensor<4xf32>, tensor<f32>
  fluid.set_param @f, %nf : tensor<4xf32>
  %e = fluid.get_param @e : tensor<3xf64>
  %ne = fluid.sgd %e, %ge, %lr64 {weight_decay = 1.0e-4 : f64} : tensor<3xf64>, tensor<f64>
  fluid.set_param @e, %ne : tensor<3xf64>
  return
}
