// (The lowering links libdevice from the CUDA toolkit.)

// An elementwise region: a scalar kernel and a vector one (4 f32 per step,
// 16-byte accesses for the full-size operands, the per-channel operand
// read per element at (element / 16) % 64), over flat buffers.
// Every index is far below 2^30: the divisions are 32-bit, the offsets
// 64-bit (index).
// The four lanes of a step are in one channel (16 elements per channel):
// one load of the per-channel input serves them all.
// A region with per-channel sums: blocks of 256 threads per channel and
// split, partial sums in workgroup memory, added atomically across splits.
// A view of an input (x[0, c, 0, 0] by three slices) is no operand of its
// own: the kernel reads the input's buffer at ((element / 64) % 4) * 64.

// PTX: gpu.binary @fluid_kernels
// PTX-SAME: chip = "sm_90"
// PTX-SAME: .target sm_90
// PTX-SAME: .entry fused_0(
// PTX-SAME: .entry fused_0_v(
// PTX-SAME: ld.global.v4.b32
// PTX-SAME: st.global.v4.b32
// PTX-SAME: .entry fused_1(
// PTX-SAME: bar.sync
// PTX-SAME: atom.global.add.f32
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
    %n = fluid.slice %arg0 {axis = 0 : i64, offsetfluid.avg_pool2d_grad = 0 : i64} : tensor<2x4x8x8xf32> -> tensor<1x4x8x8xf32>
    %h = fluid.slice %n {axis = 2 : i64, offset = 0 : i64} : tensor<1x4x8x8xf32> -> tensor<1x4x1x8xf32>
    %k = fluid.slice %h {axis = 3 : i64, offset = 0 : i64} : tensor<1x4x1x8xf32> -> tensor<1x4x1x1xf32>
    %d = fluid.sub %arg0, %k : tensor<2x4x8x8xf32>, tensor<1x4x1x1xf32> -> tensor<2x4x8x8xf32>
    fluid.yield %d : tensor<2x4x8x8xf32>
  }
  return
}
