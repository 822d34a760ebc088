func.func @f(%g: tensor<4xf32>, %l: tensor<4x10xf32>, %lab: tensor<4xi64>) {
  %0 = fluid.softmax_cross_entropy_grad %g, %l, %lab : tensor<4xf32>, tensor<4x10xf32>, tensor<4xi64>
  return
}
