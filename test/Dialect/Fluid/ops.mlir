// Every op of the dialect, printed, parsed again and printed again: the two
// printouts must be identical, and each must match what is written here.
// RUN: fluid-opt %s | fluid-opt | FileCheck %s --enable-var-scope
// RUN: fluid-opt %s --mlir-print-op-generic | fluid-opt | FileCheck %s --enable-var-scope
// RUN: fluid-opt %s --verify-roundtrip -o /dev/null

// CHECK-LABEL: fluid.param @conv.weight : tensor<8x4x3x3xf32> init kaiming_normal(fan_out, gain = 1.4142135623730951)
fluid.param @conv.weight : tensor<8x4x3x3xf32> init kaiming_normal(fan_out, gain = 1.4142135623730951)
// CHECK: fluid.param @conv.bias : tensor<8xf32> init zeros {decay_mult = 0.000000e+00 : f64, lr_mult = 2.000000e+00 : f64}
fluid.param @conv.bias : tensor<8xf32> init zeros {lr_mult = 2.0 : f64, decay_mult = 0.0 : f64}
// CHECK: fluid.param @bn.weight : tensor<8xf32> init ones
fluid.param @bn.weight : tensor<8xf32> init ones
// CHECK: fluid.param @bn.bias : tensor<8xf32> init constant(5.000000e-01)
fluid.param @bn.bias : tensor<8xf32> init constant(0.5)
// CHECK: fluid.param @bn.running_mean : tensor<8xf32> init zeros {trainable = false}
fluid.param @bn.running_mean : tensor<8xf32> init zeros {trainable = false}
// CHECK: fluid.param @bn.running_var : tensor<8xf32> init ones {trainable = false}
fluid.param @bn.running_var : tensor<8xf32> init ones {trainable = false}
// CHECK: fluid.param @fc.weight : tensor<10x32xf32> init kaiming_uniform(fan_in, gain = 0.44721359549995793)
fluid.param @fc.weight : tensor<10x32xf32> init kaiming_uniform(fan_in, gain = 0.44721359549995793)
// CHECK: fluid.param @fc.bias : tensor<10xf32> init uniform(-0.17677669529663687, 0.17677669529663687)
fluid.param @fc.bias : tensor<10xf32> init uniform(-0.17677669529663687, 0.17677669529663687)
// CHECK: fluid.param @proj.weight : tensor<16x10xf64> init xavier_uniform(gain = 1.000000e+00)
fluid.param @proj.weight : tensor<16x10xf64> init xavier_uniform(gain = 1.0)
// CHECK: fluid.param @head : tensor<4x4xf32> init normal(std = 1.000000e-02)
fluid.param @head : tensor<4x4xf32> init normal(std = 0.01)
// CHECK: fluid.param @step : tensor<i64> init zeros {trainable = false}
fluid.param @step : tensor<i64> init zeros {trainable = false}

// CHECK-LABEL: func.func @params
func.func @params() -> tensor<8x4x3x3xf32> {
  // CHECK: %[[W:.*]] = fluid.get_param @conv.weight : tensor<8x4x3x3xf32>
  %w = fluid.get_param @conv.weight : tensor<8x4x3x3xf32>
  // CHECK: fluid.set_param @conv.weight, %[[W]] : tensor<8x4x3x3xf32>
  fluid.set_param @conv.weight, %w : tensor<8x4x3x3xf32>
  return %w : tensor<8x4x3x3xf32>
}

// CHECK-LABEL: func.func @constants
func.func @constants() -> (tensor<f32>, tensor<2xf32>, tensor<3xi64>) {
  // CHECK: fluid.constant dense<1.000000e-01> : tensor<f32>
  %s = fluid.constant dense<0.1> : tensor<f32>
  // CHECK: fluid.constant dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>
  %t = fluid.constant dense<[1.0, 2.0]> : tensor<2xf32>
  // CHECK: fluid.constant dense<[0, 1, 2]> : tensor<3xi64>
  %i = fluid.constant dense<[0, 1, 2]> : tensor<3xi64>
  return %s, %t, %i : tensor<f32>, tensor<2xf32>, tensor<3xi64>
}

// CHECK-LABEL: func.func @conv
func.func @conv(%x: tensor<2x4x9x7xf32>, %w: tensor<8x4x3x3xf32>, %b: tensor<8xf32>,
                %gw: tensor<8x1x3x3xf32>) -> (tensor<2x8x5x4xf32>, tensor<2x8x9x7xf32>, tensor<2x8x4x2xf32>) {
  // CHECK: fluid.conv2d %{{.*}}, %{{.*}}, %{{.*}} {padding = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<2x4x9x7xf32>, tensor<8x4x3x3xf32>, tensor<8xf32>) -> tensor<2x8x5x4xf32>
  %0 = fluid.conv2d %x, %w, %b {strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>}
      : (tensor<2x4x9x7xf32>, tensor<8x4x3x3xf32>, tensor<8xf32>) -> tensor<2x8x5x4xf32>
  // CHECK: fluid.conv2d %{{.*}}, %{{.*}} {dilation = array<i64: 2, 2>, padding = array<i64: 2, 2, 2, 2>} : (tensor<2x4x9x7xf32>, tensor<8x4x3x3xf32>) -> tensor<2x8x9x7xf32>
  %1 = fluid.conv2d %x, %w {dilation = array<i64: 2, 2>, padding = array<i64: 2, 2, 2, 2>}
      : (tensor<2x4x9x7xf32>, tensor<8x4x3x3xf32>) -> tensor<2x8x9x7xf32>
  // Grouped (depthwise-multiplier 2), asymmetric padding.
  // CHECK: fluid.conv2d %{{.*}}, %{{.*}} {groups = 4 : i64, padding = array<i64: 0, 1, 1, 0>, strides = array<i64: 2, 3>} : (tensor<2x4x9x7xf32>, tensor<8x1x3x3xf32>) -> tensor<2x8x4x2xf32>
  %2 = fluid.conv2d %x, %gw {groups = 4 : i64, padding = array<i64: 0, 1, 1, 0>, strides = array<i64: 2, 3>}
      : (tensor<2x4x9x7xf32>, tensor<8x1x3x3xf32>) -> tensor<2x8x4x2xf32>
  return %0, %1, %2 : tensor<2x8x5x4xf32>, tensor<2x8x9x7xf32>, tensor<2x8x4x2xf32>
}

// CHECK-LABEL: func.func @batch_norm
func.func @batch_norm(%x: tensor<2x8x5x5xf32>, %g: tensor<8xf32>, %b: tensor<8xf32>,
                      %m: tensor<8xf32>, %v: tensor<8xf32>, %f: tensor<4x8xf64>, %c: tensor<8xf64>)
    -> (tensor<2x8x5x5xf32>, tensor<8xf32>, tensor<2x8x5x5xf32>, tensor<4x8xf64>) {
  // CHECK: %[[Y:.*]], %[[MEAN:.*]], %[[INV_STD:.*]], %[[RM:.*]], %[[RV:.*]] = fluid.batch_norm %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {epsilon = 1.000000e-03 : f64, momentum = 0.010000000000000002 : f64} : tensor<2x8x5x5xf32>, tensor<8xf32>
  %y, %mean, %inv_std, %rm, %rv = fluid.batch_norm %x, %g, %b, %m, %v {epsilon = 1.0e-3 : f64, momentum = 0.010000000000000002 : f64}
      : tensor<2x8x5x5xf32>, tensor<8xf32>
  // CHECK: fluid.batch_norm %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : tensor<4x8xf64>, tensor<8xf64>
  %y2:5 = fluid.batch_norm %f, %c, %c, %c, %c : tensor<4x8xf64>, tensor<8xf64>
  // CHECK: fluid.batch_norm_inference %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : tensor<2x8x5x5xf32>, tensor<8xf32>
  %z = fluid.batch_norm_inference %x, %g, %b, %m, %v : tensor<2x8x5x5xf32>, tensor<8xf32>
  return %y, %rv, %z, %y2#0 : tensor<2x8x5x5xf32>, tensor<8xf32>, tensor<2x8x5x5xf32>, tensor<4x8xf64>
}

// CHECK-LABEL: func.func @batch_norm_apply
func.func @batch_norm_apply(%x: tensor<2x8x5x5xf32>, %g: tensor<8xf32>, %b: tensor<8xf32>,
                            %m: tensor<8xf32>, %v: tensor<8xf32>, %f: tensor<4x8xf64>, %c: tensor<8xf64>)
    -> (tensor<2x8x5x5xf32>, tensor<4x8xf64>) {
  // CHECK: %[[Y:.*]], %[[MEAN:.*]], %[[INV_STD:.*]], %{{.*}}, %{{.*}} = fluid.batch_norm
  %y, %mean, %inv_std, %rm, %rv = fluid.batch_norm %x, %g, %b, %m, %v : tensor<2x8x5x5xf32>, tensor<8xf32>
  // CHECK: fluid.batch_norm_apply %{{.*}}, %{{.*}}, %{{.*}}, %[[MEAN]], %[[INV_STD]] : tensor<2x8x5x5xf32>, tensor<8xf32>
  %z = fluid.batch_norm_apply %x, %g, %b, %mean, %inv_std : tensor<2x8x5x5xf32>, tensor<8xf32>
  // CHECK: fluid.batch_norm_apply %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : tensor<4x8xf64>, tensor<8xf64>
  %w = fluid.batch_norm_apply %f, %c, %c, %c, %c : tensor<4x8xf64>, tensor<8xf64>
  return %z, %w : tensor<2x8x5x5xf32>, tensor<4x8xf64>
}

// CHECK-LABEL: func.func @elementwise
func.func @elementwise(%a: tensor<2x3x4xf32>, %b: tensor<3x1xf32>, %s: tensor<f32>)
    -> (tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<2x3x4xf32>) {
  // CHECK: fluid.relu %{{.*}} : tensor<2x3x4xf32>
  %0 = fluid.relu %a : tensor<2x3x4xf32>
  // CHECK: fluid.sigmoid %{{.*}} : tensor<2x3x4xf32>
  %1 = fluid.sigmoid %0 : tensor<2x3x4xf32>
  // CHECK: fluid.tanh %{{.*}} : tensor<2x3x4xf32>
  %2 = fluid.tanh %1 : tensor<2x3x4xf32>
  // CHECK: fluid.add %{{.*}}, %{{.*}} : tensor<2x3x4xf32>, tensor<3x1xf32> -> tensor<2x3x4xf32>
  %3 = fluid.add %2, %b : tensor<2x3x4xf32>, tensor<3x1xf32> -> tensor<2x3x4xf32>
  // CHECK: fluid.sub %{{.*}}, %{{.*}} : tensor<3x1xf32>, tensor<2x3x4xf32> -> tensor<2x3x4xf32>
  %4 = fluid.sub %b, %3 : tensor<3x1xf32>, tensor<2x3x4xf32> -> tensor<2x3x4xf32>
  // CHECK: fluid.mul %{{.*}}, %{{.*}} : tensor<2x3x4xf32>, tensor<f32> -> tensor<2x3x4xf32>
  %5 = fluid.mul %4, %s : tensor<2x3x4xf32>, tensor<f32> -> tensor<2x3x4xf32>
  // CHECK: fluid.div %{{.*}}, %{{.*}} : tensor<f32>, tensor<2x3x4xf32> -> tensor<2x3x4xf32>
  %6 = fluid.div %s, %5 : tensor<f32>, tensor<2x3x4xf32> -> tensor<2x3x4xf32>
  return %3, %4, %5, %6 : tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<2x3x4xf32>
}

// CHECK-LABEL: func.func @pooling
func.func @pooling(%x: tensor<1x3x10x11xf32>)
    -> (tensor<1x3x5x6xf32>, tensor<1x3x5x6xf32>, tensor<1x3x4x6xf32>, tensor<1x3x1x1xf32>) {
  // CHECK: fluid.max_pool2d %{{.*}} {kernel_size = array<i64: 3, 3>, padding = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : tensor<1x3x10x11xf32> -> tensor<1x3x5x6xf32>
  %0 = fluid.max_pool2d %x {kernel_size = array<i64: 3, 3>, strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>}
      : tensor<1x3x10x11xf32> -> tensor<1x3x5x6xf32>
  // CHECK: fluid.max_pool2d %{{.*}} {ceil_mode, dilation = array<i64: 2, 1>, kernel_size = array<i64: 2, 2>, strides = array<i64: 2, 2>} : tensor<1x3x10x11xf32> -> tensor<1x3x5x6xf32>
  %1 = fluid.max_pool2d %x {kernel_size = array<i64: 2, 2>, strides = array<i64: 2, 2>, dilation = array<i64: 2, 1>, ceil_mode}
      : tensor<1x3x10x11xf32> -> tensor<1x3x5x6xf32>
  // CHECK: %{{.*}}, %{{.*}} = fluid.max_pool2d_with_indices %{{.*}} {ceil_mode, kernel_size = array<i64: 3, 3>, padding = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : tensor<1x3x10x11xf32> -> tensor<1x3x6x6xf32>, tensor<1x3x6x6xui8>
  %y, %idx = fluid.max_pool2d_with_indices %x {kernel_size = array<i64: 3, 3>, strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>, ceil_mode}
      : tensor<1x3x10x11xf32> -> tensor<1x3x6x6xf32>, tensor<1x3x6x6xui8>
  // CHECK: fluid.avg_pool2d %{{.*}} {count_include_pad, kernel_size = array<i64: 3, 3>, padding = array<i64: 1, 1, 1, 1>, strides = array<i64: 3, 2>} : tensor<1x3x10x11xf32> -> tensor<1x3x4x6xf32>
  %2 = fluid.avg_pool2d %x {kernel_size = array<i64: 3, 3>, strides = array<i64: 3, 2>, padding = array<i64: 1, 1, 1, 1>, count_include_pad}
      : tensor<1x3x10x11xf32> -> tensor<1x3x4x6xf32>
  // CHECK: fluid.global_avg_pool %{{.*}} : tensor<1x3x10x11xf32> -> tensor<1x3x1x1xf32>
  %3 = fluid.global_avg_pool %x : tensor<1x3x10x11xf32> -> tensor<1x3x1x1xf32>
  return %0, %1, %2, %3 : tensor<1x3x5x6xf32>, tensor<1x3x5x6xf32>, tensor<1x3x4x6xf32>, tensor<1x3x1x1xf32>
}

// Channels-last max pooling: [N, H, W, C] in and out; the attribute
// survives printing and parsing (the shape rule reads it while parsing).
// CHECK-LABEL: func.func @pooling_channels_last
func.func @pooling_channels_last(%x: tensor<1x10x11x3xf32>)
    -> (tensor<1x5x6x3xf32>, tensor<1x6x6x3xf32>, tensor<1x6x6x3xui8>) {
  // CHECK: fluid.max_pool2d %{{.*}} {channels_last, kernel_size = array<i64: 3, 3>, padding = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : tensor<1x10x11x3xf32> -> tensor<1x5x6x3xf32>
  %0 = fluid.max_pool2d %x {channels_last, kernel_size = array<i64: 3, 3>, strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>}
      : tensor<1x10x11x3xf32> -> tensor<1x5x6x3xf32>
  // CHECK: %{{.*}}, %{{.*}} = fluid.max_pool2d_with_indices %{{.*}} {ceil_mode, channels_last, kernel_size = array<i64: 3, 3>, padding = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : tensor<1x10x11x3xf32> -> tensor<1x6x6x3xf32>, tensor<1x6x6x3xui8>
  %y, %idx = fluid.max_pool2d_with_indices %x {kernel_size = array<i64: 3, 3>, strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>, ceil_mode, channels_last}
      : tensor<1x10x11x3xf32> -> tensor<1x6x6x3xf32>, tensor<1x6x6x3xui8>
  return %0, %y, %idx : tensor<1x5x6x3xf32>, tensor<1x6x6x3xf32>, tensor<1x6x6x3xui8>
}

// CHECK-LABEL: func.func @linalg
func.func @linalg(%a: tensor<4x8xf32>, %b: tensor<8x5xf32>, %bt: tensor<5x8xf32>, %bias: tensor<5xf32>,
                  %ba: tensor<3x4x8xf32>, %bb: tensor<3x8x2xf32>)
    -> (tensor<4x5xf32>, tensor<8x8xf32>, tensor<3x4x2xf32>, tensor<4x5xf32>, tensor<4x5xf32>) {
  // CHECK: fluid.matmul %{{.*}}, %{{.*}} : tensor<4x8xf32>, tensor<8x5xf32> -> tensor<4x5xf32>
  %0 = fluid.matmul %a, %b : tensor<4x8xf32>, tensor<8x5xf32> -> tensor<4x5xf32>
  // CHECK: fluid.matmul %{{.*}}, %{{.*}} {transpose_lhs} : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<8x8xf32>
  %1 = fluid.matmul %a, %a {transpose_lhs} : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<8x8xf32>
  // CHECK: fluid.matmul %{{.*}}, %{{.*}} : tensor<3x4x8xf32>, tensor<3x8x2xf32> -> tensor<3x4x2xf32>
  %2 = fluid.matmul %ba, %bb : tensor<3x4x8xf32>, tensor<3x8x2xf32> -> tensor<3x4x2xf32>
  // CHECK: fluid.linear %{{.*}}, %{{.*}}, %{{.*}} : tensor<4x8xf32>, tensor<5x8xf32>, tensor<5xf32> -> tensor<4x5xf32>
  %3 = fluid.linear %a, %bt, %bias : tensor<4x8xf32>, tensor<5x8xf32>, tensor<5xf32> -> tensor<4x5xf32>
  // CHECK: fluid.linear %{{.*}}, %{{.*}} : tensor<4x8xf32>, tensor<5x8xf32> -> tensor<4x5xf32>
  %4 = fluid.linear %a, %bt : tensor<4x8xf32>, tensor<5x8xf32> -> tensor<4x5xf32>
  return %0, %1, %2, %3, %4 : tensor<4x5xf32>, tensor<8x8xf32>, tensor<3x4x2xf32>, tensor<4x5xf32>, tensor<4x5xf32>
}

// CHECK-LABEL: func.func @gather
func.func @gather(%table: tensor<169x3xf32>, %index: tensor<2401xi64>, %l: tensor<6xi64>, %rows: tensor<2xi32>)
    -> (tensor<2401x3xf32>, tensor<169x2xf32>, tensor<2xi64>) {
  // CHECK: fluid.gather %{{.*}}, %{{.*}} {axis = 0 : i64} : (tensor<169x3xf32>, tensor<2401xi64>) -> tensor<2401x3xf32>
  %0 = fluid.gather %table, %index {axis = 0 : i64} : (tensor<169x3xf32>, tensor<2401xi64>) -> tensor<2401x3xf32>
  // A negative axis counts from the end; i32 indices; integer data.
  // CHECK: fluid.gather %{{.*}}, %{{.*}} {axis = -1 : i64} : (tensor<169x3xf32>, tensor<2xi32>) -> tensor<169x2xf32>
  %1 = fluid.gather %table, %rows {axis = -1 : i64} : (tensor<169x3xf32>, tensor<2xi32>) -> tensor<169x2xf32>
  // CHECK: fluid.gather %{{.*}}, %{{.*}} {axis = 0 : i64} : (tensor<6xi64>, tensor<2xi32>) -> tensor<2xi64>
  %2 = fluid.gather %l, %rows {axis = 0 : i64} : (tensor<6xi64>, tensor<2xi32>) -> tensor<2xi64>
  return %0, %1, %2 : tensor<2401x3xf32>, tensor<169x2xf32>, tensor<2xi64>
}

// CHECK-LABEL: func.func @shapes
func.func @shapes(%x: tensor<2x3x4x5xf32>, %y: tensor<2x1x4x5xf32>, %l: tensor<6xi64>)
    -> (tensor<6x20xf32>, tensor<2x60xf32>, tensor<2x4x4x5xf32>, tensor<3x2xi64>, tensor<1x120xf32>) {
  // CHECK: fluid.reshape %{{.*}} : tensor<2x3x4x5xf32> -> tensor<6x20xf32>
  %0 = fluid.reshape %x : tensor<2x3x4x5xf32> -> tensor<6x20xf32>
  // CHECK: fluid.flatten %{{.*}} : tensor<2x3x4x5xf32> -> tensor<2x60xf32>
  %1 = fluid.flatten %x : tensor<2x3x4x5xf32> -> tensor<2x60xf32>
  // CHECK: fluid.flatten %{{.*}} {axis = 0 : i64} : tensor<2x3x4x5xf32> -> tensor<1x120xf32>
  %4 = fluid.flatten %x {axis = 0 : i64} : tensor<2x3x4x5xf32> -> tensor<1x120xf32>
  // CHECK: fluid.concat %{{.*}}, %{{.*}} {axis = 1 : i64} : (tensor<2x3x4x5xf32>, tensor<2x1x4x5xf32>) -> tensor<2x4x4x5xf32>
  %2 = fluid.concat %x, %y {axis = 1 : i64} : (tensor<2x3x4x5xf32>, tensor<2x1x4x5xf32>) -> tensor<2x4x4x5xf32>
  // CHECK: fluid.reshape %{{.*}} : tensor<6xi64> -> tensor<3x2xi64>
  %3 = fluid.reshape %l : tensor<6xi64> -> tensor<3x2xi64>
  return %0, %1, %2, %3, %4 : tensor<6x20xf32>, tensor<2x60xf32>, tensor<2x4x4x5xf32>, tensor<3x2xi64>, tensor<1x120xf32>
}

// CHECK-LABEL: func.func @loss
func.func @loss(%logits: tensor<4x10xf32>, %labels: tensor<4xi64>, %labels32: tensor<4xi32>)
    -> (tensor<4x10xf32>, tensor<4x10xf32>, tensor<f32>, tensor<f32>, tensor<4xf32>) {
  // CHECK: fluid.softmax %{{.*}} : tensor<4x10xf32>
  %0 = fluid.softmax %logits : tensor<4x10xf32>
  // CHECK: fluid.log_softmax %{{.*}} {axis = 0 : i64} : tensor<4x10xf32>
  %1 = fluid.log_softmax %logits {axis = 0 : i64} : tensor<4x10xf32>
  // CHECK: fluid.softmax_cross_entropy %{{.*}}, %{{.*}} : tensor<4x10xf32>, tensor<4xi64> -> tensor<f32>
  %2 = fluid.softmax_cross_entropy %logits, %labels : tensor<4x10xf32>, tensor<4xi64> -> tensor<f32>
  // CHECK: fluid.softmax_cross_entropy %{{.*}}, %{{.*}} {reduction = #fluid<reduction sum>} : tensor<4x10xf32>, tensor<4xi32> -> tensor<f32>
  %3 = fluid.softmax_cross_entropy %logits, %labels32 {reduction = #fluid<reduction sum>} : tensor<4x10xf32>, tensor<4xi32> -> tensor<f32>
  // CHECK: fluid.softmax_cross_entropy %{{.*}}, %{{.*}} {reduction = #fluid<reduction none>} : tensor<4x10xf32>, tensor<4xi64> -> tensor<4xf32>
  %4 = fluid.softmax_cross_entropy %logits, %labels {reduction = #fluid<reduction none>} : tensor<4x10xf32>, tensor<4xi64> -> tensor<4xf32>
  return %0, %1, %2, %3, %4 : tensor<4x10xf32>, tensor<4x10xf32>, tensor<f32>, tensor<f32>, tensor<4xf32>
}

// CHECK-LABEL: func.func @reductions
func.func @reductions(%x: tensor<2x3x4x5xf32>) -> (tensor<f32>, tensor<2x3x1x1xf32>, tensor<3xf32>) {
  // CHECK: fluid.mean %{{.*}} : tensor<2x3x4x5xf32> -> tensor<f32>
  %0 = fluid.mean %x : tensor<2x3x4x5xf32> -> tensor<f32>
  // CHECK: fluid.mean %{{.*}} {axes = array<i64: 2, -1>, keep_dims} : tensor<2x3x4x5xf32> -> tensor<2x3x1x1xf32>
  %1 = fluid.mean %x {axes = array<i64: 2, -1>, keep_dims} : tensor<2x3x4x5xf32> -> tensor<2x3x1x1xf32>
  // CHECK: fluid.reduce_sum %{{.*}} {axes = array<i64: 0, 2, 3>} : tensor<2x3x4x5xf32> -> tensor<3xf32>
  %2 = fluid.reduce_sum %x {axes = array<i64: 0, 2, 3>} : tensor<2x3x4x5xf32> -> tensor<3xf32>
  return %0, %1, %2 : tensor<f32>, tensor<2x3x1x1xf32>, tensor<3xf32>
}

// Widening sums: a 16-bit input, an f32 result.
// CHECK-LABEL: func.func @widening_reductions
func.func @widening_reductions(%x: tensor<2x3x4x5xbf16>, %h: tensor<2x3x4x5xf16>) -> (tensor<2x5xf32>, tensor<f32>, tensor<3x1x1xf32>) {
  // CHECK: fluid.mean %{{.*}} {axes = array<i64: 1, 2>} : tensor<2x3x4x5xbf16> -> tensor<2x5xf32>
  %0 = fluid.mean %x {axes = array<i64: 1, 2>} : tensor<2x3x4x5xbf16> -> tensor<2x5xf32>
  // CHECK: fluid.reduce_sum %{{.*}} : tensor<2x3x4x5xf16> -> tensor<f32>
  %1 = fluid.reduce_sum %h : tensor<2x3x4x5xf16> -> tensor<f32>
  // CHECK: fluid.sum_to %{{.*}} : tensor<2x3x4x5xbf16> -> tensor<3x1x1xf32>
  %2 = fluid.sum_to %x : tensor<2x3x4x5xbf16> -> tensor<3x1x1xf32>
  return %0, %1, %2 : tensor<2x5xf32>, tensor<f32>, tensor<3x1x1xf32>
}

// CHECK-LABEL: func.func @init_attribute
// CHECK-SAME: test.init = #fluid.init<normal(std = 2.000000e-02)>
func.func @init_attribute() attributes {test.init = #fluid.init<normal(std = 0.02)>} {
  return
}
