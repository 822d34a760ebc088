// RUN: fluid-opt %s --fluid-generate-gpu-kernels | FileCheck %s
// REQUIRES: cuda-build
// (The lowering links libdevice from the CUDA toolkit.)
// RUN: fluid-opt %s --fluid-generate-gpu-kernels | fluid-opt | FileCheck %s
// RUN: fluid-opt %s --fluid-generate-gpu-kernels --fluid-lower-gpu-kernels | FileCheck %s --check-prefix=PTX

// An elementwise region: a scalar kernel and a vector one (4 f32 per step,
// 16-byte accesses for the full-size operands, the per-channel operand
// read per element at (element / 16) % 64), over flat buffers.
// CHECK-LABEL: func.func @f
// CHECK: fluid_rt.launch "fusion"
// CHECK: } attributes {fluid_rt.gpu_kernel = "fused_0"}
// CHECK: fluid_rt.launch "fusion"
// CHECK: } attributes {fluid_rt.gpu_kernel = "fused_0"}
// CHECK: fluid_rt.launch "fusion"
// A region with sums records its blocks per channel: 16 * 64 * 64 =
// 65536 elements per channel, at least 8192 per block, 8 splits.
// CHECK: } attributes {fluid_rt.gpu_kernel = "fused_1", fluid_rt.gpu_sum_splits = 8 : i64}
// CHECK: gpu.module @fluid_kernels {
// CHECK: gpu.func @fused_0(%{{.*}}: memref<8192xf32>, %{{.*}}: memref<64xf32>, %{{.*}}: memref<8192xf32>) kernel {
// CHECK: scf.for %[[I:.*]] = %{{.*}} to %c8192 step
// CHECK: memref.load %{{.*}}[%[[I]]] : memref<8192xf32>
// Every index is far below 2^30: the divisions are 32-bit, the offsets
// 64-bit (index).
// CHECK: %[[I32:.*]] = arith.index_castui %[[I]] : index to i32
// CHECK: %[[Q:.*]] = arith.divui %[[I32]], %c16_i32 : i32
// CHECK: %[[R:.*]] = arith.remui %[[Q]], %c64_i32 : i32
// CHECK: arith.index_castui %[[R]] : i32 to index
// CHECK: math.exp
// CHECK: memref.store %{{.*}}, %{{.*}}[%[[I]]] : memref<8192xf32>
// CHECK: gpu.func @fused_0_v(
// CHECK: scf.for %{{.*}} = %{{.*}} to %c2048 step
// CHECK: vector.load %{{.*}} {alignment = 16 : i64} : memref<8192xf32>, vector<4xf32>
// The four lanes of a step are in one channel (16 elements per channel):
// one load of the per-channel input serves them all.
// CHECK: arith.divui %{{.*}}, %c16_i32
// CHECK: memref.load %{{.*}} : memref<64xf32>
// CHECK-NOT: memref.load
// CHECK: vector.store %{{.*}} {alignment = 16 : i64} : memref<8192xf32>, vector<4xf32>
// A region with per-channel sums: blocks of 256 threads per channel and
// split (8 splits of 4 channels), each block's sum by a tree in workgroup
// memory, stored among the partial sums; the channel's counter counts the
// blocks done, and the last one sums the 8 partials (read at the device's
// level) by a tree of its own, stores the channel's sum and zeroes the
// counter. No floating-point value is added atomically into an output.
// CHECK: gpu.func @fused_1(%{{.*}}: memref<262144xf32>, %{{.*}}: memref<262144xf32>, %[[SUM:.*]]: memref<4xf32>, %[[COUNT:.*]]: memref<4xi32>, %[[PART:.*]]: memref<32xf32>) workgroup(%[[W:.*]] : memref<256xf32, #gpu.address_space<workgroup>>) kernel {
// CHECK: scf.for {{.*}} iter_args
// CHECK: gpu.barrier
// CHECK-NOT: memref.store %{{.*}}, %[[SUM]]
// CHECK: memref.store %{{.*}}, %[[PART]][%{{.*}}] : memref<32xf32>
// CHECK-NEXT: nvvm.memory.barrier <gpu>
// CHECK: %[[BEFORE:.*]] = memref.atomic_rmw addi %{{.*}}, %[[COUNT]][%[[CH:.*]]] : (i32, memref<4xi32>) -> i32
// CHECK: arith.cmpi eq, %[[BEFORE]], %c7_i32
// CHECK: gpu.barrier
// CHECK: scf.if
// CHECK: nvvm.memory.barrier <gpu>
// CHECK: %[[NZ:.*]] = arith.constant -0.000000e+00 : f32
// CHECK: scf.for %{{.*}} = %thread_id_x to %c8
// CHECK: memref.atomic_rmw addf %[[NZ]], %[[PART]]
// CHECK: gpu.barrier
// CHECK: memref.store %{{.*}}, %[[SUM]][%[[CH]]] : memref<4xf32>
// CHECK-NEXT: %[[ZERO:.*]] = arith.constant 0 : i32
// CHECK-NEXT: memref.store %[[ZERO]], %[[COUNT]][%[[CH]]] : memref<4xi32>
// CHECK: gpu.return
// A view of an input (x[0, c, 0, 0] by three slices) is no operand of its
// own: the kernel reads the input's buffer at ((element / 64) % 4) * 64.
// CHECK: gpu.func @fused_2(%[[VIN:.*]]: memref<512xf32>, %{{.*}}: memref<512xf32>) kernel {
// CHECK: scf.for %[[J:.*]] = %{{.*}} to %c512 step
// CHECK: memref.load %[[VIN]][%[[J]]] : memref<512xf32>
// CHECK: %[[Q:.*]] = arith.divui %{{.*}}, %c64_i32
// CHECK: %[[C:.*]] = arith.remui %[[Q]], %c4_i32
// CHECK: %[[CI:.*]] = arith.index_castui %[[C]] : i32 to index
// CHECK: %[[O:.*]] = arith.muli %[[CI]], %c64
// CHECK-NEXT: memref.load %[[VIN]][%[[O]]] : memref<512xf32>
// CHECK-NEXT: arith.subf

// PTX: gpu.binary @fluid_kernels
// PTX-SAME: chip = "sm_90"
// PTX-SAME: .target sm_90
// PTX-SAME: .entry fused_0(
// PTX-SAME: .entry fused_0_v(
// PTX-SAME: ld.global.v4.b32
// PTX-SAME: st.global.v4.b32
// PTX-SAME: .entry fused_1(
// PTX-SAME: bar.sync
// PTX-SAME: membar.gl
// PTX-SAME: atom.global.add.u32
// PTX-SAME: membar.gl
// PTX-NOT: .extern .func __nv_
func.func @f(%a: memref<8x64x4x4xf32>, %s: memref<64xf32>, %o: memref<8x64x4x4xf32>, %p: memref<8x64x4x4xf32>,
             %x: memref<16x4x64x64xf32>, %y: memref<16x4x64x64xf32>, %sum: memref<4xf32>,
             %v: memref<2x4x8x8xf32>, %w: memref<2x4x8x8xf32>) {
  fluid_rt.launch "fusion" ins(%a, %s : memref<8x64x4x4xf32>, memref<64xf32>) outs(%o : memref<8x64x4x4xf32>) params {} {
  ^bb0(%arg0: tensor<8x64x4x4xf32>, %arg1: tensor<64xf32>):
    %r = fluid.relu %arg0 : tensor<8x64x4x4xf32>
    %m = fluid.batch_norm_apply %r, %arg1, %arg1, %arg1, %arg1 : tensor<8x64x4x4xf32>, tensor<64xf32>
    %e = fluid.sigmoid %m : tensor<8x64x4x4xf32>
    fluid.yield %e : tensor<8x64x4x4xf32>
  }
  // The same region again: the same kernel.
  fluid_rt.launch "fusion" ins(%o, %s : memref<8x64x4x4xf32>, memref<64xf32>) outs(%p : memref<8x64x4x4xf32>) params {} {
  ^bb0(%arg0: tensor<8x64x4x4xf32>, %arg1: tensor<64xf32>):
    %r = fluid.relu %arg0 : tensor<8x64x4x4xf32>
    %m = fluid.batch_norm_apply %r, %arg1, %arg1, %arg1, %arg1 : tensor<8x64x4x4xf32>, tensor<64xf32>
    %e = fluid.sigmoid %m : tensor<8x64x4x4xf32>
    fluid.yield %e : tensor<8x64x4x4xf32>
  }
  fluid_rt.launch "fusion" ins(%x : memref<16x4x64x64xf32>) outs(%y, %sum : memref<16x4x64x64xf32>, memref<4xf32>) params {} {
  ^bb0(%arg0: tensor<16x4x64x64xf32>):
    %t = fluid.tanh %arg0 : tensor<16x4x64x64xf32>
    %s1 = fluid.reduce_sum %t {axes = array<i64: 0, 2, 3>} : tensor<16x4x64x64xf32> -> tensor<4xf32>
    fluid.yield %t, %s1 : tensor<16x4x64x64xf32>, tensor<4xf32>
  }
  fluid_rt.launch "fusion" ins(%v : memref<2x4x8x8xf32>) outs(%w : memref<2x4x8x8xf32>) params {} {
  ^bb0(%arg0: tensor<2x4x8x8xf32>):
    %n = fluid.slice %arg0 {axis = 0 : i64, offset = 0 : i64} : tensor<2x4x8x8xf32> -> tensor<1x4x8x8xf32>
    %h = fluid.slice %n {axis = 2 : i64, offset = 0 : i64} : tensor<1x4x8x8xf32> -> tensor<1x4x1x8xf32>
    %k = fluid.slice %h {axis = 3 : i64, offset = 0 : i64} : tensor<1x4x1x8xf32> -> tensor<1x4x1x1xf32>
    %d = fluid.sub %arg0, %k : tensor<2x4x8x8xf32>, tensor<1x4x1x1xf32> -> tensor<2x4x8x8xf32>
    fluid.yield %d : tensor<2x4x8x8xf32>
  }
  return
}
