// RUN: fluid-opt %s --fluid-layout=layout=nhwc | FileCheck %s
// RUN: fluid-opt %s --fluid-layout | FileCheck %s --check-prefix=NCHW
// RUN: not fluid-opt %s --fluid-layout=layout=nwhc 2>&1 | FileCheck %s --check-prefix=BAD

// BAD: layout must be nchw or nhwc, got 'nwhc'

// Two convolutions with a per-channel affine, ReLU and a residual add in
// between: the activations stay NHWC from the first convolution to the
// second; the only layout changes are at the input, the filters and the
// result. The per-channel operand becomes a [1, 1, 1, C] reshape.
// CHECK-LABEL: func.func @block
// CHECK-SAME: (%[[X:.*]]: tensor<2x8x5x5xf32>, %[[W1:.*]]: tensor<16x8x3x3xf32>, %[[W2:.*]]: tensor<16x16x1x1xf32>, %[[S:.*]]: tensor<1x16x1x1xf32>)
// CHECK-DAG: %[[XT:.*]] = fluid.transpose %[[X]] {permutation = array<i64: 0, 2, 3, 1>} : tensor<2x8x5x5xf32> -> tensor<2x5x5x8xf32>
// CHECK-DAG: %[[W1T:.*]] = fluid.transpose %[[W1]] {permutation = array<i64: 0, 2, 3, 1>} : tensor<16x8x3x3xf32> -> tensor<16x3x3x8xf32>
// CHECK-DAG: %[[ST:.*]] = fluid.reshape %[[S]] : tensor<1x16x1x1xf32> -> tensor<1x1x1x16xf32>
// CHECK: %[[C1:.*]] = fluid.conv2d %[[XT]], %[[W1T]] {channels_last, {{.*}}} : (tensor<2x5x5x8xf32>, tensor<16x3x3x8xf32>) -> tensor<2x5x5x16xf32>
// CHECK: %[[M:.*]] = fluid.mul %[[C1]], %[[ST]] : tensor<2x5x5x16xf32>, tensor<1x1x1x16xf32> -> tensor<2x5x5x16xf32>
// CHECK: %[[R:.*]] = fluid.relu %[[M]] : tensor<2x5x5x16xf32>
// CHECK-NOT: fluid.transpose %[[R]]
// CHECK: %[[C2:.*]] = fluid.conv2d %[[R]], %{{.*}} {channels_last} : (tensor<2x5x5x16xf32>, tensor<16x1x1x16xf32>) -> tensor<2x5x5x16xf32>
// CHECK: %[[A:.*]] = fluid.add %[[C2]], %[[R]] : tensor<2x5x5x16xf32>, tensor<2x5x5x16xf32> -> tensor<2x5x5x16xf32>
// CHECK: %[[B:.*]] = fluid.transpose %[[A]] {permutation = array<i64: 0, 3, 1, 2>} : tensor<2x5x5x16xf32> -> tensor<2x16x5x5xf32>
// The per-channel sum keeps its [16] result: axes 0, 2, 3 become 0, 1, 2.
// CHECK: %[[SUM:.*]] = fluid.reduce_sum %[[A]] {axes = array<i64: 0, 1, 2>} : tensor<2x5x5x16xf32> -> tensor<16xf32>
// CHECK: return %[[B]], %[[SUM]]
// NCHW-LABEL: func.func @block
// NCHW-NOT: fluid.transpose
// NCHW-NOT: channels_last
func.func @block(%x: tensor<2x8x5x5xf32>, %w1: tensor<16x8x3x3xf32>,
                 %w2: tensor<16x16x1x1xf32>, %s: tensor<1x16x1x1xf32>)
    -> (tensor<2x16x5x5xf32>, tensor<16xf32>) {
  %c1 = fluid.conv2d %x, %w1 {padding = array<i64: 1, 1, 1, 1>} : (tensor<2x8x5x5xf32>, tensor<16x8x3x3xf32>) -> tensor<2x16x5x5xf32>
  %m = fluid.mul %c1, %s : tensor<2x16x5x5xf32>, tensor<1x16x1x1xf32> -> tensor<2x16x5x5xf32>
  %r = fluid.relu %m : tensor<2x16x5x5xf32>
  %c2 = fluid.conv2d %r, %w2 : (tensor<2x16x5x5xf32>, tensor<16x16x1x1xf32>) -> tensor<2x16x5x5xf32>
  %a = fluid.add %c2, %r : tensor<2x16x5x5xf32>, tensor<2x16x5x5xf32> -> tensor<2x16x5x5xf32>
  %sum = fluid.reduce_sum %a {axes = array<i64: 0, 2, 3>} : tensor<2x16x5x5xf32> -> tensor<16xf32>
  return %a, %sum : tensor<2x16x5x5xf32>, tensor<16xf32>
}

// The gradients: dy from a broadcast is broadcast again in NHWC (no
// full-size transpose), both gradient convolutions run channels-last, and
// the filter gradient goes back to [O, C, KH, KW] for its user.
// CHECK-LABEL: func.func @grads
// CHECK: %[[D:.*]] = fluid.broadcast_to %{{.*}} : tensor<2x1x1x16xf32> -> tensor<2x5x5x16xf32>
// CHECK: fluid.conv2d_grad_input %[[D]], %{{.*}} {channels_last, {{.*}}} : (tensor<2x5x5x16xf32>, tensor<16x3x3x8xf32>) -> tensor<2x5x5x8xf32>
// CHECK: %[[GW:.*]] = fluid.conv2d_grad_filter %[[D]], %{{.*}} {channels_last, {{.*}}} : (tensor<2x5x5x16xf32>, tensor<2x5x5x8xf32>) -> tensor<16x3x3x8xf32>
// CHECK: fluid.transpose %[[GW]] {permutation = array<i64: 0, 3, 1, 2>} : tensor<16x3x3x8xf32> -> tensor<16x8x3x3xf32>
// The global average pool becomes a mean over H and W; its [N, 1, 1, C]
// result is read back as [N, C, 1, 1] through a reshape.
// CHECK: %[[P:.*]] = fluid.mean %{{.*}} {axes = array<i64: 1, 2>, keep_dims} : tensor<2x5x5x8xf32> -> tensor<2x1x1x8xf32>
// CHECK: fluid.reshape %[[P]] : tensor<2x1x1x8xf32> -> tensor<2x8x1x1xf32>
func.func @grads(%x: tensor<2x8x5x5xf32>, %w: tensor<16x8x3x3xf32>,
                 %g: tensor<2x16x1x1xf32>)
    -> (tensor<2x8x5x5xf32>, tensor<16x8x3x3xf32>, tensor<2x8x1x1xf32>) {
  %dy = fluid.broadcast_to %g : tensor<2x16x1x1xf32> -> tensor<2x16x5x5xf32>
  %dx = fluid.conv2d_grad_input %dy, %w {padding = array<i64: 1, 1, 1, 1>} : (tensor<2x16x5x5xf32>, tensor<16x8x3x3xf32>) -> tensor<2x8x5x5xf32>
  %dw = fluid.conv2d_grad_filter %dy, %x {padding = array<i64: 1, 1, 1, 1>} : (tensor<2x16x5x5xf32>, tensor<2x8x5x5xf32>) -> tensor<16x8x3x3xf32>
  %p = fluid.global_avg_pool %dx : tensor<2x8x5x5xf32> -> tensor<2x8x1x1xf32>
  return %dx, %dw, %p : tensor<2x8x5x5xf32>, tensor<16x8x3x3xf32>, tensor<2x8x1x1xf32>
}
