// A value of another shape is not computed inside a region (it would be
// recomputed per element of the larger one): the per-channel sigmoid stays
// out, and a region of one op is left as it is.
func.func @no_recompute(%x: tensor<2x3x4x4xf32>, %s: tensor<1x3x1x1xf32>) -> tensor<2x3x4x4xf32> {
  %g = fluid.sigmoid %s : tensor<1x3x1x1xf32>
  %m = fluid.mul %x, %g : tensor<2x3x4x4xf32>, tensor<1x3x1x1xf32> -> tensor<2x3x4x4xf32>
  return %m : tensor<2x3x4x4xf32>
}
