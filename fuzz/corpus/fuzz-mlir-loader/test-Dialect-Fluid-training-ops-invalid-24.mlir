// Grouped updates are verified entry by entry.
func.func @f(%p: tensor<4xf32>, %q: tensor<3xf32>, %g: tensor<4xf32>, %lr: tensor<f32>) {
  %0:2 = "fluid.sgd_group"(%p, %q, %g, %g, %lr) : (tensor<4xf32>, tensor<3xf32>, tensor<4xf32>, tensor<4xf32>, tensor<f32>) -> (tensor<4xf32>, tensor<3xf32>)
  return
}
