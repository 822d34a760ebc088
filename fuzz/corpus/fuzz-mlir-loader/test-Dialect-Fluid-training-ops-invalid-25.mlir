func.func @f(%p: tensor<4xf32>, %d: tensor<4xf64>, %lr: tensor<f32>) {
  %0:2 = "fluid.sgd_group"(%p, %d, %p, %d, %lr) : (tensor<4xf32>, tensor<4xf64>, tensor<4xf32>, tensor<4xf64>, tensor<f32>) -> (tensor<4xf32>, tensor<4xf64>)
  return
}
