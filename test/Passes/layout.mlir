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

// ResNet's stem and its gradient: the max pool with indices between two
// convolutions and its gradient between the gradient convolutions run
// channels-last on the neighbours' NHWC values and hand NHWC values on:
// no transpose around them (the indices stay NHWC from one to the other).
// (A transpose of a value would follow its definition.)
// CHECK-LABEL: func.func @pool
// CHECK: %[[R:.*]] = fluid.relu %{{.*}} : tensor<2x9x9x8xf32>
// CHECK-NOT: fluid.transpose
// CHECK: %[[P:.*]], %[[I:.*]] = fluid.max_pool2d_with_indices %[[R]] {channels_last, kernel_size = array<i64: 3, 3>, padding = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : tensor<2x9x9x8xf32> -> tensor<2x5x5x8xf32>, tensor<2x5x5x8xui8>
// CHECK-NOT: fluid.transpose
// CHECK: fluid.conv2d %[[P]], %{{.*}} {channels_last} : (tensor<2x5x5x8xf32>, tensor<8x1x1x8xf32>) -> tensor<2x5x5x8xf32>
// CHECK: %[[G:.*]] = fluid.conv2d_grad_input %{{.*}}, %{{.*}} {channels_last} : (tensor<2x5x5x8xf32>, tensor<8x1x1x8xf32>) -> tensor<2x5x5x8xf32>
// CHECK-NOT: fluid.transpose
// CHECK: %[[GP:.*]] = fluid.max_pool2d_grad_indices %[[G]], %[[I]] {channels_last, kernel_size = array<i64: 3, 3>, padding = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : tensor<2x5x5x8xf32>, tensor<2x5x5x8xui8> -> tensor<2x9x9x8xf32>
// CHECK-NOT: fluid.transpose
// CHECK: %[[GR:.*]] = fluid.relu_grad %[[GP]], %[[R]] : tensor<2x9x9x8xf32>
// CHECK-NOT: fluid.transpose
// CHECK: fluid.conv2d_grad_filter %[[GR]], %{{.*}} {channels_last, {{.*}}} : (tensor<2x9x9x8xf32>, tensor<2x9x9x3xf32>) -> tensor<8x3x3x3xf32>
func.func @pool(%x: tensor<2x3x9x9xf32>, %w1: tensor<8x3x3x3xf32>,
                %w2: tensor<8x8x1x1xf32>, %dy: tensor<2x8x5x5xf32>)
    -> (tensor<2x8x5x5xf32>, tensor<8x3x3x3xf32>) {
  %c1 = fluid.conv2d %x, %w1 {padding = array<i64: 1, 1, 1, 1>} : (tensor<2x3x9x9xf32>, tensor<8x3x3x3xf32>) -> tensor<2x8x9x9xf32>
  %r = fluid.relu %c1 : tensor<2x8x9x9xf32>
  %p, %i = fluid.max_pool2d_with_indices %r {kernel_size = array<i64: 3, 3>, strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>} : tensor<2x8x9x9xf32> -> tensor<2x8x5x5xf32>, tensor<2x8x5x5xui8>
  %c2 = fluid.conv2d %p, %w2 : (tensor<2x8x5x5xf32>, tensor<8x8x1x1xf32>) -> tensor<2x8x5x5xf32>
  %g = fluid.conv2d_grad_input %dy, %w2 : (tensor<2x8x5x5xf32>, tensor<8x8x1x1xf32>) -> tensor<2x8x5x5xf32>
  %gp = fluid.max_pool2d_grad_indices %g, %i {kernel_size = array<i64: 3, 3>, strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>} : tensor<2x8x5x5xf32>, tensor<2x8x5x5xui8> -> tensor<2x8x9x9xf32>
  %gr = fluid.relu_grad %gp, %r : tensor<2x8x9x9xf32>
  %gw = fluid.conv2d_grad_filter %gr, %x {padding = array<i64: 1, 1, 1, 1>} : (tensor<2x8x9x9xf32>, tensor<2x3x9x9xf32>) -> tensor<8x3x3x3xf32>
  return %c2, %gw : tensor<2x8x5x5xf32>, tensor<8x3x3x3xf32>
}

// The same without saved picks (--no-pool-indices): max_pool2d and
// max_pool2d_grad, which reads the pool's NHWC input.
// CHECK-LABEL: func.func @pool_no_indices
// CHECK: %[[R:.*]] = fluid.relu %{{.*}} : tensor<2x9x9x8xf32>
// CHECK-NOT: fluid.transpose
// CHECK: %[[P:.*]] = fluid.max_pool2d %[[R]] {ceil_mode, channels_last, kernel_size = array<i64: 2, 2>, strides = array<i64: 2, 2>} : tensor<2x9x9x8xf32> -> tensor<2x5x5x8xf32>
// CHECK-NOT: fluid.transpose
// CHECK: fluid.conv2d %[[P]], %{{.*}} {channels_last}
// CHECK: %[[G:.*]] = fluid.conv2d_grad_input
// CHECK-NOT: fluid.transpose
// CHECK: %[[GP:.*]] = fluid.max_pool2d_grad %[[G]], %[[R]] {ceil_mode, channels_last, kernel_size = array<i64: 2, 2>, strides = array<i64: 2, 2>} : tensor<2x5x5x8xf32>, tensor<2x9x9x8xf32>
// CHECK-NOT: fluid.transpose
// CHECK: fluid.relu_grad %[[GP]], %[[R]] : tensor<2x9x9x8xf32>
func.func @pool_no_indices(%x: tensor<2x3x9x9xf32>, %w1: tensor<8x3x3x3xf32>,
                           %w2: tensor<8x8x1x1xf32>, %dy: tensor<2x8x5x5xf32>)
    -> (tensor<2x8x5x5xf32>, tensor<2x8x9x9xf32>) {
  %c1 = fluid.conv2d %x, %w1 {padding = array<i64: 1, 1, 1, 1>} : (tensor<2x3x9x9xf32>, tensor<8x3x3x3xf32>) -> tensor<2x8x9x9xf32>
  %r = fluid.relu %c1 : tensor<2x8x9x9xf32>
  %p = fluid.max_pool2d %r {kernel_size = array<i64: 2, 2>, strides = array<i64: 2, 2>, ceil_mode} : tensor<2x8x9x9xf32> -> tensor<2x8x5x5xf32>
  %c2 = fluid.conv2d %p, %w2 : (tensor<2x8x5x5xf32>, tensor<8x8x1x1xf32>) -> tensor<2x8x5x5xf32>
  %g = fluid.conv2d_grad_input %dy, %w2 : (tensor<2x8x5x5xf32>, tensor<8x8x1x1xf32>) -> tensor<2x8x5x5xf32>
  %gp = fluid.max_pool2d_grad %g, %r {kernel_size = array<i64: 2, 2>, strides = array<i64: 2, 2>, ceil_mode} : tensor<2x8x5x5xf32>, tensor<2x8x9x9xf32>
  %gr = fluid.relu_grad %gp, %r : tensor<2x8x9x9xf32>
  return %c2, %gr : tensor<2x8x5x5xf32>, tensor<2x8x9x9xf32>
}

// A pool whose input has no NHWC twin (nothing channels-last before it)
// stays NCHW, and so does a gradient from its indices.
// CHECK-LABEL: func.func @pool_first
// CHECK: fluid.max_pool2d_with_indices %{{.*}} {kernel_size = array<i64: 2, 2>, strides = array<i64: 2, 2>} : tensor<2x8x4x4xf32> -> tensor<2x8x2x2xf32>, tensor<2x8x2x2xui8>
// CHECK: fluid.max_pool2d_grad_indices %{{.*}}, %{{.*}} {kernel_size = array<i64: 2, 2>, strides = array<i64: 2, 2>} : tensor<2x8x2x2xf32>, tensor<2x8x2x2xui8> -> tensor<2x8x4x4xf32>
func.func @pool_first(%x: tensor<2x8x4x4xf32>, %w: tensor<8x8x1x1xf32>, %dy: tensor<2x8x2x2xf32>)
    -> (tensor<2x8x2x2xf32>, tensor<2x8x4x4xf32>) {
  %p, %i = fluid.max_pool2d_with_indices %x {kernel_size = array<i64: 2, 2>, strides = array<i64: 2, 2>} : tensor<2x8x4x4xf32> -> tensor<2x8x2x2xf32>, tensor<2x8x2x2xui8>
  %c = fluid.conv2d %p, %w : (tensor<2x8x2x2xf32>, tensor<8x8x1x1xf32>) -> tensor<2x8x2x2xf32>
  %g = fluid.conv2d_grad_input %dy, %w : (tensor<2x8x2x2xf32>, tensor<8x8x1x1xf32>) -> tensor<2x8x2x2xf32>
  %gp = fluid.max_pool2d_grad_indices %g, %i {kernel_size = array<i64: 2, 2>, strides = array<i64: 2, 2>} : tensor<2x8x2x2xf32>, tensor<2x8x2x2xui8> -> tensor<2x8x4x4xf32>
  return %c, %gp : tensor<2x8x2x2xf32>, tensor<2x8x4x4xf32>
}

// A program's own permutes to channels-last and back (ConvNeXt's layer
// norms): NCHW -> NHWC of the convolution's result is its twin, and the
// permute back has the layer-normed value as its twin, so the next
// convolution reads it with no transpose at all. The per-pixel mean's
// gradient-style broadcast ([N, H, W, 1], not per channel) is left in the
// program's own layout.
// CHECK-LABEL: func.func @own_permutes
// CHECK: %[[C1:.*]] = fluid.conv2d %{{.*}} {channels_last, {{.*}}} : (tensor<2x5x5x8xf32>, tensor<16x3x3x8xf32>) -> tensor<2x5x5x16xf32>
// CHECK-NOT: fluid.transpose
// CHECK: %[[MU:.*]] = fluid.mean %[[C1]] {axes = array<i64: 3>, keep_dims} : tensor<2x5x5x16xf32> -> tensor<2x5x5x1xf32>
// CHECK: %[[B:.*]] = fluid.broadcast_to %[[MU]] : tensor<2x5x5x1xf32> -> tensor<2x5x5x16xf32>
// CHECK: %[[N:.*]] = fluid.sub %[[C1]], %[[B]] : tensor<2x5x5x16xf32>, tensor<2x5x5x16xf32> -> tensor<2x5x5x16xf32>
// CHECK-NOT: fluid.transpose
// CHECK: fluid.conv2d %[[N]], %{{.*}} {channels_last} : (tensor<2x5x5x16xf32>, tensor<16x1x1x16xf32>) -> tensor<2x5x5x16xf32>
// CHECK: fluid.transpose %{{.*}} {permutation = array<i64: 0, 3, 1, 2>} : tensor<2x5x5x16xf32> -> tensor<2x16x5x5xf32>
// CHECK-NOT: fluid.transpose
// CHECK: return
// NCHW-LABEL: func.func @own_permutes
func.func @own_permutes(%x: tensor<2x8x5x5xf32>, %w1: tensor<16x8x3x3xf32>,
                        %w2: tensor<16x16x1x1xf32>) -> tensor<2x16x5x5xf32> {
  %c1 = fluid.conv2d %x, %w1 {padding = array<i64: 1, 1, 1, 1>} : (tensor<2x8x5x5xf32>, tensor<16x8x3x3xf32>) -> tensor<2x16x5x5xf32>
  %t = fluid.transpose %c1 {permutation = array<i64: 0, 2, 3, 1>} : tensor<2x16x5x5xf32> -> tensor<2x5x5x16xf32>
  %mu = fluid.mean %t {axes = array<i64: 3>, keep_dims} : tensor<2x5x5x16xf32> -> tensor<2x5x5x1xf32>
  %b = fluid.broadcast_to %mu : tensor<2x5x5x1xf32> -> tensor<2x5x5x16xf32>
  %n = fluid.sub %t, %b : tensor<2x5x5x16xf32>, tensor<2x5x5x16xf32> -> tensor<2x5x5x16xf32>
  %back = fluid.transpose %n {permutation = array<i64: 0, 3, 1, 2>} : tensor<2x5x5x16xf32> -> tensor<2x16x5x5xf32>
  %c2 = fluid.conv2d %back, %w2 : (tensor<2x16x5x5xf32>, tensor<16x16x1x1xf32>) -> tensor<2x16x5x5xf32>
  return %c2 : tensor<2x16x5x5xf32>
}
