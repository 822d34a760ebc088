// Left alone: a pool whose gradient is not taken (inference).
func.func @no_gradient(%x: tensor<2x4x16x16xf32>) -> tensor<2x4x8x8xf32> {
  %y = fluid.max_pool2d %x {kernel_size = array<i64: 2, 2>, strides = array<i64: 2, 2>} : tensor<2x4x16x16xf32> -> tensor<2x4x8x8xf32>
  return %y : tensor<2x4x8x8xf32>
}
