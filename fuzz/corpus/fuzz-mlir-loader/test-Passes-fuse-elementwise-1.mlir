// No fusion across a library call: the convolution splits the ops into two
// regions; and a value read after the region (by the convolution, and
// returned) is one more result of it.
func.func @library_call(%x: tensor<1x2x4x4xf32>, %w: tensor<2x2x1x1xf32>) -> (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) {
  %r = fluid.relu %x : tensor<1x2x4x4xf32>
  %n = fluid.neg %r : tensor<1x2x4x4xf32>
  %c = fluid.conv2d %r, %w : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %s = fluid.sigmoid %c : tensor<1x2x4x4xf32>
  %a = fluid.add %s, %n : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32> -> tensor<1x2x4x4xf32>
  return %a, %r : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>
}
