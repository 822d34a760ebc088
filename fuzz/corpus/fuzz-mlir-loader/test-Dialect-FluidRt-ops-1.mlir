func.func @bad_shape(%x: memref<8x3x32x32xf32>, %w: memref<16x3x3x3xf32>, %y: memref<8x16x30x30xf32>) {
  fluid_rt.launch "conv2d" ins(%x, %w : memref<8x3x32x32xf32>, memref<16x3x3x3xf32>) outs(%y : memref<8x16x30x30xf32>) params {padding = array<i64: 1, 1, 1, 1>}
  return
}
