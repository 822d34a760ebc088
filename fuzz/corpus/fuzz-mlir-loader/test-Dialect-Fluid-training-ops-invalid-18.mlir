func.func @f(%p: tensor<4xf32>, %lr: tensor<f64>) {
  %0 = fluid.sgd %p, %p, %lr : tensor<4xf32>, tensor<f64>
  return
}
