// RUN: fluid-opt %s --fluid-generate-gpu-kernels | FileCheck %s
// REQUIRES: cuda-build
// RUN: fluid-opt %s --fluid-generate-gpu-kernels --fluid-lower-gpu-kernels | FileCheck %s --check-prefix=PTX

// A mixed-precision region: a bf16 input read through a widening cast
// (widened as loaded, arith.extf), f32 math, a bf16 result rounded once
// (arith.truncf: round to nearest even). The vector kernel moves 8 lanes
// per step, 16 bytes of each bf16 buffer (and 32 of an f32 one); the
// region has 4,096 elements, more than kScalarRegionElements.
// CHECK: gpu.func @fused_0(%[[IN:.*]]: memref<4096xbf16>, %{{.*}}: memref<4096xf32>, %[[OUT:.*]]: memref<4096xbf16>) kernel {
// CHECK: %[[X:.*]] = memref.load %[[IN]][%{{.*}}] : memref<4096xbf16>
// CHECK-NEXT: %[[W:.*]] = arith.extf %[[X]] : bf16 to f32
// CHECK: arith.addf %[[W]]
// CHECK: %[[N:.*]] = arith.truncf %{{.*}} : f32 to bf16
// CHECK-NEXT: memref.store %[[N]], %[[OUT]][%{{.*}}] : memref<4096xbf16>
// CHECK: gpu.func @fused_0_v(
// CHECK: vector.load %[[IN2:.*]][%{{.*}}] {alignment = 16 : i64} : memref<4096xbf16>, vector<8xbf16>
// CHECK: vector.load %{{.*}} {alignment = 16 : i64} : memref<4096xf32>, vector<8xf32>
// CHECK: vector.store %{{.*}} {alignment = 16 : i64} : memref<4096xbf16>, vector<8xbf16>
// PTX: .entry fused_0(
// PTX-SAME: cvt.f32.bf16
// PTX-SAME: cvt.rn.bf16.f32
// PTX-SAME: .entry fused_0_v(
// PTX-SAME: ld.global.v4.b32
func.func @f(%a: memref<16x256xbf16>, %b: memref<16x256xf32>, %o: memref<16x256xbf16>) {
  fluid_rt.launch "fusion" ins(%a, %b : memref<16x256xbf16>, memref<16x256xf32>) outs(%o : memref<16x256xbf16>) params {} {
  ^bb0(%arg0: tensor<16x256xbf16>, %arg1: tensor<16x256xf32>):
    %w = fluid.cast %arg0 : tensor<16x256xbf16> -> tensor<16x256xf32>
    %s = fluid.add %w, %arg1 : tensor<16x256xf32>, tensor<16x256xf32> -> tensor<16x256xf32>
    %r = fluid.relu %s : tensor<16x256xf32>
    %n = fluid.cast %r : tensor<16x256xf32> -> tensor<16x256xbf16>
    fluid.yield %n : tensor<16x256xbf16>
  }
  return
}

// A widening cast of a 16-bit value the region computes (a recomputed
// activation, --fluid-recompute-elementwise): computed, not loaded; the
// f32 math reads the rounded value.
// CHECK: gpu.func @fused_1(%[[A:.*]]: memref<1024xf32>, %[[N16:.*]]: memref<1024xbf16>, %{{.*}}: memref<1024xf32>) kernel {
// CHECK: %[[X1:.*]] = memref.load %[[A]][%{{.*}}] : memref<1024xf32>
// CHECK: %[[T:.*]] = arith.truncf %{{.*}} : f32 to bf16
// CHECK-NEXT: %[[E:.*]] = arith.extf %[[T]] : bf16 to f32
// CHECK-NEXT: arith.mulf %[[E]], %[[X1]]
// CHECK: memref.store %[[T]], %[[N16]][%{{.*}}] : memref<1024xbf16>
func.func @g(%a: memref<4x256xf32>, %n: memref<4x256xbf16>, %o: memref<4x256xf32>) {
  fluid_rt.launch "fusion" ins(%a : memref<4x256xf32>) outs(%n, %o : memref<4x256xbf16>, memref<4x256xf32>) params {} {
  ^bb0(%arg0: tensor<4x256xf32>):
    %r = fluid.relu %arg0 : tensor<4x256xf32>
    %t = fluid.cast %r : tensor<4x256xf32> -> tensor<4x256xbf16>
    %e = fluid.cast %t : tensor<4x256xbf16> -> tensor<4x256xf32>
    %y = fluid.mul %e, %arg0 : tensor<4x256xf32>, tensor<4x256xf32> -> tensor<4x256xf32>
    fluid.yield %t, %y : tensor<4x256xbf16>, tensor<4x256xf32>
  }
  return
}
// A region without sums of at most 2,048 elements (here 1,024) gets no
// vector kernel: one block of vectors ran slower than the element kernel.
// CHECK-NOT: gpu.func @fused_1_v(
