// RUN: fluid-opt %s --fluid-mixed-precision | FileCheck %s
// RUN: fluid-opt %s --fluid-mixed-precision=precision=fp16 | FileCheck %s --check-prefix=F16
// RUN: not fluid-opt %s --fluid-mixed-precision=precision=fp32 2>&1 | FileCheck %s --check-prefix=BAD
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
// CHECK: fluid.matmul %{{.*}}, %{{.*}} : tensor<5x7xbf16>, tensor<7x2xbf16> -> tensor<5x2xbf16>
// CHECK: fluid.matmul %arg4, %arg5 : tensor<4x7xf64>, tensor<7x3xf64> -> tensor<4x3xf64>
// CHECK: return %[[R]]
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
// CHECK: %[[L:.*]] = fluid.linear %{{.*}}, %{{.*}} : tensor<5x7xbf16>, tensor<2x7xbf16> -> tensor<5x2xbf16>
// CHECK: %[[LF:.*]] = fluid.cast %[[L]] : tensor<5x2xbf16> -> tensor<5x2xf32>
// CHECK: %[[LB:.*]] = fluid.add %[[LF]], %arg5 : tensor<5x2xf32>, tensor<2xf32> -> tensor<5x2xf32>
// CHECK: return %[[YB]], %[[LB]]
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
