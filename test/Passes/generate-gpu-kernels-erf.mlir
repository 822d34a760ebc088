// RUN: fluid-opt %s --fluid-generate-gpu-kernels | FileCheck %s
// REQUIRES: cuda-build
// (The lowering links libdevice from the CUDA toolkit.)
// RUN: fluid-opt %s --fluid-generate-gpu-kernels --fluid-lower-gpu-kernels | FileCheck %s --check-prefix=PTX

// GELU as torch exports it, before its halving (x * (1 + erf(x / sqrt(2)))),
// in one region:
// fluid.erf is math.erf, which the lowering turns into libdevice's
// __nv_erff, linked into the PTX (no external declaration left; the
// emitter rejects PTX that still declares one).
// CHECK: gpu.func @fused_0(
// CHECK: math.erf %{{.*}} : f32
// PTX: gpu.binary @fluid_kernels
// PTX-SAME: .entry fused_0(
// PTX-NOT: .extern .func __nv_
func.func @gelu(%x: memref<2x197x64xf32>, %r2: memref<f32>, %one: memref<f32>, %y: memref<2x197x64xf32>) {
  fluid_rt.launch "fusion" ins(%x, %r2, %one : memref<2x197x64xf32>, memref<f32>, memref<f32>) outs(%y : memref<2x197x64xf32>) params {} {
  ^bb0(%arg0: tensor<2x197x64xf32>, %arg1: tensor<f32>, %arg2: tensor<f32>):
    %s = fluid.div %arg0, %arg1 : tensor<2x197x64xf32>, tensor<f32> -> tensor<2x197x64xf32>
    %e = fluid.erf %s : tensor<2x197x64xf32>
    %a = fluid.add %e, %arg2 : tensor<2x197x64xf32>, tensor<f32> -> tensor<2x197x64xf32>
    %m = fluid.mul %arg0, %a : tensor<2x197x64xf32>, tensor<2x197x64xf32> -> tensor<2x197x64xf32>
    fluid.yield %m : tensor<2x197x64xf32>
  }
  return
}
