fluid.param @w : tensor<4xf32> init ones

// Left alone: the parameter is read between the update and the copy, and a
// kernel (softmax) that may not write over its inputs.
func.func @kept(%g: memref<4xf32>, %lr: memref<f32>, %out: memref<4xf32>) {
  %w = fluid_rt.param_ref @w : memref<4xf32>
  %new = memref.alloc() : memref<4xf32>
  fluid_rt.launch "sgd" ins(%w, %g, %lr : memref<4xf32>, memref<4xf32>, memref<f32>) outs(%new : memref<4xf32>) params {}
  fluid_rt.launch "relu" ins(%w : memref<4xf32>) outs(%out : memref<4xf32>) params {}
  %w2 = fluid_rt.param_ref @w : memref<4xf32>
  memref.copy %new, %w2 : memref<4xf32> to memref<4xf32>
  %r = memref.alloc() : memref<4xf32>
  fluid_rt.launch "softmax" ins(%g : memref<4xf32>) outs(%r : memref<4xf32>) params {axis = 0 : i64}
  %w3 = fluid_rt.param_ref @w : memref<4xf32>
  memref.copy %r, %w3 : memref<4xf32> to memref<4xf32>
  return
}
