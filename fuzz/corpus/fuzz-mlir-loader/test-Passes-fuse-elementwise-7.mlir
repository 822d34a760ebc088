// Views of an input join the region instead of running as copies: batch
// norm's shift x[0, c, 0, 0] (three slices at offset 0) read by the
// statistics' sub, and by a per-channel region through a reshape of unit
// dimensions. Each region applies the views to its own argument; the
// copies outside are gone, but for the slice at offset 1 (not a view) and
// the one the convolution reads as well.
func.func @views(%x: tensor<2x3x4x4xf32>, %w: tensor<1x1x1x1xf32>) -> (tensor<3xf32>, tensor<2x1x4x4xf32>, tensor<2x3x4x4xf32>) {
  %n = fluid.slice %x {axis = 0 : i64, offset = 0 : i64} : tensor<2x3x4x4xf32> -> tensor<1x3x4x4xf32>
  %h = fluid.slice %n {axis = 2 : i64, offset = 0 : i64} : tensor<1x3x4x4xf32> -> tensor<1x3x1x4xf32>
  %k = fluid.slice %h {axis = 3 : i64, offset = 0 : i64} : tensor<1x3x1x4xf32> -> tensor<1x3x1x1xf32>
  %off = fluid.slice %x {axis = 0 : i64, offset = 1 : i64} : tensor<2x3x4x4xf32> -> tensor<1x3x4x4xf32>
  %d = fluid.sub %x, %k : tensor<2x3x4x4xf32>, tensor<1x3x1x1xf32> -> tensor<2x3x4x4xf32>
  %e = fluid.add %d, %off : tensor<2x3x4x4xf32>, tensor<1x3x4x4xf32> -> tensor<2x3x4x4xf32>
  %s = fluid.reduce_sum %e {axes = array<i64: 0, 2, 3>} : tensor<2x3x4x4xf32> -> tensor<3xf32>
  %v = fluid.reshape %k : tensor<1x3x1x1xf32> -> tensor<3xf32>
  %m = fluid.mul %s, %s : tensor<3xf32>, tensor<3xf32> -> tensor<3xf32>
  %a = fluid.add %v, %m : tensor<3xf32>, tensor<3xf32> -> tensor<3xf32>
  %c = fluid.slice %x {axis = 1 : i64, offset = 0 : i64} : tensor<2x3x4x4xf32> -> tensor<2x1x4x4xf32>
  %y = fluid.conv2d %c, %w : (tensor<2x1x4x4xf32>, tensor<1x1x1x1xf32>) -> tensor<2x1x4x4xf32>
  %q = fluid.mul %x, %c : tensor<2x3x4x4xf32>, tensor<2x1x4x4xf32> -> tensor<2x3x4x4xf32>
  %r = fluid.relu %q : tensor<2x3x4x4xf32>
  return %a, %y, %r : tensor<3xf32>, tensor<2x1x4x4xf32>, tensor<2x3x4x4xf32>
}

// BAD: error: --fluid-fuse-elementwise: max-buffers must be at least 2, got 1
