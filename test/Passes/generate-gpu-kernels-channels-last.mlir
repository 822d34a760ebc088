// REQUIRES: cuda-build
// RUN: fluid-opt %s --fluid-generate-gpu-kernels="column-partials=atomic column-unroll=1" | FileCheck %s
// RUN: fluid-opt %s --fluid-generate-gpu-kernels="column-partials=atomic column-unroll=1" --fluid-lower-gpu-kernels | FileCheck %s --check-prefix=PTX
// RUN: fluid-opt %s --fluid-generate-gpu-kernels="column-partials=vector column-unroll=1" | FileCheck %s --check-prefix=VEC
// RUN: fluid-opt %s --fluid-generate-gpu-kernels="column-partials=vector column-unroll=1" --fluid-lower-gpu-kernels | FileCheck %s --check-prefix=VECPTX
// RUN: not fluid-opt %s --fluid-generate-gpu-kernels=column-partials=scattered 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: fluid-opt %s --fluid-generate-gpu-kernels="column-partials=atomic column-unroll=4" | FileCheck %s --check-prefix=UNROLL
// RUN: fluid-opt %s --fluid-generate-gpu-kernels="column-partials=atomic column-unroll=4" --fluid-lower-gpu-kernels | FileCheck %s --check-prefix=UNROLLPTX
// The default is vector partials and four rows per step (both checked
// bit for bit against the other forms on a GPU, test/Runtime/compiled-gpu.py):
// RUN: fluid-opt %s --fluid-generate-gpu-kernels > %t.default.mlir
// RUN: fluid-opt %s --fluid-generate-gpu-kernels="column-partials=vector column-unroll=4" | diff %t.default.mlir -
// RUN: fluid-opt %s --fluid-generate-gpu-kernels="column-partials=atomic column-unroll=4" > %t.atomic.mlir
// RUN: not diff -q %t.default.mlir %t.atomic.mlir
// RUN: not fluid-opt %s --fluid-generate-gpu-kernels=column-unroll=9 2>&1 | FileCheck %s --check-prefix=BADUNROLL

// A channels-last region with two sums over [rows, C] = [1024, 64]
// (batch norm's statistics pass of an NHWC program): tiles of 32
// channels, 8 vectors of 4 per tile (thread % 8), 32 row lanes (thread /
// 8); 2 tiles x 2 splits of the rows (the splits capped so that a tile's
// last block reads few partial sums). Each thread keeps a sum per
// reduction and lane (8), the block adds its row lanes in workgroup memory
// by a tree (a fixed order), stores its partial sums, and the tile's last block (by
// a counter per tile) adds the splits' partials and stores the sums.
// CHECK-LABEL: gpu.func @fused_0_v(
// CHECK-SAME: %[[X:[^:]*]]: memref<65536xf32>, %[[S:[^:]*]]: memref<64xf32>, %{{[^:]*}}: memref<65536xf32>, %[[SUM1:[^:]*]]: memref<64xf32>, %[[SUM2:[^:]*]]: memref<64xf32>, %[[COUNT:[^:]*]]: memref<64xi32>, %[[PART:[^:]*]]: memref<256xf32>) workgroup(%[[W:.*]] : memref<2048xf32, #gpu.address_space<workgroup>>) kernel {
// CHECK: arith.remui %{{.*}}, %c8_i32
// CHECK: arith.divui %{{.*}}, %c8_i32
// CHECK: arith.divui %{{.*}}, %c2_i32
// CHECK: arith.remui %{{.*}}, %c2_i32
// The rows of this split, 2 splits x 32 row lanes apart.
// CHECK: scf.for %{{.*}} = %{{.*}} to %c1024{{.*}} step %c64 iter_args({{.*}}) -> (f32, f32, f32, f32, f32, f32, f32, f32) {
// CHECK: vector.load %[[X]][%{{.*}}] {alignment = 16 : i64} : memref<65536xf32>, vector<4xf32>
// The per-channel operand: the four lanes' channels, one vector load at
// element % 64.
// CHECK: %[[C:.*]] = arith.remui %{{.*}}, %c64_i32 : i32
// CHECK: %[[CI:.*]] = arith.index_castui %[[C]] : i32 to index
// CHECK: vector.load %[[S]][%[[CI]]] {alignment = 16 : i64} : memref<64xf32>, vector<4xf32>
// CHECK: vector.store
// CHECK: scf.yield
// The block's row lanes by a tree: lanes below 16 add lane + 16 (thread +
// 128), then 8, 4, 2, 1.
// CHECK: memref.store %{{.*}}, %[[W]]
// CHECK: gpu.barrier
// CHECK: %[[HALF:.*]] = arith.cmpi ult, %{{.*}}, %c16{{.*}} : index
// CHECK-NEXT: scf.if %[[HALF]] {
// CHECK: arith.addi %thread_id_x, %c128 : index
// CHECK-COUNT-5: gpu.barrier
// CHECK: memref.store %{{.*}}, %[[PART]][%{{.*}}] : memref<256xf32>
// CHECK: nvvm.memory.barrier <gpu>
// CHECK: %[[BEFORE:.*]] = memref.atomic_rmw addi %{{.*}}, %[[COUNT]][%[[T:.*]]] : (i32, memref<64xi32>) -> i32
// CHECK: arith.cmpi eq, %[[BEFORE]], %c1_i32
// CHECK: scf.if
// CHECK: nvvm.memory.barrier <gpu>
// CHECK: memref.atomic_rmw addf %{{.*}}, %[[PART]]
// CHECK: memref.store %{{.*}}, %[[SUM1]][%{{.*}}] : memref<64xf32>
// CHECK: memref.store %{{.*}}, %[[SUM2]][%{{.*}}] : memref<64xf32>
// CHECK: memref.store %{{.*}}, %[[COUNT]][%[[T]]] : memref<64xi32>
// CHECK: gpu.return

// With column-partials=vector the partials are split-major: each block's
// row lane 0 stores a thread's 4 channels of each sum as one vector, and
// the tile's last block reads them back as vectors with plain loads after
// the fence (no atomic reads), the splits in the same order.
// VEC-LABEL: gpu.func @fused_0_v(
// VEC: nvvm.memory.barrier <gpu>
// VEC: memref.atomic_rmw addi
// VEC: nvvm.memory.barrier <gpu>
// VEC-NOT: memref.atomic_rmw addf
// VEC: scf.for
// VEC-COUNT-2: vector.load %{{.*}} {alignment = 16 : i64} : memref<256xf32>, vector<4xf32>
// VEC: gpu.return
// VECPTX-NOT: atom.global.add.f32
// VECPTX: .entry fused_0_v(
// VECPTX-SAME: membar.gl
// VECPTX-NOT: atom.global.add.f32
// BAD: column-partials must be atomic or vector, got 'scattered'

// With column-unroll=4 the rows loop takes 4 rows (64 apart) per step while
// the last of them is below 1024 (to 1024 - 3 * 64 = 832, by 256, carrying
// the next row), loading the four rows' X vectors (and the per-channel
// vector once) before the first row's output is stored; the rest of the
// rows follow one per step from where it stopped, onto the same sums.
// UNROLL-LABEL: gpu.func @fused_0_v(
// UNROLL: %[[U:.*]]:9 = scf.for %{{.*}} = %[[START:.*]] to %c832 step %c256 iter_args({{.*}}, %{{.*}} = %[[START]]) -> (f32, f32, f32, f32, f32, f32, f32, f32, index) {
// UNROLL: vector.load %arg0[
// UNROLL: vector.load %arg1[
// UNROLL-COUNT-3: vector.load %arg0[
// UNROLL-NOT: vector.load
// UNROLL-COUNT-4: vector.store %{{.*}}, %arg2[
// UNROLL: scf.yield
// UNROLL: scf.for %{{.*}} = %[[U]]#8 to %c1024{{.*}} step %c64 iter_args(%{{.*}} = %[[U]]#0, {{.*}}, %{{.*}} = %[[U]]#7) -> (f32, f32, f32, f32, f32, f32, f32, f32) {
// UNROLL: vector.load %arg0[
// UNROLL: vector.store %{{.*}}, %arg2[
// UNROLL: scf.yield
// UNROLL: gpu.return
// UNROLLPTX: .entry fused_0_v(
// UNROLLPTX-SAME: ld.global.v4.b32 {{.*}}ld.global.v4.b32 {{.*}}ld.global.v4.b32 {{.*}}ld.global.v4.b32 {{.*}}ld.global.v4.b32 {{.*}}st.global.v4.b32
// BADUNROLL: column-unroll must be 1 to 8, got 9

// PTX: .entry fused_0_v(
// PTX-SAME: ld.global.v4.b32
// PTX-SAME: bar.sync
// PTX-SAME: atom.global.add.u32
// PTX-SAME: membar.gl
func.func @f(%x: memref<16x8x8x64xf32>, %s: memref<64xf32>, %y: memref<16x8x8x64xf32>, %sum: memref<64xf32>, %sq: memref<64xf32>) {
  fluid_rt.launch "fusion" ins(%x, %s : memref<16x8x8x64xf32>, memref<64xf32>) outs(%y, %sum, %sq : memref<16x8x8x64xf32>, memref<64xf32>, memref<64xf32>) params {} {
  ^bb0(%arg0: tensor<16x8x8x64xf32>, %arg1: tensor<64xf32>):
    %m = fluid.batch_norm_apply %arg0, %arg1, %arg1, %arg1, %arg1 {channels_last} : tensor<16x8x8x64xf32>, tensor<64xf32>
    %t = fluid.tanh %m : tensor<16x8x8x64xf32>
    %s1 = fluid.reduce_sum %t {axes = array<i64: 0, 1, 2>} : tensor<16x8x8x64xf32> -> tensor<64xf32>
    %q = fluid.mul %t, %arg0 : tensor<16x8x8x64xf32>, tensor<16x8x8x64xf32> -> tensor<16x8x8x64xf32>
    %s2 = fluid.reduce_sum %q {axes = array<i64: 0, 1, 2>} : tensor<16x8x8x64xf32> -> tensor<64xf32>
    fluid.yield %t, %s1, %s2 : tensor<16x8x8x64xf32>, tensor<64xf32>, tensor<64xf32>
  }
  return
}
