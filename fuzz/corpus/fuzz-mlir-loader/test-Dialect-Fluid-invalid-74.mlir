func.func @f(%x: tensor<2x3x4x5xf32>) -> tensor<2x3x4xf32> {
  %0 = fluid.reduce_sum %x {axes = array<i64: 3, -1>} : tensor<2x3x4x5xf32> -> tensor<2x3x4xf32>
  return %0 : tensor<2x3x4xf32>
}
