// batch_norm_apply is what the backward pass recomputes; it is never
// differentiated.
fluid.param @gamma : tensor<4xf32> init ones
func.func @differentiates_batch_norm_apply(%x: tensor<2x4xf32>, %c: tensor<4xf32>) -> tensor<f32> {
  %g = fluid.get_param @gamma : tensor<4xf32>
  %y = fluid.batch_norm_apply %x, %g, %c, %c, %c : tensor<2x4xf32>, tensor<4xf32>
  %l = fluid.mean %y : tensor<2x4xf32> -> tensor<f32>
  return %l : tensor<f32>
}
