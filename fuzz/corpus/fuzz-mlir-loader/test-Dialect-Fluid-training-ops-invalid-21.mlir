func.func @f(%p: tensor<4xf32>, %lr: tensor<f32>, %step: tensor<2xi64>) {
  %0:3 = fluid.adam %p, %p, %p, %p, %lr, %step : tensor<4xf32>, tensor<f32>, tensor<2xi64>
  return
}
