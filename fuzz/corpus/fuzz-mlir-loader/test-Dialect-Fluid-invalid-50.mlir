func.func @f(%a: tensor<4x8xf32>, %b: tensor<8x5xf32>) -> tensor<4x8xf32> {
  %0 = fluid.matmul %a, %b {transpose_rhs} : tensor<4x8xf32>, tensor<8x5xf32> -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}
