func.func @f(%p: tensor<4xf32>, %lr: tensor<f32>, %step: tensor<i64>) {
  %0, %1, %2 = fluid.adam_group (%p), (%p), (%p), (%p), %lr, %step {beta2 = 1.5 : f64} : (tensor<4xf32>), tensor<f32>, tensor<i64>
  return
}
