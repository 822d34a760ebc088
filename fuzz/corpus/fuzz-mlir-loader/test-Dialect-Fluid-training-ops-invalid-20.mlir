func.func @f(%p: tensor<4xf32>, %lr: tensor<f32>) {
  %0:2 = fluid.momentum %p, %p, %p, %lr {momentum = 1.5 : f64} : tensor<4xf32>, tensor<f32>
  return
}
