// --fluid-insert-frees: every temporary is freed right after the last op
// that uses it through any view; parameters, arguments, results and
// constants never are. Running the pass twice adds nothing.

fluid.param @w : tensor<6xf32> init ones

func.func @step(%x: memref<6xf32>) -> memref<f32> {
  %w = fluid_rt.param_ref @w : memref<6xf32>
  %a = memref.alloc() : memref<6xf32>
  fluid_rt.launch "mul" ins(%x, %w : memref<6xf32>, memref<6xf32>) outs(%a : memref<6xf32>) params {}
  // %a lives on through its view %v: it is not freed after the view.
  %v = fluid_rt.view %a : memref<6xf32> -> memref<2x3xf32>
  %b = memref.alloc() : memref<2x3xf32>
  fluid_rt.launch "relu" ins(%v : memref<2x3xf32>) outs(%b : memref<2x3xf32>) params {}
  // The last use of %a (through %v) and of %b: both freed after it, in
  // the order of their allocation.
  %c = memref.alloc() : memref<2x3xf32>
  fluid_rt.launch "add" ins(%v, %b : memref<2x3xf32>, memref<2x3xf32>) outs(%c : memref<2x3xf32>) params {}
  // An allocation nothing uses is freed right away.
  %unused = memref.alloc() : memref<4xf32>
  // The parameter is written from %c; %c is freed after the copy, never
  // the parameter.
  %w2 = fluid_rt.param_ref @w : memref<6xf32>
  %cv = fluid_rt.view %c : memref<2x3xf32> -> memref<6xf32>
  memref.copy %cv, %w2 : memref<6xf32> to memref<6xf32>
  %l = memref.alloc() : memref<f32>
  fluid_rt.launch "mean" ins(%c : memref<2x3xf32>) outs(%l : memref<f32>) params {}
  // The result is not freed.
  return %l : memref<f32>
}
