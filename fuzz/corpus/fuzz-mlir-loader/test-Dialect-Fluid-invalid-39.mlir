func.func @f(%a: tensor<2x3x4xf32>, %b: tensor<5x1x4xf32>) -> tensor<2x3x4xf32> {
  %0 = fluid.mul %a, %b : tensor<2x3x4xf32>, tensor<5x1x4xf32> -> tensor<2x3x4xf32>
  return %0 : tensor<2x3x4xf32>
}
