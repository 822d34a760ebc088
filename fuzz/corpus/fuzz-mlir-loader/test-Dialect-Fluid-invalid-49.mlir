func.func @f(%a: tensor<4x8xf32>, %b: tensor<2x8x5xf32>) -> tensor<4x5xf32> {
  %0 = fluid.matmul %a, %b : tensor<4x8xf32>, tensor<2x8x5xf32> -> tensor<4x5xf32>
  return %0 : tensor<4x5xf32>
}
