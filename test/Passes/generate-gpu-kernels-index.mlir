// RUN: fluid-opt %s --split-input-file --fluid-generate-gpu-kernels | FileCheck %s
// RUN: fluid-opt %s --split-input-file --fluid-generate-gpu-kernels=index-bitwidth=64 | FileCheck %s --check-prefix=I64
// RUN: not fluid-opt %s --split-input-file --fluid-generate-gpu-kernels=index-bitwidth=16 2>&1 | FileCheck %s --check-prefix=BAD

// How the vector kernel's lanes read broadcast inputs, and when the
// divisions are 32-bit.

// BAD: error: index-bitwidth must be 32 or 64, got 16

// An input broadcast along the innermost dimension (its extent, 4, a
// multiple of the width): the four lanes read four consecutive elements
// from lane 0's, an aligned offset: one index computation and one vector
// load for the four (isLaneContiguousAccess).
// CHECK-LABEL: func.func @inner
// CHECK: gpu.func @fused_0_v(
// CHECK: vector.load
// CHECK: %[[R:.*]] = arith.remui %{{.*}}, %c4_i32 : i32
// CHECK-NEXT: %[[O:.*]] = arith.index_castui %[[R]] : i32 to index
// CHECK-NEXT: vector.load %{{.*}}[%[[O]]] {alignment = 16 : i64} : memref<4xf32>, vector<4xf32>
// CHECK-NOT: memref.load
// CHECK-NOT: arith.remui
// CHECK: vector.store
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

// -----

// Broadcast along H of an 8x64x4x3 space: rows of 3 elements, so the
// lanes of a step may fall in two rows; each lane computes its own index.
// CHECK-LABEL: func.func @rows
// CHECK: gpu.func @fused_0_v(
// CHECK-COUNT-4: arith.divui %{{.*}}, %c3_i32{{.*}} : i32
// I64-LABEL: func.func @rows
func.func @rows(%a: memref<8x64x4x3xf32>, %s: memref<4x1xf32>, %o: memref<8x64x4x3xf32>) {
  fluid_rt.launch "fusion" ins(%a, %s : memref<8x64x4x3xf32>, memref<4x1xf32>) outs(%o : memref<8x64x4x3xf32>) params {} {
  ^bb0(%arg0: tensor<8x64x4x3xf32>, %arg1: tensor<4x1xf32>):
    %m = fluid.mul %arg0, %arg1 : tensor<8x64x4x3xf32>, tensor<4x1xf32> -> tensor<8x64x4x3xf32>
    fluid.yield %m : tensor<8x64x4x3xf32>
  }
  return
}

// -----

// 2^31 elements (more than 2^30): the divisions stay 64-bit.
// CHECK-LABEL: func.func @huge
// CHECK: gpu.func @fused_0(
// CHECK-NOT: i32
// CHECK: gpu.return
func.func @huge(%a: memref<2x1024x1024x1024xf32>, %o: memref<2x1024x1024x1024xf32>) {
  fluid_rt.launch "fusion" ins(%a : memref<2x1024x1024x1024xf32>) outs(%o : memref<2x1024x1024x1024xf32>) params {} {
  ^bb0(%arg0: tensor<2x1024x1024x1024xf32>):
    %r = fluid.relu %arg0 : tensor<2x1024x1024x1024xf32>
    fluid.yield %r : tensor<2x1024x1024x1024xf32>
  }
  return
}
