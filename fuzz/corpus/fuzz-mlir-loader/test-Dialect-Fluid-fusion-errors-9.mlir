func.func @gpu_kernel_elsewhere(%x: memref<4xf32>, %y: memref<4xf32>) {
  fluid_rt.launch "relu" ins(%x : memref<4xf32>) outs(%y : memref<4xf32>) params {} attributes {fluid_rt.gpu_kernel = "fused_0"}
  return
}
