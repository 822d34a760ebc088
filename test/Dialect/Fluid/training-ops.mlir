// The math, gradient and optimizer ops round-trip, and their result types
// are what the forward ops' shape rules say.
// RUN: fluid-opt %s | fluid-opt | FileCheck %s --enable-var-scope
// RUN: fluid-opt %s --verify-roundtrip -o /dev/null

// CHECK-LABEL: func.func @math
func.func @math(%x: tensor<4xf32>, %s: tensor<f32>, %i: tensor<i64>) -> (tensor<4xf32>, tensor<f32>, tensor<4xf32>) {
  // CHECK: fluid.neg %{{.*}} : tensor<4xf32>
  %0 = fluid.neg %x : tensor<4xf32>
  // CHECK: fluid.exp
  %1 = fluid.exp %0 : tensor<4xf32>
  // CHECK: fluid.log
  %2 = fluid.log %1 : tensor<4xf32>
  // CHECK: fluid.cos
  %3 = fluid.cos %2 : tensor<4xf32>
  // CHECK: fluid.sqrt
  %4 = fluid.sqrt %3 : tensor<4xf32>
  // CHECK: fluid.floor
  %5 = fluid.floor %4 : tensor<4xf32>
  // CHECK: fluid.erf %{{.*}} : tensor<4xf32>
  %e = fluid.erf %5 : tensor<4xf32>
  // CHECK: fluid.pow %{{.*}}, %{{.*}} : tensor<4xf32>, tensor<f32> -> tensor<4xf32>
  %6 = fluid.pow %e, %s : tensor<4xf32>, tensor<f32> -> tensor<4xf32>
  // CHECK: fluid.minimum %{{.*}}, %{{.*}} : tensor<f32>, tensor<4xf32> -> tensor<4xf32>
  %7 = fluid.minimum %s, %6 : tensor<f32>, tensor<4xf32> -> tensor<4xf32>
  // CHECK: fluid.maximum
  %8 = fluid.maximum %7, %x : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  // CHECK: fluid.greater_equal %{{.*}}, %{{.*}} : tensor<4xf32>, tensor<f32> -> tensor<4xf32>
  %9 = fluid.greater_equal %8, %s : tensor<4xf32>, tensor<f32> -> tensor<4xf32>
  // CHECK: fluid.select %{{.*}}, %{{.*}}, %{{.*}} : tensor<4xf32>, tensor<4xf32>, tensor<f32> -> tensor<4xf32>
  %10 = fluid.select %9, %8, %s : tensor<4xf32>, tensor<4xf32>, tensor<f32> -> tensor<4xf32>
  // CHECK: fluid.cast %{{.*}} : tensor<i64> -> tensor<f32>
  %11 = fluid.cast %i : tensor<i64> -> tensor<f32>
  return %10, %11, %0 : tensor<4xf32>, tensor<f32>, tensor<4xf32>
}

// CHECK-LABEL: func.func @shapes
func.func @shapes(%x: tensor<8x64x1x1xf32>, %y: tensor<8x96x7x7xf32>) -> (tensor<8x64x7x7xf32>, tensor<64x1x1xf32>, tensor<8x32x7x7xf32>) {
  // CHECK: fluid.broadcast_to %{{.*}} : tensor<8x64x1x1xf32> -> tensor<8x64x7x7xf32>
  %0 = fluid.broadcast_to %x : tensor<8x64x1x1xf32> -> tensor<8x64x7x7xf32>
  // CHECK: fluid.sum_to %{{.*}} : tensor<8x64x7x7xf32> -> tensor<64x1x1xf32>
  %1 = fluid.sum_to %0 : tensor<8x64x7x7xf32> -> tensor<64x1x1xf32>
  // CHECK: fluid.slice %{{.*}} {axis = 1 : i64, offset = 64 : i64} : tensor<8x96x7x7xf32> -> tensor<8x32x7x7xf32>
  %2 = fluid.slice %y {axis = 1 : i64, offset = 64 : i64} : tensor<8x96x7x7xf32> -> tensor<8x32x7x7xf32>
  return %0, %1, %2 : tensor<8x64x7x7xf32>, tensor<64x1x1xf32>, tensor<8x32x7x7xf32>
}

// CHECK-LABEL: func.func @gather_grad
func.func @gather_grad(%dy: tensor<2401x3xf32>, %index: tensor<2401xi64>, %ddy: tensor<4x2xf64>, %rows: tensor<2xi32>)
    -> (tensor<169x3xf32>, tensor<4x7xf64>) {
  // CHECK: fluid.gather_grad %{{.*}}, %{{.*}} {axis = 0 : i64} : (tensor<2401x3xf32>, tensor<2401xi64>) -> tensor<169x3xf32>
  %0 = fluid.gather_grad %dy, %index {axis = 0 : i64} : (tensor<2401x3xf32>, tensor<2401xi64>) -> tensor<169x3xf32>
  // CHECK: fluid.gather_grad %{{.*}}, %{{.*}} {axis = -1 : i64} : (tensor<4x2xf64>, tensor<2xi32>) -> tensor<4x7xf64>
  %1 = fluid.gather_grad %ddy, %rows {axis = -1 : i64} : (tensor<4x2xf64>, tensor<2xi32>) -> tensor<4x7xf64>
  return %0, %1 : tensor<169x3xf32>, tensor<4x7xf64>
}

// CHECK-LABEL: func.func @grads
func.func @grads(%dy: tensor<2x8x5x4xf32>, %x: tensor<2x4x9x7xf32>, %w: tensor<8x4x3x3xf32>,
                 %bdy: tensor<2x8x5x5xf32>, %bx: tensor<2x8x5x5xf32>, %c: tensor<8xf32>,
                 %pdy: tensor<1x3x5x6xf32>, %px: tensor<1x3x10x11xf32>,
                 %pidx: tensor<1x3x5x6xui8>,
                 %l: tensor<4x10xf32>, %lab: tensor<4xi64>, %g: tensor<f32>) {
  // CHECK: fluid.conv2d_grad_input %{{.*}}, %{{.*}} {padding = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<2x8x5x4xf32>, tensor<8x4x3x3xf32>) -> tensor<2x4x9x7xf32>
  %0 = fluid.conv2d_grad_input %dy, %w {strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>}
      : (tensor<2x8x5x4xf32>, tensor<8x4x3x3xf32>) -> tensor<2x4x9x7xf32>
  // CHECK: fluid.conv2d_grad_filter %{{.*}}, %{{.*}} {padding = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<2x8x5x4xf32>, tensor<2x4x9x7xf32>) -> tensor<8x4x3x3xf32>
  %1 = fluid.conv2d_grad_filter %dy, %x {strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>}
      : (tensor<2x8x5x4xf32>, tensor<2x4x9x7xf32>) -> tensor<8x4x3x3xf32>
  // CHECK: fluid.batch_norm_grad %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : tensor<2x8x5x5xf32>, tensor<8xf32>
  %2:3 = fluid.batch_norm_grad %bdy, %bx, %c, %c, %c : tensor<2x8x5x5xf32>, tensor<8xf32>
  // CHECK: fluid.relu_grad %{{.*}}, %{{.*}} : tensor<2x8x5x5xf32>
  %3 = fluid.relu_grad %bdy, %bx : tensor<2x8x5x5xf32>
  // CHECK: fluid.sigmoid_grad
  %4 = fluid.sigmoid_grad %bdy, %bx : tensor<2x8x5x5xf32>
  // CHECK: fluid.tanh_grad
  %5 = fluid.tanh_grad %bdy, %bx : tensor<2x8x5x5xf32>
  // CHECK: fluid.max_pool2d_grad %{{.*}}, %{{.*}} {kernel_size = array<i64: 3, 3>, padding = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : tensor<1x3x5x6xf32>, tensor<1x3x10x11xf32>
  %6 = fluid.max_pool2d_grad %pdy, %px {kernel_size = array<i64: 3, 3>, strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>}
      : tensor<1x3x5x6xf32>, tensor<1x3x10x11xf32>
  // CHECK: fluid.max_pool2d_grad_indices %{{.*}}, %{{.*}} {kernel_size = array<i64: 3, 3>, padding = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : tensor<1x3x5x6xf32>, tensor<1x3x5x6xui8> -> tensor<1x3x10x11xf32>
  %from_indices = fluid.max_pool2d_grad_indices %pdy, %pidx {kernel_size = array<i64: 3, 3>, strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>}
      : tensor<1x3x5x6xf32>, tensor<1x3x5x6xui8> -> tensor<1x3x10x11xf32>
  // CHECK: fluid.avg_pool2d_grad %{{.*}} {kernel_size = array<i64: 3, 3>, padding = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : tensor<1x3x5x6xf32> -> tensor<1x3x10x11xf32>
  %7 = fluid.avg_pool2d_grad %pdy {kernel_size = array<i64: 3, 3>, strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>}
      : tensor<1x3x5x6xf32> -> tensor<1x3x10x11xf32>
  // CHECK: fluid.softmax_grad %{{.*}}, %{{.*}} : tensor<4x10xf32>
  %8 = fluid.softmax_grad %l, %l : tensor<4x10xf32>
  // CHECK: fluid.log_softmax_grad %{{.*}}, %{{.*}} {axis = 0 : i64} : tensor<4x10xf32>
  %9 = fluid.log_softmax_grad %l, %l {axis = 0 : i64} : tensor<4x10xf32>
  // CHECK: fluid.softmax_cross_entropy_grad %{{.*}}, %{{.*}}, %{{.*}} : tensor<f32>, tensor<4x10xf32>, tensor<4xi64>
  %10 = fluid.softmax_cross_entropy_grad %g, %l, %lab : tensor<f32>, tensor<4x10xf32>, tensor<4xi64>
  return
}

// The max pooling gradients channels-last: [N, H, W, C] tensors, checked
// against the forward's channels-last shape rule.
// CHECK-LABEL: func.func @pool_grads_channels_last
func.func @pool_grads_channels_last(%dy: tensor<1x5x6x3xf32>, %x: tensor<1x10x11x3xf32>,
                                    %idx: tensor<1x5x6x3xui8>) {
  // CHECK: fluid.max_pool2d_grad %{{.*}}, %{{.*}} {channels_last, kernel_size = array<i64: 3, 3>, padding = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : tensor<1x5x6x3xf32>, tensor<1x10x11x3xf32>
  %0 = fluid.max_pool2d_grad %dy, %x {channels_last, kernel_size = array<i64: 3, 3>, strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>}
      : tensor<1x5x6x3xf32>, tensor<1x10x11x3xf32>
  // CHECK: fluid.max_pool2d_grad_indices %{{.*}}, %{{.*}} {channels_last, kernel_size = array<i64: 3, 3>, padding = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : tensor<1x5x6x3xf32>, tensor<1x5x6x3xui8> -> tensor<1x10x11x3xf32>
  %1 = fluid.max_pool2d_grad_indices %dy, %idx {channels_last, kernel_size = array<i64: 3, 3>, strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>}
      : tensor<1x5x6x3xf32>, tensor<1x5x6x3xui8> -> tensor<1x10x11x3xf32>
  return
}

// CHECK-LABEL: func.func @updates
func.func @updates(%p: tensor<8x4xf32>, %g: tensor<8x4xf32>, %lr: tensor<f32>, %step: tensor<i64>) {
  // CHECK: fluid.sgd %{{.*}}, %{{.*}}, %{{.*}} {weight_decay = 1.000000e-04 : f64} : tensor<8x4xf32>, tensor<f32>
  %0 = fluid.sgd %p, %g, %lr {weight_decay = 1.0e-4 : f64} : tensor<8x4xf32>, tensor<f32>
  // CHECK: fluid.momentum %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {nesterov} : tensor<8x4xf32>, tensor<f32>
  %1:2 = fluid.momentum %p, %g, %p, %lr {nesterov} : tensor<8x4xf32>, tensor<f32>
  // CHECK: fluid.adam %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {decoupled, weight_decay = 1.000000e-02 : f64} : tensor<8x4xf32>, tensor<f32>, tensor<i64>
  %2:3 = fluid.adam %p, %g, %p, %p, %lr, %step {decoupled, weight_decay = 0.01 : f64} : tensor<8x4xf32>, tensor<f32>, tensor<i64>
  return
}

// Grouped updates: lists of parameters, gradients and state, one rate.
// CHECK-LABEL: func.func @groups
// CHECK: %{{.+}}:2 = fluid.sgd_group(%{{.+}}, %{{.+}}), (%{{.+}}, %{{.+}}), %{{.+}} {weight_decay = 1.000000e-04 : f64} : (tensor<16x8xf32>, tensor<16xf32>), tensor<f32>
// CHECK: %{{.+}}:2, %{{.+}}:2 = fluid.momentum_group(%{{.+}}, %{{.+}}), (%{{.+}}, %{{.+}}), (%{{.+}}, %{{.+}}), %{{.+}} {nesterov} : (tensor<16x8xf32>, tensor<16xf32>), tensor<f32>
// CHECK: %{{.+}}, %{{.+}}, %{{.+}} = fluid.adam_group(%{{.+}}), (%{{.+}}), (%{{.+}}), (%{{.+}}), %{{.+}}, %{{.+}} {decoupled} : (tensor<16xf32>), tensor<f32>, tensor<i64>
func.func @groups(%w: tensor<16x8xf32>, %b: tensor<16xf32>, %lr: tensor<f32>, %step: tensor<i64>) -> (tensor<16x8xf32>, tensor<16xf32>, tensor<16xf32>) {
  %p:2 = fluid.sgd_group (%w, %b), (%w, %b), %lr {weight_decay = 1.0e-4 : f64} : (tensor<16x8xf32>, tensor<16xf32>), tensor<f32>
  %q:2, %v:2 = fluid.momentum_group (%p#0, %p#1), (%w, %b), (%w, %b), %lr {nesterov} : (tensor<16x8xf32>, tensor<16xf32>), tensor<f32>
  %r, %m, %s = fluid.adam_group (%q#1), (%b), (%b), (%b), %lr, %step {decoupled} : (tensor<16xf32>), tensor<f32>, tensor<i64>
  return %q#0, %r, %v#1 : tensor<16x8xf32>, tensor<16xf32>, tensor<16xf32>
}

// Dynamic loss scaling: the gradients unscaled and checked, every kind of
// update skipping on the flag.
// CHECK-LABEL: func.func @loss_scaling
// CHECK: %[[U:.+]]:2, %[[F:.+]] = fluid.unscale_grads(%{{.+}}, %{{.+}}), %{{.+}} : (tensor<16x8xf32>, tensor<16xf32>)
// CHECK: fluid.sgd %{{.+}}, %[[U]]#1, %{{.+}} skip_if %[[F]] : tensor<16xf32>, tensor<f32>
// CHECK: fluid.momentum %{{.+}}, %[[U]]#1, %{{.+}}, %{{.+}} skip_if %[[F]] : tensor<16xf32>, tensor<f32>
// CHECK: fluid.adam %{{.+}}, %[[U]]#1, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} skip_if %[[F]] : tensor<16xf32>, tensor<f32>, tensor<i64>
// CHECK: fluid.sgd_group(%{{.+}}, %{{.+}}), (%[[U]]#0, %[[U]]#1), %{{.+}} skip_if %[[F]] : (tensor<16x8xf32>, tensor<16xf32>), tensor<f32>
// CHECK: fluid.momentum_group(%{{.+}}), (%[[U]]#1), (%{{.+}}), %{{.+}} skip_if %[[F]] {momentum = 5.000000e-01 : f64} : (tensor<16xf32>), tensor<f32>
// CHECK: fluid.adam_group(%{{.+}}), (%[[U]]#1), (%{{.+}}), (%{{.+}}), %{{.+}}, %{{.+}} skip_if %[[F]] : (tensor<16xf32>), tensor<f32>, tensor<i64>
func.func @loss_scaling(%w: tensor<16x8xf32>, %b: tensor<16xf32>, %lr: tensor<f32>, %step: tensor<i64>, %scale: tensor<f32>) {
  %u:2, %found = fluid.unscale_grads (%w, %b), %scale : (tensor<16x8xf32>, tensor<16xf32>)
  %0 = fluid.sgd %b, %u#1, %lr skip_if %found : tensor<16xf32>, tensor<f32>
  %1:2 = fluid.momentum %b, %u#1, %b, %lr skip_if %found : tensor<16xf32>, tensor<f32>
  %2:3 = fluid.adam %b, %u#1, %b, %b, %lr, %step skip_if %found : tensor<16xf32>, tensor<f32>, tensor<i64>
  %3:2 = fluid.sgd_group (%w, %b), (%u#0, %u#1), %lr skip_if %found : (tensor<16x8xf32>, tensor<16xf32>), tensor<f32>
  %4, %5 = fluid.momentum_group (%b), (%u#1), (%b), %lr skip_if %found {momentum = 0.5 : f64} : (tensor<16xf32>), tensor<f32>
  %6, %7, %8 = fluid.adam_group (%b), (%u#1), (%b), (%b), %lr, %step skip_if %found : (tensor<16xf32>), tensor<f32>, tensor<i64>
  return
}
