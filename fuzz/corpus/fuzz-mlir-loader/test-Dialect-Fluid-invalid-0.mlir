// Every verifier and shape-rule message of the dialect, each triggered once.
// Shape rules report the reason, then MLIR adds 'failed to infer returned types'.

func.func @f(%x: tensor<4x9x7xf32>, %w: tensor<8x4x3x3xf32>) -> tensor<8x7x5xf32> {
  %0 = fluid.conv2d %x, %w : (tensor<4x9x7xf32>, tensor<8x4x3x3xf32>) -> tensor<8x7x5xf32>
  return %0 : tensor<8x7x5xf32>
}
