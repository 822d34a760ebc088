func.func @f(%g: tensor<f32>, %l: tensor<4x10xf32>, %lab: tensor<3xi64>) {
  %0 = fluid.softmax_cross_entropy_grad %g, %l, %lab : tensor<f32>, tensor<4x10xf32>, tensor<3xi64>
  return
}
