func.func @region_on_a_kernel(%x: memref<4xf32>, %y: memref<4xf32>) {
  fluid_rt.launch "relu" ins(%x : memref<4xf32>) outs(%y : memref<4xf32>) params {} {
  ^bb0(%a: tensor<4xf32>):
    %r = fluid.relu %a : tensor<4xf32>
    fluid.yield %r : tensor<4xf32>
  }
  return
}
