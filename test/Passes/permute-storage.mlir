// RUN: fluid-opt %s -split-input-file --fluid-permute-storage | FileCheck %s --enable-var-scope

// A channels-last step as --fluid-layout leaves it: the images and the
// filter are transposed where the convolutions read them, the filter's
// gradient back where the update takes it. The filter and its momentum
// buffer are stored [O, KH, KW, C], the images [N, H, W, C]; no layout
// change is left. The bias keeps its type.

// CHECK: fluid.param @w : tensor<8x3x3x4xf32> init kaiming_normal(fan_out, gain = 1.000000e+00) {storage_order = array<i64: 0, 2, 3, 1>}
// CHECK: fluid.param @b : tensor<8xf32> init zeros{{$}}
// CHECK: fluid.param @w.momentum_buffer : tensor<8x3x3x4xf32> init zeros {fluid.optimizer_state, storage_order = array<i64: 0, 2, 3, 1>, trainable = false}
// CHECK: fluid.param @b.momentum_buffer : tensor<8xf32> init zeros {fluid.optimizer_state, trainable = false}
fluid.param @w : tensor<8x4x3x3xf32> init kaiming_normal(fan_out, gain = 1.0)
fluid.param @b : tensor<8xf32> init zeros
fluid.param @lr : tensor<f32> init constant(0.1) {fluid.optimizer_state, trainable = false}
fluid.param @w.momentum_buffer : tensor<8x4x3x3xf32> init zeros {fluid.optimizer_state, trainable = false}
fluid.param @b.momentum_buffer : tensor<8xf32> init zeros {fluid.optimizer_state, trainable = false}

// CHECK-LABEL: func.func @step(
// CHECK-SAME: %[[IMAGES:[^:]*]]: tensor<2x8x8x4xf32> {fluid.name = "images", fluid.storage_order = array<i64: 0, 2, 3, 1>}
// CHECK-SAME: -> tensor<2x6x6x8xf32>
// CHECK-NOT: fluid.transpose
// CHECK: %[[W:.*]] = fluid.get_param @w : tensor<8x3x3x4xf32>
// CHECK: %[[Y:.*]] = fluid.conv2d %[[IMAGES]], %[[W]], %{{.*}} {channels_last}
// CHECK: %[[GW:.*]] = fluid.conv2d_grad_filter %[[Y]], %[[IMAGES]] {channels_last}
// CHECK: %[[V:.*]] = fluid.get_param @w.momentum_buffer : tensor<8x3x3x4xf32>
// CHECK: %[[P:.*]]:2, %[[NV:.*]]:2 = fluid.momentum_group(%[[W]], %{{.*}}), (%[[GW]], %{{.*}}), (%[[V]], %{{.*}}), %{{.*}} : (tensor<8x3x3x4xf32>, tensor<8xf32>), tensor<f32>
// CHECK: fluid.set_param @w, %[[P]]#0 : tensor<8x3x3x4xf32>
// CHECK: fluid.set_param @w.momentum_buffer, %[[NV]]#0 : tensor<8x3x3x4xf32>
// CHECK-NOT: fluid.transpose
// CHECK: return
func.func @step(%arg0: tensor<2x4x8x8xf32> {fluid.name = "images"}) -> tensor<2x6x6x8xf32> {
  %x = fluid.transpose %arg0 {permutation = array<i64: 0, 2, 3, 1>} : tensor<2x4x8x8xf32> -> tensor<2x8x8x4xf32>
  %w = fluid.get_param @w : tensor<8x4x3x3xf32>
  %wt = fluid.transpose %w {permutation = array<i64: 0, 2, 3, 1>} : tensor<8x4x3x3xf32> -> tensor<8x3x3x4xf32>
  %b = fluid.get_param @b : tensor<8xf32>
  %y = fluid.conv2d %x, %wt, %b {channels_last} : (tensor<2x8x8x4xf32>, tensor<8x3x3x4xf32>, tensor<8xf32>) -> tensor<2x6x6x8xf32>
  %gwt = fluid.conv2d_grad_filter %y, %x {channels_last} : (tensor<2x6x6x8xf32>, tensor<2x8x8x4xf32>) -> tensor<8x3x3x4xf32>
  %gw = fluid.transpose %gwt {permutation = array<i64: 0, 3, 1, 2>} : tensor<8x3x3x4xf32> -> tensor<8x4x3x3xf32>
  %lr = fluid.get_param @lr : tensor<f32>
  %v = fluid.get_param @w.momentum_buffer : tensor<8x4x3x3xf32>
  %vb = fluid.get_param @b.momentum_buffer : tensor<8xf32>
  %p:2, %nv:2 = fluid.momentum_group(%w, %b), (%gw, %b), (%v, %vb), %lr : (tensor<8x4x3x3xf32>, tensor<8xf32>), tensor<f32>
  fluid.set_param @w, %p#0 : tensor<8x4x3x3xf32>
  fluid.set_param @w.momentum_buffer, %nv#0 : tensor<8x4x3x3xf32>
  fluid.set_param @b, %p#1 : tensor<8xf32>
  fluid.set_param @b.momentum_buffer, %nv#1 : tensor<8xf32>
  return %y : tensor<2x6x6x8xf32>
}

// CHECK-LABEL: func.func @predict(
// CHECK-SAME: %[[IMAGES:[^:]*]]: tensor<2x8x8x4xf32> {fluid.name = "images", fluid.storage_order = array<i64: 0, 2, 3, 1>}
// CHECK-NEXT: %[[W:.*]] = fluid.get_param @w : tensor<8x3x3x4xf32>
// CHECK-NEXT: fluid.conv2d %[[IMAGES]], %[[W]] {channels_last}
func.func @predict(%arg0: tensor<2x4x8x8xf32> {fluid.name = "images"}) -> tensor<2x6x6x8xf32> {
  %x = fluid.transpose %arg0 {permutation = array<i64: 0, 2, 3, 1>} : tensor<2x4x8x8xf32> -> tensor<2x8x8x4xf32>
  %w = fluid.get_param @w : tensor<8x4x3x3xf32>
  %wt = fluid.transpose %w {permutation = array<i64: 0, 2, 3, 1>} : tensor<8x4x3x3xf32> -> tensor<8x3x3x4xf32>
  %y = fluid.conv2d %x, %wt {channels_last} : (tensor<2x8x8x4xf32>, tensor<8x3x3x4xf32>) -> tensor<2x6x6x8xf32>
  return %y : tensor<2x6x6x8xf32>
}

// -----

// One channel: the layout changes are reshapes (they move a dimension of
// size 1), which are the same permutation; the update is a single op, and
// the casts of mixed precision (of the filter, its gradient and the
// images) follow.

// CHECK: fluid.param @w : tensor<6x5x5x1xf32> init zeros {storage_order = array<i64: 0, 2, 3, 1>}
// CHECK: fluid.param @w.momentum_buffer : tensor<6x5x5x1xf32> init zeros {fluid.optimizer_state, storage_order = array<i64: 0, 2, 3, 1>, trainable = false}
fluid.param @w : tensor<6x1x5x5xf32> init zeros
fluid.param @lr : tensor<f32> init constant(0.1) {fluid.optimizer_state, trainable = false}
fluid.param @w.momentum_buffer : tensor<6x1x5x5xf32> init zeros {fluid.optimizer_state, trainable = false}

// CHECK-LABEL: func.func @step(
// CHECK-SAME: tensor<2x8x8x1xf32> {fluid.name = "images", fluid.storage_order = array<i64: 0, 2, 3, 1>}
// CHECK-NOT: fluid.reshape
// CHECK: fluid.cast %{{.*}} : tensor<2x8x8x1xf32> -> tensor<2x8x8x1xbf16>
// CHECK-NOT: fluid.reshape
// CHECK: fluid.cast %{{.*}} : tensor<6x5x5x1xf32> -> tensor<6x5x5x1xbf16>
// CHECK-NOT: fluid.reshape
// CHECK: fluid.momentum %{{.*}} : tensor<6x5x5x1xf32>, tensor<f32>
// CHECK-NOT: fluid.reshape
// CHECK: return
func.func @step(%arg0: tensor<2x1x8x8xf32> {fluid.name = "images"}) {
  %x16 = fluid.cast %arg0 : tensor<2x1x8x8xf32> -> tensor<2x1x8x8xbf16>
  %x = fluid.reshape %x16 : tensor<2x1x8x8xbf16> -> tensor<2x8x8x1xbf16>
  %w = fluid.get_param @w : tensor<6x1x5x5xf32>
  %w16 = fluid.cast %w : tensor<6x1x5x5xf32> -> tensor<6x1x5x5xbf16>
  %wt = fluid.reshape %w16 : tensor<6x1x5x5xbf16> -> tensor<6x5x5x1xbf16>
  %y = fluid.conv2d %x, %wt {channels_last} : (tensor<2x8x8x1xbf16>, tensor<6x5x5x1xbf16>) -> tensor<2x4x4x6xbf16>
  %gwt = fluid.conv2d_grad_filter %y, %x {channels_last} : (tensor<2x4x4x6xbf16>, tensor<2x8x8x1xbf16>) -> tensor<6x5x5x1xbf16>
  %gw16 = fluid.reshape %gwt : tensor<6x5x5x1xbf16> -> tensor<6x1x5x5xbf16>
  %gw = fluid.cast %gw16 : tensor<6x1x5x5xbf16> -> tensor<6x1x5x5xf32>
  %lr = fluid.get_param @lr : tensor<f32>
  %v = fluid.get_param @w.momentum_buffer : tensor<6x1x5x5xf32>
  %p, %nv = fluid.momentum %w, %gw, %v, %lr : tensor<6x1x5x5xf32>, tensor<f32>
  fluid.set_param @w, %p : tensor<6x1x5x5xf32>
  fluid.set_param @w.momentum_buffer, %nv : tensor<6x1x5x5xf32>
  return
}

// -----

// Left alone: a filter also read in its own layout (here by a sum over
// it), with its state; images that also leave the function in their own
// layout (through an elementwise op, which would follow); and images whose
// layout change would move the batch dimension.

// CHECK: fluid.param @w : tensor<8x4x3x3xf32> init zeros{{$}}
// CHECK: fluid.param @w.momentum_buffer : tensor<8x4x3x3xf32> init zeros {fluid.optimizer_state, trainable = false}
fluid.param @w : tensor<8x4x3x3xf32> init zeros
fluid.param @lr : tensor<f32> init constant(0.1) {fluid.optimizer_state, trainable = false}
fluid.param @w.momentum_buffer : tensor<8x4x3x3xf32> init zeros {fluid.optimizer_state, trainable = false}

// CHECK-LABEL: func.func @step(
// CHECK-SAME: %{{[^:]*}}: tensor<2x4x8x8xf32> {fluid.name = "images"}
// CHECK-SAME: %{{[^:]*}}: tensor<4x2x8x8xf32> {fluid.name = "other"}
// CHECK-COUNT-4: fluid.transpose
func.func @step(%arg0: tensor<2x4x8x8xf32> {fluid.name = "images"}, %arg1: tensor<4x2x8x8xf32> {fluid.name = "other"}) -> (tensor<f32>, tensor<2x8x8x4xf32>, tensor<2x4x8x8xf32>) {
  %x = fluid.transpose %arg0 {permutation = array<i64: 0, 2, 3, 1>} : tensor<2x4x8x8xf32> -> tensor<2x8x8x4xf32>
  %r = fluid.relu %arg0 : tensor<2x4x8x8xf32>
  %o = fluid.transpose %arg1 {permutation = array<i64: 1, 2, 3, 0>} : tensor<4x2x8x8xf32> -> tensor<2x8x8x4xf32>
  %w = fluid.get_param @w : tensor<8x4x3x3xf32>
  %wt = fluid.transpose %w {permutation = array<i64: 0, 2, 3, 1>} : tensor<8x4x3x3xf32> -> tensor<8x3x3x4xf32>
  %y = fluid.conv2d %x, %wt {channels_last} : (tensor<2x8x8x4xf32>, tensor<8x3x3x4xf32>) -> tensor<2x6x6x8xf32>
  %gwt = fluid.conv2d_grad_filter %y, %x {channels_last} : (tensor<2x6x6x8xf32>, tensor<2x8x8x4xf32>) -> tensor<8x3x3x4xf32>
  %gw = fluid.transpose %gwt {permutation = array<i64: 0, 3, 1, 2>} : tensor<8x3x3x4xf32> -> tensor<8x4x3x3xf32>
  %lr = fluid.get_param @lr : tensor<f32>
  %v = fluid.get_param @w.momentum_buffer : tensor<8x4x3x3xf32>
  %p, %nv = fluid.momentum %w, %gw, %v, %lr : tensor<8x4x3x3xf32>, tensor<f32>
  fluid.set_param @w, %p : tensor<8x4x3x3xf32>
  fluid.set_param @w.momentum_buffer, %nv : tensor<8x4x3x3xf32>
  %norm = fluid.reduce_sum %gw : tensor<8x4x3x3xf32> -> tensor<f32>
  return %norm, %o, %r : tensor<f32>, tensor<2x8x8x4xf32>, tensor<2x4x8x8xf32>
}
