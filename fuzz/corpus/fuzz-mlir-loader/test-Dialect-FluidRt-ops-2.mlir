func.func @bad_kernel(%y: memref<4xf32>) {
  fluid_rt.launch "frobnicate" outs(%y : memref<4xf32>) params {}
  return
}
