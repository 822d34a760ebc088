// Broadcast along H of an 8x64x4x3 space: rows of 3 elements, so the
// lanes of a step may fall in two rows; each lane computes its own index.
// I64-LABEL: func.func @rows
func.func @rows(%a: memref<8x64x4x3xf32>, %s: memref<4x1xf32>, %o: memref<8x64x4x3xf32>) {
  fluid_rt.launch "fusion" ins(%a, %s : memref<8x64x4x3xf32>, memref<4x1xf32>) outs(%o : memref<8x64x4x3xf32>) params {} {
  ^bb0(%arg0: tensor<8x64x4x3xf32>, %arg1: tensor<4x1xf32>):
    %m = fluid.mul %arg0, %arg1 : tensor<8x64x4x3xf32>, tensor<4x1xf32> -> tensor<8x64x4x3xf32>
    fluid.yield %m : tensor<8x64x4x3xf32>
  }
  return
}
