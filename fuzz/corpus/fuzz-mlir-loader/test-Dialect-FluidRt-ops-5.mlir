func.func @not_a_param() {
  %w = fluid_rt.param_ref @not_a_param : memref<5xf32>
  return
}
