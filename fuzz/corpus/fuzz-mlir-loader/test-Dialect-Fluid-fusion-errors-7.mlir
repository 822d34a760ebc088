func.func @launch_without_region(%x: memref<4xf32>, %y: memref<4xf32>) {
  fluid_rt.launch "fusion" ins(%x : memref<4xf32>) outs(%y : memref<4xf32>) params {}
  return
}
