func.func @f(%p: tensor<4xf32>, %lr: tensor<f32>) {
  %0 = fluid.sgd %p, %p, %lr {weight_decay = -1.0 : f64} : tensor<4xf32>, tensor<f32>
  return
}
