func.func @f(%x: tensor<4x8xf32>, %w: tensor<5x8xf32>, %b: tensor<1x5xf32>) -> tensor<4x5xf32> {
  %0 = fluid.linear %x, %w, %b : tensor<4x8xf32>, tensor<5x8xf32>, tensor<1x5xf32> -> tensor<4x5xf32>
  return %0 : tensor<4x5xf32>
}
