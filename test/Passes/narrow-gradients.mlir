// RUN: fluid-opt %s --fluid-narrow-gradients | FileCheck %s
// RUN: fluid-opt %s --fluid-narrow-gradients | fluid-opt --fluid-narrow-gradients | FileCheck %s --check-prefix=TWICE

// Which f32 values --fluid-narrow-gradients stores in 16 bits: those an
// elementwise op computes from 16-bit values only and that two ops, or one
// op that is not elementwise, read.

fluid.param @w : tensor<2x4x3x3xf32> init ones

// CHECK-LABEL: func.func @step
func.func @step(%a: tensor<2x4x3x3xbf16>, %b: tensor<2x4x3x3xbf16>,
                %h: tensor<2x4x3x3xf16>, %c: tensor<4x1x1xf32>,
                %f: tensor<2x4x3x3xf32>, %m: tensor<2x4xbf16>)
    -> (tensor<2x4x3x3xf32>, tensor<2x4x3x3xf32>, tensor<2x4x3x3xf32>,
        tensor<4xf32>, tensor<2x4x3x3xf32>, tensor<2x4xf32>,
        tensor<2x4x3x3xf32>, tensor<2x4x3x3xf32>) {
  // CHECK: %[[WA:.*]] = fluid.cast %arg0 : tensor<2x4x3x3xbf16> -> tensor<2x4x3x3xf32>
  // CHECK: %[[WB:.*]] = fluid.cast %arg1 : tensor<2x4x3x3xbf16> -> tensor<2x4x3x3xf32>
  %wa = fluid.cast %a : tensor<2x4x3x3xbf16> -> tensor<2x4x3x3xf32>
  %wb = fluid.cast %b : tensor<2x4x3x3xbf16> -> tensor<2x4x3x3xf32>
  %wh = fluid.cast %h : tensor<2x4x3x3xf16> -> tensor<2x4x3x3xf32>

  // Read by two ops: rounded where made; both read the widening.
  // CHECK: %[[G:.*]] = fluid.relu_grad %[[WA]], %[[WB]] : tensor<2x4x3x3xf32>
  // CHECK-NEXT: %[[G16:.*]] = fluid.cast %[[G]] : tensor<2x4x3x3xf32> -> tensor<2x4x3x3xbf16>
  // CHECK-NEXT: %[[GW:.*]] = fluid.cast %[[G16]] : tensor<2x4x3x3xbf16> -> tensor<2x4x3x3xf32>
  // CHECK-NEXT: %[[X:.*]] = fluid.add %[[GW]], %[[WA]]
  // CHECK-NEXT: fluid.mul %[[GW]], %[[WB]]
  %g = fluid.relu_grad %wa, %wb : tensor<2x4x3x3xf32>
  %x = fluid.add %g, %wa : tensor<2x4x3x3xf32>, tensor<2x4x3x3xf32> -> tensor<2x4x3x3xf32>
  %y = fluid.mul %g, %wb : tensor<2x4x3x3xf32>, tensor<2x4x3x3xf32> -> tensor<2x4x3x3xf32>

  // A per-channel f32 factor does not count; read by a reduction (not
  // elementwise): rounded.
  // CHECK: %[[S:.*]] = fluid.mul %[[WA]], %arg3
  // CHECK-NEXT: %[[S16:.*]] = fluid.cast %[[S]] : tensor<2x4x3x3xf32> -> tensor<2x4x3x3xbf16>
  // CHECK-NEXT: %[[SW:.*]] = fluid.cast %[[S16]]
  // CHECK-NEXT: fluid.reduce_sum %[[SW]]
  %s = fluid.mul %wa, %c : tensor<2x4x3x3xf32>, tensor<4x1x1xf32> -> tensor<2x4x3x3xf32>
  %r = fluid.reduce_sum %s {axes = array<i64: 0, 2, 3>} : tensor<2x4x3x3xf32> -> tensor<4xf32>

  // A full-size f32 operand (not from 16 bits): stays f32.
  // CHECK: %[[K:.*]] = fluid.add %[[WA]], %arg4
  // CHECK-NOT: fluid.cast %[[K]]
  %k = fluid.add %wa, %f : tensor<2x4x3x3xf32>, tensor<2x4x3x3xf32> -> tensor<2x4x3x3xf32>
  %k2 = fluid.mul %k, %k : tensor<2x4x3x3xf32>, tensor<2x4x3x3xf32> -> tensor<2x4x3x3xf32>
  %k3 = fluid.add %k, %k2 : tensor<2x4x3x3xf32>, tensor<2x4x3x3xf32> -> tensor<2x4x3x3xf32>

  // bf16 and f16 operands together: no single 16-bit type, stays f32.
  // CHECK: %[[MIX:.*]] = fluid.add %[[WA]], %{{.*}} : tensor<2x4x3x3xf32>, tensor<2x4x3x3xf32>
  // CHECK-NOT: fluid.cast %[[MIX]]
  %mix = fluid.add %wa, %wh : tensor<2x4x3x3xf32>, tensor<2x4x3x3xf32> -> tensor<2x4x3x3xf32>
  %mix2 = fluid.mul %mix, %mix : tensor<2x4x3x3xf32>, tensor<2x4x3x3xf32> -> tensor<2x4x3x3xf32>

  // Carried into a parameter update through elementwise ops: stays f32
  // (a parameter's gradient and the optimizer's arithmetic).
  // CHECK: %[[U:.*]] = fluid.sub %[[WA]], %[[WB]]
  // CHECK-NOT: fluid.cast %[[U]]
  // CHECK: fluid.set_param @w
  %u = fluid.sub %wa, %wb : tensor<2x4x3x3xf32>, tensor<2x4x3x3xf32> -> tensor<2x4x3x3xf32>
  %u2 = fluid.mul %u, %u : tensor<2x4x3x3xf32>, tensor<2x4x3x3xf32> -> tensor<2x4x3x3xf32>
  %w = fluid.get_param @w : tensor<2x4x3x3xf32>
  %w2 = fluid.sub %w, %u2 : tensor<2x4x3x3xf32>, tensor<2x4x3x3xf32> -> tensor<2x4x3x3xf32>
  %w3 = fluid.add %w2, %u : tensor<2x4x3x3xf32>, tensor<2x4x3x3xf32> -> tensor<2x4x3x3xf32>
  fluid.set_param @w, %w3 : tensor<2x4x3x3xf32>

  // Rank 2 (not an activation of a convolution): stays f32.
  // CHECK: %[[WM:.*]] = fluid.cast %arg5 : tensor<2x4xbf16> -> tensor<2x4xf32>
  // CHECK: %[[N:.*]] = fluid.relu %[[WM]] : tensor<2x4xf32>
  // CHECK-NOT: fluid.cast %[[N]]
  %wm = fluid.cast %m : tensor<2x4xbf16> -> tensor<2x4xf32>
  %n = fluid.relu %wm : tensor<2x4xf32>

  // One elementwise reader: stays in f32 (inside its fused region).
  // CHECK: %[[ONE:.*]] = fluid.neg %[[WB]]
  // CHECK-NOT: fluid.cast %[[ONE]]
  %one = fluid.neg %wb : tensor<2x4x3x3xf32>
  %one2 = fluid.relu %one : tensor<2x4x3x3xf32>

  // Returned: stays f32 (what the function returns does not change).
  // CHECK: %[[RET:.*]] = fluid.mul %[[WA]], %[[WA]]
  // CHECK-NOT: fluid.cast %[[RET]]
  // CHECK: return %[[X]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[N]], %{{.*}}, %[[RET]]
  %ret = fluid.mul %wa, %wa : tensor<2x4x3x3xf32>, tensor<2x4x3x3xf32> -> tensor<2x4x3x3xf32>
  return %x, %y, %k3, %r, %mix2, %n, %one2, %ret : tensor<2x4x3x3xf32>, tensor<2x4x3x3xf32>, tensor<2x4x3x3xf32>, tensor<4xf32>, tensor<2x4x3x3xf32>, tensor<2x4xf32>, tensor<2x4x3x3xf32>, tensor<2x4x3x3xf32>
}

// Running it again changes nothing: the rounded values are casts now.
// TWICE-LABEL: func.func @step
// TWICE-COUNT-2: -> tensor<2x4x3x3xbf16>
// TWICE-NOT: -> tensor<2x4x3x3xbf16>
// TWICE: return

// Max pooling's gradient of a widened bf16 gradient: stored in bf16 even
// with one elementwise reader (no fused region takes a pooling gradient,
// so it is written to memory anyway); of an f32 gradient: stays f32.
// CHECK-LABEL: func.func @pool_gradient
// CHECK: %[[GW:.*]] = fluid.cast %arg0 : tensor<2x4x2x2xbf16> -> tensor<2x4x2x2xf32>
// CHECK: %[[D:.*]] = fluid.max_pool2d_grad %[[GW]], %arg1
// CHECK-NEXT: %[[D16:.*]] = fluid.cast %[[D]] : tensor<2x4x4x4xf32> -> tensor<2x4x4x4xbf16>
// CHECK-NEXT: %[[DW:.*]] = fluid.cast %[[D16]] : tensor<2x4x4x4xbf16> -> tensor<2x4x4x4xf32>
// CHECK-NEXT: fluid.relu_grad %[[DW]], %arg1
// CHECK: %[[E:.*]] = fluid.max_pool2d_grad %arg2, %arg1
// CHECK-NOT: fluid.cast %[[E]]
// CHECK: return
func.func @pool_gradient(%g: tensor<2x4x2x2xbf16>, %x: tensor<2x4x4x4xf32>, %f: tensor<2x4x2x2xf32>) -> (tensor<2x4x4x4xf32>, tensor<2x4x4x4xf32>) {
  %gw = fluid.cast %g : tensor<2x4x2x2xbf16> -> tensor<2x4x2x2xf32>
  %d = fluid.max_pool2d_grad %gw, %x {kernel_size = array<i64: 2, 2>, strides = array<i64: 2, 2>} : tensor<2x4x2x2xf32>, tensor<2x4x4x4xf32>
  %r = fluid.relu_grad %d, %x : tensor<2x4x4x4xf32>
  %e = fluid.max_pool2d_grad %f, %x {kernel_size = array<i64: 2, 2>, strides = array<i64: 2, 2>} : tensor<2x4x2x2xf32>, tensor<2x4x4x4xf32>
  %r2 = fluid.relu_grad %e, %x : tensor<2x4x4x4xf32>
  return %r, %r2 : tensor<2x4x4x4xf32>, tensor<2x4x4x4xf32>
}
