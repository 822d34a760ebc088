func.func @f(%p: tensor<4xf32>, %lr: tensor<f32>, %step: tensor<i32>) {
  %0, %1, %2 = fluid.adam_group (%p), (%p), (%p), (%p), %lr, %step : (tensor<4xf32>), tensor<f32>, tensor<i32>
  return
}
