// Dilation and ceil_mode carry over; the largest kernel whose picks fit in
// a byte (16x16) is rewritten.
func.func @general(%x: tensor<1x2x9x10xf32>, %dy: tensor<1x2x5x5xf32>, %w: tensor<1x1x16x16xf32>, %dw: tensor<1x1x1x1xf32>) -> (tensor<1x2x9x10xf32>, tensor<1x1x16x16xf32>) {
  %y = fluid.max_pool2d %x {kernel_size = array<i64: 2, 3>, strides = array<i64: 2, 2>, padding = array<i64: 1, 0, 0, 1>, dilation = array<i64: 2, 1>, ceil_mode} : tensor<1x2x9x10xf32> -> tensor<1x2x5x5xf32>
  %dx = fluid.max_pool2d_grad %dy, %x {kernel_size = array<i64: 2, 3>, strides = array<i64: 2, 2>, padding = array<i64: 1, 0, 0, 1>, dilation = array<i64: 2, 1>, ceil_mode} : tensor<1x2x5x5xf32>, tensor<1x2x9x10xf32>
  %v = fluid.max_pool2d %w {kernel_size = array<i64: 16, 16>} : tensor<1x1x16x16xf32> -> tensor<1x1x1x1xf32>
  %dv = fluid.max_pool2d_grad %dw, %w {kernel_size = array<i64: 16, 16>} : tensor<1x1x1x1xf32>, tensor<1x1x16x16xf32>
  return %dx, %dv : tensor<1x2x9x10xf32>, tensor<1x1x16x16xf32>
}
