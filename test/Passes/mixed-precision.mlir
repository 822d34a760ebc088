// RUN: fluid-opt %s --fluid-mixed-precision | FileCheck %s
// RUN: fluid-opt %s --fluid-mixed-precision=precision=fp16 | FileCheck %s --check-prefix=F16
// RUN: not fluid-opt %s --fluid-mixed-precision=precision=fp32 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: fluid-opt %s --fluid-mixed-precision=store-activations=false | FileCheck %s --check-prefix=WIDE
// The gradients: a cast's is the cast back, so the backward convolutions
// run in bf16 and the parameter's gradient reaches the optimizer in f32.
// RUN: fluid-opt %S/Inputs/mixed-precision-train.mlir --fluid-mixed-precision '--fluid-build-training=optimizer=sgd lr=0.1' | FileCheck %s --check-prefix=TRAIN

// Convolutions and products of f32 tensors run on bf16 casts, their
// results cast back to f32; f64 ones are left alone, as is everything
// else.
// CHECK-LABEL: func.func @f
// CHECK: %[[X:.*]] = fluid.cast %arg0 : tensor<2x3x8x8xf32> -> tensor<2x3x8x8xbf16>
// CHECK: %[[W:.*]] = fluid.cast %arg1 : tensor<4x3x3x3xf32> -> tensor<4x3x3x3xbf16>
// CHECK: %[[Y:.*]] = fluid.conv2d %[[X]], %[[W]] {padding = array<i64: 1, 1, 1, 1>} : (tensor<2x3x8x8xbf16>, tensor<4x3x3x3xbf16>) -> tensor<2x4x8x8xbf16>
// CHECK: %[[YF:.*]] = fluid.cast %[[Y]] : tensor<2x4x8x8xbf16> -> tensor<2x4x8x8xf32>
// CHECK: %[[R:.*]] = fluid.relu %[[YF]] : tensor<2x4x8x8xf32>
// An activation is stored in 16 bits, read through the exact widening.
// CHECK-NEXT: %[[R16:.*]] = fluid.cast %[[R]] : tensor<2x4x8x8xf32> -> tensor<2x4x8x8xbf16>
// CHECK-NEXT: %[[RW:.*]] = fluid.cast %[[R16]] : tensor<2x4x8x8xbf16> -> tensor<2x4x8x8xf32>
// CHECK: fluid.matmul %{{.*}}, %{{.*}} : tensor<5x7xbf16>, tensor<7x2xbf16> -> tensor<5x2xbf16>
// CHECK: fluid.matmul %arg4, %arg5 : tensor<4x7xf64>, tensor<7x3xf64> -> tensor<4x3xf64>
// CHECK: return %[[RW]]
// Without store-activations, only the tensor-core inputs are 16-bit.
// WIDE-LABEL: func.func @f
// WIDE: %[[R:.*]] = fluid.relu %{{.*}} : tensor<2x4x8x8xf32>
// WIDE-NOT: fluid.cast %[[R]]
// WIDE: return %[[R]]
// F16: fluid.conv2d %{{.*}} : (tensor<2x3x8x8xf16>, tensor<4x3x3x3xf16>) -> tensor<2x4x8x8xf16>
// F16: fluid.matmul %{{.*}} : tensor<5x7xf16>, tensor<7x2xf16> -> tensor<5x2xf16>
// BAD: error: --fluid-mixed-precision: precision must be bf16 or fp16, got 'fp32'
func.func @f(%x: tensor<2x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %a: tensor<5x7xf32>, %b: tensor<7x2xf32>, %i: tensor<4x7xf64>, %j: tensor<7x3xf64>) -> (tensor<2x4x8x8xf32>, tensor<5x2xf32>, tensor<4x3xf64>) {
  %y = fluid.conv2d %x, %w {padding = array<i64: 1, 1, 1, 1>} : (tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<2x4x8x8xf32>
  %r = fluid.relu %y : tensor<2x4x8x8xf32>
  %m = fluid.matmul %a, %b : tensor<5x7xf32>, tensor<7x2xf32> -> tensor<5x2xf32>
  %d = fluid.matmul %i, %j : tensor<4x7xf64>, tensor<7x3xf64> -> tensor<4x3xf64>
  return %r, %m, %d : tensor<2x4x8x8xf32>, tensor<5x2xf32>, tensor<4x3xf64>
}

// A bias is added after the cast back, in f32: reshaped to [O, 1, 1] for a
// convolution, as it is for a linear layer.
// CHECK-LABEL: func.func @biases
// CHECK: %[[Y:.*]] = fluid.conv2d %{{.*}}, %{{.*}} {padding = array<i64: 1, 1, 1, 1>} : (tensor<2x3x8x8xbf16>, tensor<4x3x3x3xbf16>) -> tensor<2x4x8x8xbf16>
// CHECK: %[[YF:.*]] = fluid.cast %[[Y]] : tensor<2x4x8x8xbf16> -> tensor<2x4x8x8xf32>
// CHECK: %[[B:.*]] = fluid.reshape %arg2 : tensor<4xf32> -> tensor<4x1x1xf32>
// CHECK: %[[YB:.*]] = fluid.add %[[YF]], %[[B]] : tensor<2x4x8x8xf32>, tensor<4x1x1xf32> -> tensor<2x4x8x8xf32>
// (The biased convolution's output, which the function returns rather
// than one elementwise op reading it, is stored in 16 bits; the linear
// layer's, of rank 2, is not.)
// CHECK-NEXT: %[[YB16:.*]] = fluid.cast %[[YB]] : tensor<2x4x8x8xf32> -> tensor<2x4x8x8xbf16>
// CHECK-NEXT: %[[YBW:.*]] = fluid.cast %[[YB16]]
// CHECK: %[[L:.*]] = fluid.linear %{{.*}}, %{{.*}} : tensor<5x7xbf16>, tensor<2x7xbf16> -> tensor<5x2xbf16>
// CHECK: %[[LF:.*]] = fluid.cast %[[L]] : tensor<5x2xbf16> -> tensor<5x2xf32>
// CHECK: %[[LB:.*]] = fluid.add %[[LF]], %arg5 : tensor<5x2xf32>, tensor<2xf32> -> tensor<5x2xf32>
// CHECK: return %[[YBW]], %[[LB]]
func.func @biases(%x: tensor<2x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<4xf32>, %a: tensor<5x7xf32>, %lw: tensor<2x7xf32>, %lb: tensor<2xf32>) -> (tensor<2x4x8x8xf32>, tensor<5x2xf32>) {
  %y = fluid.conv2d %x, %w, %b {padding = array<i64: 1, 1, 1, 1>} : (tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<2x4x8x8xf32>
  %l = fluid.linear %a, %lw, %lb : tensor<5x7xf32>, tensor<2x7xf32>, tensor<2xf32> -> tensor<5x2xf32>
  return %y, %l : tensor<2x4x8x8xf32>, tensor<5x2xf32>
}

// TRAIN-LABEL: func.func @loss
// TRAIN: %[[W:.*]] = fluid.get_param @conv.weight : tensor<4x3x3x3xf32>
// TRAIN: %[[X16:.*]] = fluid.cast %arg0 : tensor<2x3x8x8xf32> -> tensor<2x3x8x8xbf16>
// TRAIN: %[[W16:.*]] = fluid.cast %[[W]] : tensor<4x3x3x3xf32> -> tensor<4x3x3x3xbf16>
// TRAIN: fluid.conv2d %[[X16]], %[[W16]]
// TRAIN: %[[DY16:.*]] = fluid.cast %{{.*}} : tensor<2x4x8x8xf32> -> tensor<2x4x8x8xbf16>
// TRAIN: %[[DW16:.*]] = fluid.conv2d_grad_filter %[[DY16]], %[[X16]] {{.*}} -> tensor<4x3x3x3xbf16>
// TRAIN: %[[DW:.*]] = fluid.cast %[[DW16]] : tensor<4x3x3x3xbf16> -> tensor<4x3x3x3xf32>
// TRAIN: %[[NEW:.*]] = fluid.sgd %{{.*}}, %[[DW]], %{{.*}} : tensor<4x3x3x3xf32>
// TRAIN: fluid.set_param @conv.weight, %[[NEW]] : tensor<4x3x3x3xf32>

// A stored activation's gradient rule reads the 16-bit copy (through its
// widening), never the f32 value: relu_grad reads the widened copy, so only
// the bf16 one is kept for the backward pass. The gradient of a 16-bit
// value is summed in f32, so the one flowing back through the two casts is
// not rounded: the pool's gradient reaches relu_grad as it is.
// RUN: fluid-opt %s --fluid-mixed-precision '--fluid-build-training=optimizer=sgd lr=0.1 func=relu_loss' | FileCheck %s --check-prefix=STORED
// STORED-LABEL: func.func @relu_loss
// STORED: %[[R:.*]] = fluid.relu %{{.*}} : tensor<2x4x8x8xf32>
// STORED-NEXT: %[[R16:.*]] = fluid.cast %[[R]] : tensor<2x4x8x8xf32> -> tensor<2x4x8x8xbf16>
// STORED-NEXT: %[[RW:.*]] = fluid.cast %[[R16]] : tensor<2x4x8x8xbf16> -> tensor<2x4x8x8xf32>
// STORED-NOT: %[[R]]
// STORED: %[[DY:.*]] = fluid.div %{{.*}} : tensor<2x4x8x8xf32>, tensor<f32> -> tensor<2x4x8x8xf32>
// STORED-NEXT: fluid.relu_grad %[[DY]], %[[RW]] : tensor<2x4x8x8xf32>
// STORED-NOT: %[[R]]
// STORED: return
fluid.param @rw : tensor<4x3x3x3xf32> init ones
func.func @relu_loss(%x: tensor<2x3x8x8xf32>, %labels: tensor<2xi64>) -> tensor<f32> {
  %w = fluid.get_param @rw : tensor<4x3x3x3xf32>
  %c = fluid.conv2d %x, %w {padding = array<i64: 1, 1, 1, 1>} : (tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<2x4x8x8xf32>
  %r = fluid.relu %c : tensor<2x4x8x8xf32>
  %p = fluid.global_avg_pool %r : tensor<2x4x8x8xf32> -> tensor<2x4x1x1xf32>
  %f = fluid.flatten %p : tensor<2x4x1x1xf32> -> tensor<2x4xf32>
  %l = fluid.softmax_cross_entropy %f, %labels : tensor<2x4xf32>, tensor<2xi64> -> tensor<f32>
  return %l : tensor<f32>
}

// A stored value that two convolutions read (a max pool's output): the
// gradients of its 16-bit copy, two bf16 grad_inputs, are widened and
// summed in f32, and that sum goes through the casts to the pool's
// gradient unrounded. The copy's widening, which no op reads (the convs
// read the 16-bit copy; the pool's gradient reads no activation), is gone.
// RUN: fluid-opt %s --fluid-mixed-precision '--fluid-build-training=optimizer=sgd lr=0.1 func=fork_loss' | FileCheck %s --check-prefix=FORK
// FORK-LABEL: func.func @fork_loss
// FORK: %[[P:.*]] = fluid.max_pool2d %{{.*}} -> tensor<2x4x4x4xf32>
// FORK-NEXT: %[[P16:.*]] = fluid.cast %[[P]] : tensor<2x4x4x4xf32> -> tensor<2x4x4x4xbf16>
// FORK-NOT: fluid.cast %[[P16]]
// FORK: %[[GA:.*]] = fluid.conv2d_grad_input %{{.*}} -> tensor<2x4x4x4xbf16>
// FORK-NEXT: %[[GAW:.*]] = fluid.cast %[[GA]] : tensor<2x4x4x4xbf16> -> tensor<2x4x4x4xf32>
// FORK: %[[GB:.*]] = fluid.conv2d_grad_input %{{.*}} -> tensor<2x4x4x4xbf16>
// FORK-NEXT: %[[GBW:.*]] = fluid.cast %[[GB]] : tensor<2x4x4x4xbf16> -> tensor<2x4x4x4xf32>
// FORK-NEXT: %[[SUM:.*]] = fluid.add %[[GAW]], %[[GBW]] : tensor<2x4x4x4xf32>, tensor<2x4x4x4xf32> -> tensor<2x4x4x4xf32>
// FORK-NOT: fluid.cast %[[SUM]]
// FORK: fluid.max_pool2d_grad %[[SUM]], %{{.*}} {{.*}} : tensor<2x4x4x4xf32>, tensor<2x4x8x8xf32>
fluid.param @fw1 : tensor<4x3x3x3xf32> init ones
fluid.param @fw2 : tensor<4x4x1x1xf32> init ones
fluid.param @fw3 : tensor<4x4x1x1xf32> init ones
func.func @fork_loss(%x: tensor<2x3x8x8xf32>, %labels: tensor<2xi64>) -> tensor<f32> {
  %w1 = fluid.get_param @fw1 : tensor<4x3x3x3xf32>
  %w2 = fluid.get_param @fw2 : tensor<4x4x1x1xf32>
  %w3 = fluid.get_param @fw3 : tensor<4x4x1x1xf32>
  %c = fluid.conv2d %x, %w1 {padding = array<i64: 1, 1, 1, 1>} : (tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<2x4x8x8xf32>
  %p = fluid.max_pool2d %c {kernel_size = array<i64: 2, 2>, strides = array<i64: 2, 2>} : tensor<2x4x8x8xf32> -> tensor<2x4x4x4xf32>
  %a = fluid.conv2d %p, %w2 : (tensor<2x4x4x4xf32>, tensor<4x4x1x1xf32>) -> tensor<2x4x4x4xf32>
  %b = fluid.conv2d %p, %w3 : (tensor<2x4x4x4xf32>, tensor<4x4x1x1xf32>) -> tensor<2x4x4x4xf32>
  %s = fluid.add %a, %b : tensor<2x4x4x4xf32>, tensor<2x4x4x4xf32> -> tensor<2x4x4x4xf32>
  %g = fluid.global_avg_pool %s : tensor<2x4x4x4xf32> -> tensor<2x4x1x1xf32>
  %f = fluid.flatten %g : tensor<2x4x1x1xf32> -> tensor<2x4xf32>
  %l = fluid.softmax_cross_entropy %f, %labels : tensor<2x4xf32>, tensor<2xi64> -> tensor<f32>
  return %l : tensor<f32>
}
