func.func @f(%a: tensor<4xf32>, %b: tensor<4x5xf32>) -> tensor<5xf32> {
  %0 = fluid.matmul %a, %b : tensor<4xf32>, tensor<4x5xf32> -> tensor<5xf32>
  return %0 : tensor<5xf32>
}
