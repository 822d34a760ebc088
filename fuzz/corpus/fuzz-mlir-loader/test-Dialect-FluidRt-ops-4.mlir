fluid.param @w : tensor<4xf32> init zeros
func.func @bad_ref() {
  %w = fluid_rt.param_ref @w : memref<5xf32>
  return
}
