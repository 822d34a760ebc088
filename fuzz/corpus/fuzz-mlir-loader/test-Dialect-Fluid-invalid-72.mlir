func.func @f(%x: tensor<4x10xf32>, %l: tensor<4xi64>) -> tensor<f32> {
  %0 = fluid.softmax_cross_entropy %x, %l {reduction = #fluid<reduction max>} : tensor<4x10xf32>, tensor<4xi64> -> tensor<f32>
  return %0 : tensor<f32>
}
