func.func @f(%p: tensor<4xf32>, %lr: tensor<f32>) {
  // A stray operand after the rate: the lists would shift.
  %0:4 = "fluid.momentum_group"(%p, %p, %p, %p, %p, %p, %lr, %lr) : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<f32>, tensor<f32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
  return
}
