// Every verifier message of the math, gradient and optimizer ops.
// RUN: fluid-opt %s -split-input-file -verify-diagnostics

func.func @f(%dy: tensor<2x8x5x5xf32>, %w: tensor<8x4x3x3xf32>) {
  // expected-error @+1 {{grad_output has type 'tensor<2x8x5x5xf32>', but the forward op's output would be 'tensor<2x8x5x4xf32>'}}
  %0 = fluid.conv2d_grad_input %dy, %w {strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>}
      : (tensor<2x8x5x5xf32>, tensor<8x4x3x3xf32>) -> tensor<2x4x9x7xf32>
  return
}

// -----

func.func @f(%dy: tensor<2x8x5x4xf32>, %x: tensor<2x4x9x7xf32>) {
  // expected-error @+1 {{'fluid.conv2d_grad_filter' op input has 4 channels but the filter expects 2 per group x 1 groups = 2}}
  %0 = fluid.conv2d_grad_filter %dy, %x {strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>}
      : (tensor<2x8x5x4xf32>, tensor<2x4x9x7xf32>) -> tensor<8x2x3x3xf32>
  return
}

// -----

func.func @f(%dy: tensor<2x8x5x5xf32>, %c: tensor<4xf32>) {
  // expected-error @+1 {{per-channel operands must have shape [8] (the input's channels), got 'tensor<4xf32>'}}
  %0:3 = fluid.batch_norm_grad %dy, %dy, %c, %c, %c : tensor<2x8x5x5xf32>, tensor<4xf32>
  return
}

// -----

func.func @f(%dy: tensor<1x3x5x5xf32>, %x: tensor<1x3x10x11xf32>) {
  // expected-error @+1 {{grad_output has type 'tensor<1x3x5x5xf32>', but the forward op's output would be 'tensor<1x3x5x6xf32>'}}
  %0 = fluid.max_pool2d_grad %dy, %x {kernel_size = array<i64: 3, 3>, strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>}
      : tensor<1x3x5x5xf32>, tensor<1x3x10x11xf32>
  return
}

// -----

func.func @f(%dy: tensor<1x3x5x5xf32>) {
  // expected-error @+1 {{grad_output has type 'tensor<1x3x5x5xf32>', but the forward op's output would be 'tensor<1x3x5x6xf32>'}}
  %0 = fluid.avg_pool2d_grad %dy {kernel_size = array<i64: 3, 3>, strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>}
      : tensor<1x3x5x5xf32> -> tensor<1x3x10x11xf32>
  return
}

// -----

func.func @f(%x: tensor<4x10xf32>) {
  // expected-error @+1 {{'fluid.softmax_grad' op 'axis' 2 is out of range for rank 2}}
  %0 = fluid.softmax_grad %x, %x {axis = 2 : i64} : tensor<4x10xf32>
  return
}

// -----

func.func @f(%g: tensor<4xf32>, %l: tensor<4x10xf32>, %lab: tensor<4xi64>) {
  // expected-error @+1 {{grad_loss has type 'tensor<4xf32>', but the loss has type 'tensor<f32>'}}
  %0 = fluid.softmax_cross_entropy_grad %g, %l, %lab : tensor<4xf32>, tensor<4x10xf32>, tensor<4xi64>
  return
}

// -----

func.func @f(%g: tensor<f32>, %l: tensor<4x10xf32>, %lab: tensor<3xi64>) {
  // expected-error @+1 {{labels have batch size 3 but logits have batch size 4}}
  %0 = fluid.softmax_cross_entropy_grad %g, %l, %lab : tensor<f32>, tensor<4x10xf32>, tensor<3xi64>
  return
}

// -----

func.func @f(%x: tensor<4x3xf32>) {
  // expected-error @+1 {{'tensor<4x3xf32>' does not broadcast to 'tensor<4x5xf32>'}}
  %0 = fluid.broadcast_to %x : tensor<4x3xf32> -> tensor<4x5xf32>
  return
}

// -----

func.func @f(%x: tensor<4x3xf32>) {
  // expected-error @+1 {{cannot change the element type}}
  %0 = fluid.broadcast_to %x : tensor<4x3xf32> -> tensor<4x3xf64>
  return
}

// -----

func.func @f(%x: tensor<4x3xf32>) {
  // expected-error @+1 {{the result 'tensor<2x3xf32>' must broadcast to the input 'tensor<4x3xf32>'}}
  %0 = fluid.sum_to %x : tensor<4x3xf32> -> tensor<2x3xf32>
  return
}

// -----

func.func @f(%x: tensor<4x3xf32>) {
  // expected-error @+1 {{cannot change the element type}}
  %0 = fluid.sum_to %x : tensor<4x3xf32> -> tensor<3xf64>
  return
}

// -----

func.func @f(%x: tensor<4x3xbf16>) {
  // expected-error @+1 {{cannot change the element type (but for a 16-bit input's sum in f32)}}
  %0 = fluid.sum_to %x : tensor<4x3xbf16> -> tensor<3xf16>
  return
}

// -----

func.func @f(%x: tensor<4x6xf32>) {
  // expected-error @+1 {{elements [4, 4 + 3) are outside the input's 6 along axis 1}}
  %0 = fluid.slice %x {axis = 1 : i64, offset = 4 : i64} : tensor<4x6xf32> -> tensor<4x3xf32>
  return
}

// -----

func.func @f(%x: tensor<4x6xf32>) {
  // expected-error @+1 {{'axis' 2 is out of range for rank 2}}
  %0 = fluid.slice %x {axis = 2 : i64, offset = 0 : i64} : tensor<4x6xf32> -> tensor<4x3xf32>
  return
}

// -----

func.func @f(%x: tensor<4x6xf32>) {
  // expected-error @+1 {{the result differs from the input in dimension 0, which is not the axis}}
  %0 = fluid.slice %x {axis = 1 : i64, offset = 0 : i64} : tensor<4x6xf32> -> tensor<3x3xf32>
  return
}

// -----

func.func @f(%x: tensor<4x6xf32>) {
  // expected-error @+1 {{the result must have the input's rank and element type}}
  %0 = fluid.slice %x {axis = 1 : i64, offset = 0 : i64} : tensor<4x6xf32> -> tensor<4x3xi32>
  return
}

// -----

func.func @f(%x: tensor<4xi64>) {
  // expected-error @+1 {{cannot change the shape ('tensor<4xi64>' to 'tensor<2x2xf32>')}}
  %0 = fluid.cast %x : tensor<4xi64> -> tensor<2x2xf32>
  return
}

// -----

func.func @f(%c: tensor<4xf32>, %a: tensor<4xf64>) {
  // expected-error @+2 {{condition and on_true must have the same element type}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = fluid.select %c, %a, %a : tensor<4xf32>, tensor<4xf64>, tensor<4xf64> -> tensor<4xf64>
  return
}

// -----

func.func @f(%p: tensor<4xf32>, %lr: tensor<f64>) {
  // expected-error @+1 {{lr must have the parameter's element type 'f32', got 'f64'}}
  %0 = fluid.sgd %p, %p, %lr : tensor<4xf32>, tensor<f64>
  return
}

// -----

func.func @f(%p: tensor<4xf32>, %lr: tensor<f32>) {
  // expected-error @+1 {{'weight_decay' must be in [0, inf], got -1}}
  %0 = fluid.sgd %p, %p, %lr {weight_decay = -1.0 : f64} : tensor<4xf32>, tensor<f32>
  return
}

// -----

func.func @f(%p: tensor<4xf32>, %lr: tensor<f32>) {
  // expected-error @+1 {{'momentum' must be in [0, 1], got 1.5}}
  %0:2 = fluid.momentum %p, %p, %p, %lr {momentum = 1.5 : f64} : tensor<4xf32>, tensor<f32>
  return
}

// -----

func.func @f(%p: tensor<4xf32>, %lr: tensor<f32>, %step: tensor<2xi64>) {
  // expected-error @+1 {{step must be a tensor<i64>, got 'tensor<2xi64>'}}
  %0:3 = fluid.adam %p, %p, %p, %p, %lr, %step : tensor<4xf32>, tensor<f32>, tensor<2xi64>
  return
}

// -----

func.func @f(%p: tensor<4xf32>, %lr: tensor<f32>, %step: tensor<i64>) {
  // expected-error @+1 {{'beta2' must be in [0, 1], got 2}}
  %0:3 = fluid.adam %p, %p, %p, %p, %lr, %step {beta2 = 2.0 : f64} : tensor<4xf32>, tensor<f32>, tensor<i64>
  return
}

// -----

func.func @f(%p: tensor<4xf32>, %lr: tensor<2xf32>) {
  // expected-error @+1 {{operand #2 must be rank-0 tensor of f16, bf16, f32 or f64}}
  %0 = fluid.sgd %p, %p, %lr : tensor<4xf32>, tensor<2xf32>
  return
}

// -----

// Grouped updates are verified entry by entry.
func.func @f(%p: tensor<4xf32>, %q: tensor<3xf32>, %g: tensor<4xf32>, %lr: tensor<f32>) {
  // expected-error @+1 {{'fluid.sgd_group' op entry 1: grads has type 'tensor<4xf32>', but the parameter is 'tensor<3xf32>'}}
  %0:2 = "fluid.sgd_group"(%p, %q, %g, %g, %lr) <{operandSegmentSizes = array<i32: 2, 2, 1, 0>}> : (tensor<4xf32>, tensor<3xf32>, tensor<4xf32>, tensor<4xf32>, tensor<f32>) -> (tensor<4xf32>, tensor<3xf32>)
  return
}

// -----

func.func @f(%p: tensor<4xf32>, %d: tensor<4xf64>, %lr: tensor<f32>) {
  // expected-error @+1 {{'fluid.sgd_group' op entry 1: the parameter has element type 'f64', but entry 0's is 'f32' (a group has one element type)}}
  %0:2 = "fluid.sgd_group"(%p, %d, %p, %d, %lr) <{operandSegmentSizes = array<i32: 2, 2, 1, 0>}> : (tensor<4xf32>, tensor<4xf64>, tensor<4xf32>, tensor<4xf64>, tensor<f32>) -> (tensor<4xf32>, tensor<4xf64>)
  return
}

// -----

func.func @f(%p: tensor<4xf32>, %lr: tensor<f32>) {
  // expected-error @+2 {{'fluid.momentum_group' op has 6 operands; expected 3 lists of one tensor per parameter and 1 scalar}}
  // A velocity short: the lists must be equally long.
  %0:4 = "fluid.momentum_group"(%p, %p, %p, %p, %p, %lr) <{operandSegmentSizes = array<i32: 2, 2, 1, 1, 0>}> : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<f32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
  return
}

// -----

func.func @f(%lr: tensor<f32>) {
  // expected-error @+1 {{'fluid.sgd_group' op needs at least one parameter}}
  "fluid.sgd_group"(%lr) <{operandSegmentSizes = array<i32: 0, 0, 1, 0>}> : (tensor<f32>) -> ()
  return
}

// -----

func.func @f(%p: tensor<4xf32>, %lr: tensor<f32>) {
  // expected-error @+1 {{'fluid.momentum_group' op entry 0: new_velocities has type 'tensor<5xf32>', but the parameter is 'tensor<4xf32>'}}
  %0:2 = "fluid.momentum_group"(%p, %p, %p, %lr) <{operandSegmentSizes = array<i32: 1, 1, 1, 1, 0>}> : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<f32>) -> (tensor<4xf32>, tensor<5xf32>)
  return
}

// -----

func.func @f(%p: tensor<4xf32>, %lr: tensor<f64>) {
  // expected-error @+1 {{'fluid.momentum_group' op lr must have the parameter's element type 'f32', got 'f64'}}
  %0:2, %1:2 = fluid.momentum_group (%p, %p), (%p, %p), (%p, %p), %lr : (tensor<4xf32>, tensor<4xf32>), tensor<f64>
  return
}

// -----

func.func @f(%p: tensor<4xf32>, %lr: tensor<f32>, %step: tensor<i32>) {
  // expected-error @+1 {{'fluid.adam_group' op step must be a tensor<i64>, got 'tensor<i32>'}}
  %0, %1, %2 = fluid.adam_group (%p), (%p), (%p), (%p), %lr, %step : (tensor<4xf32>), tensor<f32>, tensor<i32>
  return
}

// -----

func.func @f(%p: tensor<4xf32>, %lr: tensor<f32>, %step: tensor<i64>) {
  // expected-error @+1 {{'fluid.adam_group' op 'beta2' must be in [0, 1], got 1.5}}
  %0, %1, %2 = fluid.adam_group (%p), (%p), (%p), (%p), %lr, %step {beta2 = 1.5 : f64} : (tensor<4xf32>), tensor<f32>, tensor<i64>
  return
}

// -----

func.func @f(%dy: tensor<1x3x5x5xf32>, %i: tensor<1x3x5x5xui8>) {
  // expected-error @+1 {{grad_output has type 'tensor<1x3x5x5xf32>', but the forward op's output would be 'tensor<1x3x5x6xf32>'}}
  %0 = fluid.max_pool2d_grad_indices %dy, %i {kernel_size = array<i64: 3, 3>, strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>}
      : tensor<1x3x5x5xf32>, tensor<1x3x5x5xui8> -> tensor<1x3x10x11xf32>
  return
}

// -----

func.func @f(%dy: tensor<1x3x5x6xf32>, %i: tensor<1x3x6x5xui8>) {
  // expected-error @+1 {{indices have type 'tensor<1x3x6x5xui8>', but the forward op's would be 'tensor<1x3x5x6xui8>'}}
  %0 = fluid.max_pool2d_grad_indices %dy, %i {kernel_size = array<i64: 3, 3>, strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>}
      : tensor<1x3x5x6xf32>, tensor<1x3x6x5xui8> -> tensor<1x3x10x11xf32>
  return
}

// -----

func.func @f(%dy: tensor<1x1x1x1xf32>, %i: tensor<1x1x1x1xui8>) {
  // expected-error @+1 {{the kernel 16x17 has more than 256 cells, too many for ui8 indices}}
  %0 = fluid.max_pool2d_grad_indices %dy, %i {kernel_size = array<i64: 16, 17>}
      : tensor<1x1x1x1xf32>, tensor<1x1x1x1xui8> -> tensor<1x1x16x17xf32>
  return
}

// -----

func.func @f(%dy: tensor<1x3x5x6xf32>, %i: tensor<1x3x5x6xi32>) {
  // expected-error @+1 {{operand #1 must be statically shaped tensor of ui8}}
  %0 = fluid.max_pool2d_grad_indices %dy, %i {kernel_size = array<i64: 3, 3>, strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>}
      : tensor<1x3x5x6xf32>, tensor<1x3x5x6xi32> -> tensor<1x3x10x11xf32>
  return
}

// -----

func.func @f(%g: tensor<4xf16>, %scale: tensor<f32>) {
  // expected-error @+1 {{'fluid.unscale_grads' op entry 0: gradient of type 'tensor<4xf16>'; expected f32 or f64 (master gradients)}}
  %u, %found = fluid.unscale_grads (%g), %scale : (tensor<4xf16>)
  return
}

// -----

func.func @f(%g: tensor<4xf32>, %d: tensor<2xf64>, %scale: tensor<f32>) {
  // expected-error @+1 {{'fluid.unscale_grads' op entry 1: the gradient has element type 'f64', but entry 0's is 'f32' (one element type per op)}}
  %u:2, %found = fluid.unscale_grads (%g, %d), %scale : (tensor<4xf32>, tensor<2xf64>)
  return
}

// -----

func.func @f(%g: tensor<4xf32>, %scale: tensor<f64>) {
  // expected-error @+1 {{'fluid.unscale_grads' op operand #1 must be tensor<f32>, but got 'tensor<f64>'}}
  %u, %found = "fluid.unscale_grads"(%g, %scale) : (tensor<4xf32>, tensor<f64>) -> (tensor<4xf32>, tensor<f32>)
  return
}

// -----

func.func @f(%scale: tensor<f32>) {
  // expected-error @+1 {{'fluid.unscale_grads' op needs at least one gradient}}
  %found = "fluid.unscale_grads"(%scale) : (tensor<f32>) -> (tensor<f32>)
  return
}

// -----

func.func @f(%g: tensor<4xf32>, %scale: tensor<f32>) {
  // expected-error @+1 {{'fluid.unscale_grads' op entry 0: unscaled has type 'tensor<5xf32>', but the gradient is 'tensor<4xf32>'}}
  %u, %found = "fluid.unscale_grads"(%g, %scale) : (tensor<4xf32>, tensor<f32>) -> (tensor<5xf32>, tensor<f32>)
  return
}

// -----

// The skip flag is a tensor<f32>.
func.func @f(%p: tensor<4xf32>, %lr: tensor<f32>, %flag: tensor<i64>) {
  // expected-error @+1 {{'fluid.sgd' op operand #3 must be tensor<f32>, but got 'tensor<i64>'}}
  %0 = "fluid.sgd"(%p, %p, %lr, %flag) : (tensor<4xf32>, tensor<4xf32>, tensor<f32>, tensor<i64>) -> tensor<4xf32>
  return
}

// -----

func.func @f(%dy: tensor<1x3x5x6xf32>, %x: tensor<1x10x11x3xf32>) {
  // expected-error @+1 {{grad_output has type 'tensor<1x3x5x6xf32>', but the forward op's output would be 'tensor<1x5x6x3xf32>'}}
  %0 = fluid.max_pool2d_grad %dy, %x {channels_last, kernel_size = array<i64: 3, 3>, strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>}
      : tensor<1x3x5x6xf32>, tensor<1x10x11x3xf32>
  return
}

// -----

func.func @f(%dy: tensor<5x6x3xf32>, %x: tensor<10x11x3xf32>) {
  // expected-error @+1 {{input must have rank 4 (NHWC), got 'tensor<10x11x3xf32>'}}
  %0 = fluid.max_pool2d_grad %dy, %x {channels_last, kernel_size = array<i64: 3, 3>, strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>}
      : tensor<5x6x3xf32>, tensor<10x11x3xf32>
  return
}

// -----

func.func @f(%dy: tensor<1x5x6x3xf32>, %i: tensor<1x3x5x6xui8>) {
  // expected-error @+1 {{indices have type 'tensor<1x3x5x6xui8>', but the forward op's would be 'tensor<1x5x6x3xui8>'}}
  %0 = fluid.max_pool2d_grad_indices %dy, %i {channels_last, kernel_size = array<i64: 3, 3>, strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>}
      : tensor<1x5x6x3xf32>, tensor<1x3x5x6xui8> -> tensor<1x10x11x3xf32>
  return
}

// -----

func.func @f(%i: tensor<4xi64>) {
  // expected-error @+1 {{'fluid.erf' op operand #0 must be statically shaped tensor of f16, bf16, f32 or f64}}
  %0 = fluid.erf %i : tensor<4xi64>
  return
}

// -----

func.func @f(%x: tensor<4xf32>) {
  // expected-error @+1 {{'fluid.erf' op requires the same type for all operands and results}}
  %0 = "fluid.erf"(%x) : (tensor<4xf32>) -> tensor<4xf64>
  return
}

// -----

func.func @f(%dy: tensor<4x3xf32>, %i: tensor<4xi64>) {
  // expected-error @+1 {{'fluid.gather_grad' op grad_output has type 'tensor<4x3xf32>', but the forward op's output would be 'tensor<5x4xf32>'}}
  %0 = fluid.gather_grad %dy, %i {axis = 1 : i64} : (tensor<4x3xf32>, tensor<4xi64>) -> tensor<5x3xf32>
  return
}

// -----

func.func @f(%dy: tensor<4x3xf32>, %i: tensor<4xi64>) {
  // expected-error @+1 {{'axis' -3 is out of range for rank 2 (expected -2 to 1)}}
  %0 = fluid.gather_grad %dy, %i {axis = -3 : i64} : (tensor<4x3xf32>, tensor<4xi64>) -> tensor<5x3xf32>
  return
}

// -----

func.func @f(%dy: tensor<4x3xi64>, %i: tensor<4xi64>) {
  // expected-error @+1 {{'fluid.gather_grad' op operand #0 must be statically shaped tensor of f16, bf16, f32 or f64}}
  %0 = "fluid.gather_grad"(%dy, %i) {axis = 0 : i64} : (tensor<4x3xi64>, tensor<4xi64>) -> tensor<5x3xi64>
  return
}

// -----

func.func @f(%dy: tensor<2x3xf32>) {
  %i = fluid.constant dense<[1, 5]> : tensor<2xi64>
  // expected-error @+1 {{'fluid.gather_grad' op index 5 (element 1 of the indices) is outside [0, 5), the size of axis 0}}
  %0 = fluid.gather_grad %dy, %i {axis = 0 : i64} : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<5x3xf32>
  return
}
