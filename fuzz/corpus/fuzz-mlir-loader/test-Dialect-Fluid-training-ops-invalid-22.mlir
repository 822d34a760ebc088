func.func @f(%p: tensor<4xf32>, %lr: tensor<f32>, %step: tensor<i64>) {
  %0:3 = fluid.adam %p, %p, %p, %p, %lr, %step {beta2 = 2.0 : f64} : tensor<4xf32>, tensor<f32>, tensor<i64>
  return
}
