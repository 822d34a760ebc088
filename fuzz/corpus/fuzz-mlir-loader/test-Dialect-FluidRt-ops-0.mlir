// The buffer-level ops round-trip, and a launch is verified by the rule of
// the op it runs.

fluid.param @w : tensor<16x3x3x3xf32> init zeros
func.func @ok(%x: memref<8x3x32x32xf32>, %y: memref<8x16x32x32xf32>) {
  %w = fluid_rt.param_ref @w : memref<16x3x3x3xf32>
  fluid_rt.launch "conv2d" ins(%x, %w : memref<8x3x32x32xf32>, memref<16x3x3x3xf32>) outs(%y : memref<8x16x32x32xf32>) params {padding = array<i64: 1, 1, 1, 1>}
  %v = fluid_rt.view %y : memref<8x16x32x32xf32> -> memref<8x16384xf32>
  return
}
