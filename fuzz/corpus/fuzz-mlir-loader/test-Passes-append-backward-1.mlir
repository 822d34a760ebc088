fluid.param @w : tensor<3xf32> init ones

// A parameter read twice: one gradient, the sum over both reads.
func.func @twice() -> tensor<f32> {
  %a = fluid.get_param @w : tensor<3xf32>
  %b = fluid.get_param @w : tensor<3xf32>
  %p = fluid.mul %a, %b : tensor<3xf32>, tensor<3xf32> -> tensor<3xf32>
  %l = fluid.reduce_sum %p : tensor<3xf32> -> tensor<f32>
  return %l : tensor<f32>
}
