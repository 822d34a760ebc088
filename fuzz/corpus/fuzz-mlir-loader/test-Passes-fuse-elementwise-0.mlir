// A chain of elementwise ops with a broadcast per-channel operand is one
// region; the intermediate values stay inside it.
func.func @chain(%x: tensor<2x3x4x4xf32>, %s: tensor<1x3x1x1xf32>) -> tensor<2x3x4x4xf32> {
  %m = fluid.mul %x, %s : tensor<2x3x4x4xf32>, tensor<1x3x1x1xf32> -> tensor<2x3x4x4xf32>
  %a = fluid.add %m, %x : tensor<2x3x4x4xf32>, tensor<2x3x4x4xf32> -> tensor<2x3x4x4xf32>
  %y = fluid.relu %a : tensor<2x3x4x4xf32>
  return %y : tensor<2x3x4x4xf32>
}
