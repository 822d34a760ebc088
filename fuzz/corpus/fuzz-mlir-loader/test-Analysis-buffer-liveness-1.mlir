// The snapshot pattern of --fluid-bufferize: @m's old value is copied into
// %snap (2) before @m is overwritten (6), and %snap is read after that (8).
// Both param_refs of @m are parameters; persistentBytes counts @m once.
// Live temporaries: %snap [2, 8] and %s [4, 8], 12 bytes each, so the peak
// is 24 bytes (2 x 256 aligned) where both are first live, at 4.
fluid.param @m : tensor<3xf32> init zeros {trainable = false}

func.func @snapshot(%x: memref<3xf32>) -> memref<3xf32> {
  %m = fluid_rt.param_ref @m : memref<3xf32>
  %snap = memref.alloc() : memref<3xf32>
  memref.copy %m, %snap : memref<3xf32> to memref<3xf32>
  %s = memref.alloc() : memref<3xf32>
  fluid_rt.launch "add" ins(%m, %x : memref<3xf32>, memref<3xf32>) outs(%s : memref<3xf32>) params {}
  %m2 = fluid_rt.param_ref @m : memref<3xf32>
  memref.copy %s, %m2 : memref<3xf32> to memref<3xf32>
  %d = memref.alloc() : memref<3xf32>
  fluid_rt.launch "sub" ins(%s, %snap : memref<3xf32>, memref<3xf32>) outs(%d : memref<3xf32>) params {}
  return %d : memref<3xf32>
}
