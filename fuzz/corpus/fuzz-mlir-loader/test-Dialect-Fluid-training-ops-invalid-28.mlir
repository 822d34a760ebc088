func.func @f(%p: tensor<4xf32>, %lr: tensor<f32>) {
  %0:2 = "fluid.momentum_group"(%p, %p, %p, %lr) : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<f32>) -> (tensor<4xf32>, tensor<5xf32>)
  return
}
