func.func @f(%x: tensor<2x4x9x7xf32>, %w: tensor<8x4x3x3xf32>) -> tensor<2x8x9x7xf32> {
  %0 = fluid.conv2d %x, %w {padding = array<i64: 1, -1, 1, 1>} : (tensor<2x4x9x7xf32>, tensor<8x4x3x3xf32>) -> tensor<2x8x9x7xf32>
  return %0 : tensor<2x8x9x7xf32>
}
