func.func @f(%c: tensor<4xf32>, %a: tensor<4xf64>) {
  %0 = fluid.select %c, %a, %a : tensor<4xf32>, tensor<4xf64>, tensor<4xf64> -> tensor<4xf64>
  return
}
