func.func @f(%p: tensor<4xf32>, %lr: tensor<2xf32>) {
  %0 = fluid.sgd %p, %p, %lr : tensor<4xf32>, tensor<2xf32>
  return
}
