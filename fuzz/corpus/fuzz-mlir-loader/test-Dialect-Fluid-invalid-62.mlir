func.func @f(%a: tensor<2x3x4xf32>) -> tensor<2x6x4xf32> {
  %0 = fluid.concat %a, %a {axis = -4 : i64} : (tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> tensor<2x6x4xf32>
  return %0 : tensor<2x6x4xf32>
}
