// 2^31 elements (more than 2^30): the divisions stay 64-bit.
func.func @huge(%a: memref<2x1024x1024x1024xf32>, %o: memref<2x1024x1024x1024xf32>) {
  fluid_rt.launch "fusion" ins(%a : memref<2x1024x1024x1024xf32>) outs(%o : memref<2x1024x1024x1024xf32>) params {} {
  ^bb0(%arg0: tensor<2x1024x1024x1024xf32>):
    %r = fluid.relu %arg0 : tensor<2x1024x1024x1024xf32>
    fluid.yield %r : tensor<2x1024x1024x1024xf32>
  }
  return
}
