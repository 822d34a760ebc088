func.func @f(%p: tensor<4xf32>, %lr: tensor<f64>) {
  %0:2, %1:2 = fluid.momentum_group (%p, %p), (%p, %p), (%p, %p), %lr : (tensor<4xf32>, tensor<4xf32>), tensor<f64>
  return
}
