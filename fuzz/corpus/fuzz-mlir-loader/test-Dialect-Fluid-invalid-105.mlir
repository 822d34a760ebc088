func.func @f(%x: tensor<1x1x20x20xf32>) {
  %y, %i = fluid.max_pool2d_with_indices %x {kernel_size = array<i64: 17, 16>} : tensor<1x1x20x20xf32> -> tensor<1x1x4x5xf32>, tensor<1x1x4x5xui8>
  return
}
