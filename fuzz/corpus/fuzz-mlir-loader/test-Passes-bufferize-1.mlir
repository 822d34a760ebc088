fluid.param @w : tensor<3xf32> init ones

// A constant is a launch of the constant kernel; a parameter returned as
// it is goes out as a copy, so the caller never sees later updates.
func.func @constants() -> (tensor<3xf32>, tensor<3xf32>) {
  %c = fluid.constant dense<2.0> : tensor<3xf32>
  %w = fluid.get_param @w : tensor<3xf32>
  return %c, %w : tensor<3xf32>, tensor<3xf32>
}
