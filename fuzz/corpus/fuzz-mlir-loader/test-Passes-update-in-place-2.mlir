fluid.param @a : tensor<4xf32> init ones
fluid.param @b : tensor<4xf32> init ones

// A grouped update writes each entry's own parameter in place; a copy of
// one entry's result into another entry's parameter stays (the kernel runs
// entries in parallel, so entry 0's output must not be entry 1's input).
func.func @group(%g: memref<4xf32>, %lr: memref<f32>) {
  %a = fluid_rt.param_ref @a : memref<4xf32>
  %b = fluid_rt.param_ref @b : memref<4xf32>
  %na = memref.alloc() : memref<4xf32>
  %nb = memref.alloc() : memref<4xf32>
  fluid_rt.launch "sgd_group" ins(%a, %b, %g, %g, %lr : memref<4xf32>, memref<4xf32>, memref<4xf32>, memref<4xf32>, memref<f32>) outs(%na, %nb : memref<4xf32>, memref<4xf32>) params {}
  %a_out = fluid_rt.param_ref @a : memref<4xf32>
  memref.copy %na, %a_out : memref<4xf32> to memref<4xf32>
  %wrong = fluid_rt.param_ref @a : memref<4xf32>
  memref.copy %nb, %wrong : memref<4xf32> to memref<4xf32>
  return
}
