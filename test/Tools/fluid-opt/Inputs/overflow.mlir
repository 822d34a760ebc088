// 2^32 x 2^32 elements: each dimension is fine, the product is not.
func.func @f(%x: tensor<4294967296x4294967296xf32>) -> tensor<4294967296x4294967296xf32> {
  %0 = fluid.relu %x : tensor<4294967296x4294967296xf32>
  return %0 : tensor<4294967296x4294967296xf32>
}

// -----

fluid.param @huge : tensor<3037000500x3037000500x2xf32> init zeros

// -----

func.func @f(%x: tensor<1x1x4x4xf32>, %w: tensor<1x1x3x3xf32>) -> tensor<1x1x2x2xf32> {
  %0 = fluid.conv2d %x, %w {padding = array<i64: 9223372036854775807, 0, 1, 0>} : (tensor<1x1x4x4xf32>, tensor<1x1x3x3xf32>) -> tensor<1x1x2x2xf32>
  return %0 : tensor<1x1x2x2xf32>
}

// -----

func.func @f(%x: tensor<1x1x4x4xf32>) -> tensor<1x1x2x2xf32> {
  %0 = fluid.max_pool2d %x {kernel_size = array<i64: 2, 2>, dilation = array<i64: 1, 9223372036854775807>} : tensor<1x1x4x4xf32> -> tensor<1x1x2x2xf32>
  return %0 : tensor<1x1x2x2xf32>
}
