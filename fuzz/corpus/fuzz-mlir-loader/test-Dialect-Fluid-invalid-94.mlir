func.func @f(%x: tensor<1x1x4x4xf32>, %w: tensor<1x1x0x3xf32>) -> tensor<1x1x4x2xf32> {
  %0 = fluid.conv2d %x, %w : (tensor<1x1x4x4xf32>, tensor<1x1x0x3xf32>) -> tensor<1x1x4x2xf32>
  return %0 : tensor<1x1x4x2xf32>
}
