func.func @no_param_kernels(%y: memref<4xf32>) {
  fluid_rt.launch "get_param" outs(%y : memref<4xf32>) params {name = @w}
  return
}
