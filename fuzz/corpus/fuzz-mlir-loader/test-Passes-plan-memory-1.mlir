fluid.param @w : tensor<2x3xf32> init ones

// In-place reuse is refused when the input is read later, has another
// shape (a broadcast operand), is a parameter, a result or a constant, or
// when the kernel (matmul) may not write over its inputs; it happens
// through views of the input's type.
func.func @not_in_place(%x: memref<2x3xf32>, %bias: memref<3xf32>) -> (memref<2x3xf32>, memref<f32>) {
  // INPLACE: %[[W:.+]] = fluid_rt.param_ref @w
  %w = fluid_rt.param_ref @w : memref<2x3xf32>
  // INPLACE: %[[A:.+]] = memref.view
  // INPLACE: fluid_rt.launch "relu" ins(%{{.+}} : memref<2x3xf32>) outs(%[[A]] :
  %a = memref.alloc() : memref<2x3xf32>
  fluid_rt.launch "relu" ins(%x : memref<2x3xf32>) outs(%a : memref<2x3xf32>) params {}
  // %a is read again below: %b gets a buffer of its own.
  // INPLACE: %[[B:.+]] = memref.view
  // INPLACE: fluid_rt.launch "add" ins(%[[A]], %[[A]] : {{.*}}) outs(%[[B]] :
  %b = memref.alloc() : memref<2x3xf32>
  fluid_rt.launch "add" ins(%a, %a : memref<2x3xf32>, memref<2x3xf32>) outs(%b : memref<2x3xf32>) params {}
  // The broadcast bias (dead here) has another shape; %b is read later.
  // INPLACE: %[[BIAS:.+]] = memref.view
  // INPLACE: fluid_rt.launch "relu" ins(%{{.+}} : memref<3xf32>) outs(%[[BIAS]] :
  // INPLACE: %[[C:.+]] = memref.view
  // INPLACE: fluid_rt.launch "add" ins(%[[B]], %[[BIAS]] : {{.*}}) outs(%[[C]] :
  %bias2 = memref.alloc() : memref<3xf32>
  fluid_rt.launch "relu" ins(%bias : memref<3xf32>) outs(%bias2 : memref<3xf32>) params {}
  %c = memref.alloc() : memref<2x3xf32>
  fluid_rt.launch "add" ins(%b, %bias2 : memref<2x3xf32>, memref<3xf32>) outs(%c : memref<2x3xf32>) params {}
  // Through a view of the output's type: %e is %c.
  // INPLACE: %[[FLAT:.+]] = fluid_rt.view %[[C]]
  // INPLACE-NEXT: fluid_rt.launch "relu" ins(%[[FLAT]] : memref<6xf32>) outs(%[[FLAT]] : memref<6xf32>)
  %flat = fluid_rt.view %c : memref<2x3xf32> -> memref<6xf32>
  %e = memref.alloc() : memref<6xf32>
  fluid_rt.launch "relu" ins(%flat : memref<6xf32>) outs(%e : memref<6xf32>) params {}
  // The parameter is never overwritten, and %a is read later.
  // INPLACE: %[[F:.+]] = memref.view
  // INPLACE: fluid_rt.launch "mul" ins(%[[W]], %[[A]] : {{.*}}) outs(%[[F]] :
  %f = memref.alloc() : memref<2x3xf32>
  fluid_rt.launch "mul" ins(%w, %a : memref<2x3xf32>, memref<2x3xf32>) outs(%f : memref<2x3xf32>) params {}
  // Both inputs die here: the output takes the first one's buffer.
  // INPLACE-NEXT: fluid_rt.launch "add" ins(%[[A]], %[[B]] : {{.*}}) outs(%[[A]] :
  %m = memref.alloc() : memref<2x3xf32>
  fluid_rt.launch "add" ins(%a, %b : memref<2x3xf32>, memref<2x3xf32>) outs(%m : memref<2x3xf32>) params {}
  // matmul may not write over its inputs (%f dies here).
  // INPLACE: %[[GG:.+]] = memref.view
  // INPLACE: fluid_rt.launch "matmul" ins(%[[F]], %{{.+}} : {{.*}}) outs(%[[GG]] :
  %ft = memref.alloc() : memref<3x3xf32>
  fluid_rt.launch "constant" outs(%ft : memref<3x3xf32>) params {value = dense<1.0> : tensor<3x3xf32>}
  %gg = memref.alloc() : memref<2x3xf32>
  fluid_rt.launch "matmul" ins(%f, %ft : memref<2x3xf32>, memref<3x3xf32>) outs(%gg : memref<2x3xf32>) params {}
  // A result is a buffer of its own, never a dead input's.
  // INPLACE: %[[G:.+]] = memref.alloc() : memref<2x3xf32>
  // INPLACE: fluid_rt.launch "relu" ins(%[[GG]] : {{.*}}) outs(%[[G]] :
  %g = memref.alloc() : memref<2x3xf32>
  fluid_rt.launch "relu" ins(%gg : memref<2x3xf32>) outs(%g : memref<2x3xf32>) params {}
  // Neither a result (%g) nor a constant (%k) is overwritten.
  // INPLACE: %[[K:.+]] = memref.alloc() : memref<2x3xf32>
  // INPLACE: %[[H:.+]] = memref.view
  // INPLACE: fluid_rt.launch "sub" ins(%[[G]], %[[K]] : {{.*}}) outs(%[[H]] :
  %k = memref.alloc() : memref<2x3xf32>
  fluid_rt.launch "constant" outs(%k : memref<2x3xf32>) params {value = dense<1.0> : tensor<2x3xf32>}
  %h = memref.alloc() : memref<2x3xf32>
  fluid_rt.launch "sub" ins(%g, %k : memref<2x3xf32>, memref<2x3xf32>) outs(%h : memref<2x3xf32>) params {}
  %n = memref.alloc() : memref<f32>
  fluid_rt.launch "mean" ins(%h : memref<2x3xf32>) outs(%n : memref<f32>) params {}
  return %g, %n : memref<2x3xf32>, memref<f32>
}
