// The math, gradient and optimizer ops round-trip, and their result types
// are what the forward ops' shape rules say.

func.func @math(%x: tensor<4xf32>, %s: tensor<f32>, %i: tensor<i64>) -> (tensor<4xf32>, tensor<f32>, tensor<4xf32>) {
  %0 = fluid.neg %x : tensor<4xf32>
  %1 = fluid.exp %0 : tensor<4xf32>
  %2 = fluid.log %1 : tensor<4xf32>
  %3 = fluid.cos %2 : tensor<4xf32>
  %4 = fluid.sqrt %3 : tensor<4xf32>
  %5 = fluid.floor %4 : tensor<4xf32>
  %6 = fluid.pow %5, %s : tensor<4xf32>, tensor<f32> -> tensor<4xf32>
  %7 = fluid.minimum %s, %6 : tensor<f32>, tensor<4xf32> -> tensor<4xf32>
  %8 = fluid.maximum %7, %x : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  %9 = fluid.greater_equal %8, %s : tensor<4xf32>, tensor<f32> -> tensor<4xf32>
  %10 = fluid.select %9, %8, %s : tensor<4xf32>, tensor<4xf32>, tensor<f32> -> tensor<4xf32>
  %11 = fluid.cast %i : tensor<i64> -> tensor<f32>
  return %10, %11, %0 : tensor<4xf32>, tensor<f32>, tensor<4xf32>
}

func.func @shapes(%x: tensor<8x64x1x1xf32>, %y: tensor<8x96x7x7xf32>) -> (tensor<8x64x7x7xf32>, tensor<64x1x1xf32>, tensor<8x32x7x7xf32>) {
  %0 = fluid.broadcast_to %x : tensor<8x64x1x1xf32> -> tensor<8x64x7x7xf32>
  %1 = fluid.sum_to %0 : tensor<8x64x7x7xf32> -> tensor<64x1x1xf32>
  %2 = fluid.slice %y {axis = 1 : i64, offset = 64 : i64} : tensor<8x96x7x7xf32> -> tensor<8x32x7x7xf32>
  return %0, %1, %2 : tensor<8x64x7x7xf32>, tensor<64x1x1xf32>, tensor<8x32x7x7xf32>
}

func.func @grads(%dy: tensor<2x8x5x4xf32>, %x: tensor<2x4x9x7xf32>, %w: tensor<8x4x3x3xf32>,
                 %bdy: tensor<2x8x5x5xf32>, %bx: tensor<2x8x5x5xf32>, %c: tensor<8xf32>,
                 %pdy: tensor<1x3x5x6xf32>, %px: tensor<1x3x10x11xf32>,
                 %pidx: tensor<1x3x5x6xui8>,
                 %l: tensor<4x10xf32>, %lab: tensor<4xi64>, %g: tensor<f32>) {
  %0 = fluid.conv2d_grad_input %dy, %w {strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>}
      : (tensor<2x8x5x4xf32>, tensor<8x4x3x3xf32>) -> tensor<2x4x9x7xf32>
  %1 = fluid.conv2d_grad_filter %dy, %x {strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>}
      : (tensor<2x8x5x4xf32>, tensor<2x4x9x7xf32>) -> tensor<8x4x3x3xf32>
  %2:3 = fluid.batch_norm_grad %bdy, %bx, %c, %c, %c : tensor<2x8x5x5xf32>, tensor<8xf32>
  %3 = fluid.relu_grad %bdy, %bx : tensor<2x8x5x5xf32>
  %4 = fluid.sigmoid_grad %bdy, %bx : tensor<2x8x5x5xf32>
  %5 = fluid.tanh_grad %bdy, %bx : tensor<2x8x5x5xf32>
  %6 = fluid.max_pool2d_grad %pdy, %px {kernel_size = array<i64: 3, 3>, strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>}
      : tensor<1x3x5x6xf32>, tensor<1x3x10x11xf32>
  %from_indices = fluid.max_pool2d_grad_indices %pdy, %pidx {kernel_size = array<i64: 3, 3>, strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>}
      : tensor<1x3x5x6xf32>, tensor<1x3x5x6xui8> -> tensor<1x3x10x11xf32>
  %7 = fluid.avg_pool2d_grad %pdy {kernel_size = array<i64: 3, 3>, strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>}
      : tensor<1x3x5x6xf32> -> tensor<1x3x10x11xf32>
  %8 = fluid.softmax_grad %l, %l : tensor<4x10xf32>
  %9 = fluid.log_softmax_grad %l, %l {axis = 0 : i64} : tensor<4x10xf32>
  %10 = fluid.softmax_cross_entropy_grad %g, %l, %lab : tensor<f32>, tensor<4x10xf32>, tensor<4xi64>
  return
}

func.func @updates(%p: tensor<8x4xf32>, %g: tensor<8x4xf32>, %lr: tensor<f32>, %step: tensor<i64>) {
  %0 = fluid.sgd %p, %g, %lr {weight_decay = 1.0e-4 : f64} : tensor<8x4xf32>, tensor<f32>
  %1:2 = fluid.momentum %p, %g, %p, %lr {nesterov} : tensor<8x4xf32>, tensor<f32>
  %2:3 = fluid.adam %p, %g, %p, %p, %lr, %step {decoupled, weight_decay = 0.01 : f64} : tensor<8x4xf32>, tensor<f32>, tensor<i64>
  return
}

// Grouped updates: lists of parameters, gradients and state, one rate.
func.func @groups(%w: tensor<16x8xf32>, %b: tensor<16xf32>, %lr: tensor<f32>, %step: tensor<i64>) -> (tensor<16x8xf32>, tensor<16xf32>, tensor<16xf32>) {
  %p:2 = fluid.sgd_group (%w, %b), (%w, %b), %lr {weight_decay = 1.0e-4 : f64} : (tensor<16x8xf32>, tensor<16xf32>), tensor<f32>
  %q:2, %v:2 = fluid.momentum_group (%p#0, %p#1), (%w, %b), (%w, %b), %lr {nesterov} : (tensor<16x8xf32>, tensor<16xf32>), tensor<f32>
  %r, %m, %s = fluid.adam_group (%q#1), (%b), (%b), (%b), %lr, %step {decoupled} : (tensor<16xf32>), tensor<f32>, tensor<i64>
  return %q#0, %r, %v#1 : tensor<16x8xf32>, tensor<16xf32>, tensor<16xf32>
}
