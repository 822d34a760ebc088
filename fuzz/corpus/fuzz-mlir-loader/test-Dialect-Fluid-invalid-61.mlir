func.func @f(%a: tensor<2xf32>, %b: tensor<2xi64>) -> tensor<4xf32> {
  %0 = fluid.concat %a, %b {axis = 0 : i64} : (tensor<2xf32>, tensor<2xi64>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
