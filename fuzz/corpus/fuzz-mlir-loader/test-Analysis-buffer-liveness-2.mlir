// What is not a temporary: the argument, the parameter, a constant (written
// by the "constant" kernel, also returned: still a constant) and a result
// returned through a view. The only temporary is %y (48 bytes, [4, 6]).
fluid.param @w : tensor<2x3xf32> init ones

func.func @kinds(%x: memref<4x2xf32>) -> (memref<12xf32>, memref<3xf32>) {
  %w = fluid_rt.param_ref @w : memref<2x3xf32>
  %c = memref.alloc() : memref<3xf32>
  fluid_rt.launch "constant" outs(%c : memref<3xf32>) params {value = dense<2.0> : tensor<3xf32>}
  %y = memref.alloc() : memref<4x3xf32>
  fluid_rt.launch "matmul" ins(%x, %w : memref<4x2xf32>, memref<2x3xf32>) outs(%y : memref<4x3xf32>) params {}
  %t = memref.alloc() : memref<4x3xf32>
  fluid_rt.launch "relu" ins(%y : memref<4x3xf32>) outs(%t : memref<4x3xf32>) params {}
  %tv = fluid_rt.view %t : memref<4x3xf32> -> memref<12xf32>
  return %tv, %c : memref<12xf32>, memref<3xf32>
}
