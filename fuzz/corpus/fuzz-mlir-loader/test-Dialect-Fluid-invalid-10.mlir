func.func @f(%x: tensor<2x64x9x7xf32>, %w: tensor<48x2x3x3xf32>) -> tensor<2x48x7x5xf32> {
  %0 = fluid.conv2d %x, %w {groups = 32 : i64} : (tensor<2x64x9x7xf32>, tensor<48x2x3x3xf32>) -> tensor<2x48x7x5xf32>
  return %0 : tensor<2x48x7x5xf32>
}
