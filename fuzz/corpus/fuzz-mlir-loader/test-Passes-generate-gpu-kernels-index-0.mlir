// How the vector kernel's lanes read broadcast inputs, and when the
// divisions are 32-bit.

// BAD: error: index-bitwidth must be 32 or 64, got 16

// An input broadcast along the innermost dimension (its extent, 4, a
// multiple of the width): lane l reads lane 0's element + l, one index
// computation for the four.
// index-bitwidth=64: 64-bit divisions.
// I64-LABEL: func.func @inner
// I64: gpu.func @fused_0_v(
// I64: arith.remui %{{.*}}, %c4{{.*}} : index
func.func @inner(%a: memref<8x64x4x4xf32>, %s: memref<4xf32>, %o: memref<8x64x4x4xf32>) {
  fluid_rt.launch "fusion" ins(%a, %s : memref<8x64x4x4xf32>, memref<4xf32>) outs(%o : memref<8x64x4x4xf32>) params {} {
  ^bb0(%arg0: tensor<8x64x4x4xf32>, %arg1: tensor<4xf32>):
    %m = fluid.mul %arg0, %arg1 : tensor<8x64x4x4xf32>, tensor<4xf32> -> tensor<8x64x4x4xf32>
    fluid.yield %m : tensor<8x64x4x4xf32>
  }
  return
}
