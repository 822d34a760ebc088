// The structure of the backward pass of a small CNN: gradient rules in
// reverse order of the forward ops, gradients summed where a value has two
// uses, no gradient code for the images, the labels or the running
// statistics, and one result per trainable parameter, in declaration order.
// RUN: fluid-opt %s -split-input-file --fluid-append-backward | FileCheck %s --enable-var-scope

fluid.param @conv.weight : tensor<4x3x3x3xf32> init kaiming_normal(fan_out, gain = 1.4142135623730951)
fluid.param @bn.weight : tensor<4xf32> init ones
fluid.param @bn.bias : tensor<4xf32> init zeros
fluid.param @bn.running_mean : tensor<4xf32> init zeros {trainable = false}
fluid.param @bn.running_var : tensor<4xf32> init ones {trainable = false}
fluid.param @fc.weight : tensor<5x4xf32> init zeros
fluid.param @fc.bias : tensor<5xf32> init zeros
fluid.param @unused : tensor<3xf32> init ones

// CHECK-LABEL: func.func @loss(
// CHECK-SAME: %[[X:[^:]+]]: tensor<2x3x8x8xf32>, %[[LABELS:[^:]+]]: tensor<2xi64>)
// CHECK-SAME: -> (tensor<f32> {fluid.loss}, tensor<4x3x3x3xf32> {fluid.grad_of = @conv.weight}, tensor<4xf32> {fluid.grad_of = @bn.weight}, tensor<4xf32> {fluid.grad_of = @bn.bias}, tensor<5x4xf32> {fluid.grad_of = @fc.weight}, tensor<5xf32> {fluid.grad_of = @fc.bias}, tensor<3xf32> {fluid.grad_of = @unused})
func.func @loss(%x: tensor<2x3x8x8xf32>, %labels: tensor<2xi64>) -> tensor<f32> attributes {fluid.entry} {
  // CHECK: %[[W:.+]] = fluid.get_param @conv.weight
  %w = fluid.get_param @conv.weight : tensor<4x3x3x3xf32>
  // CHECK: %[[C:.+]] = fluid.conv2d %[[X]], %[[W]]
  %c = fluid.conv2d %x, %w {padding = array<i64: 1, 1, 1, 1>} : (tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<2x4x8x8xf32>
  %g = fluid.get_param @bn.weight : tensor<4xf32>
  %b = fluid.get_param @bn.bias : tensor<4xf32>
  %rm = fluid.get_param @bn.running_mean : tensor<4xf32>
  %rv = fluid.get_param @bn.running_var : tensor<4xf32>
  // CHECK: %[[Y:[^,]+]], %[[MEAN:[^,]+]], %[[INV:[^,]+]], %{{[^,]+}}, %{{[^ ]+}} = fluid.batch_norm %[[C]]
  %y, %mean, %inv, %nm, %nv = fluid.batch_norm %c, %g, %b, %rm, %rv : tensor<2x4x8x8xf32>, tensor<4xf32>
  fluid.set_param @bn.running_mean, %nm : tensor<4xf32>
  fluid.set_param @bn.running_var, %nv : tensor<4xf32>
  // CHECK: %[[R:.+]] = fluid.relu %[[Y]]
  %r = fluid.relu %y : tensor<2x4x8x8xf32>
  // The convolution's output is used twice: by batch norm and here.
  // CHECK: %[[SUM:.+]] = fluid.add %[[R]], %[[C]]
  %sum = fluid.add %r, %c : tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32> -> tensor<2x4x8x8xf32>
  // CHECK: %[[P:.+]] = fluid.global_avg_pool %[[SUM]]
  %p = fluid.global_avg_pool %sum : tensor<2x4x8x8xf32> -> tensor<2x4x1x1xf32>
  // CHECK: %[[F:.+]] = fluid.flatten %[[P]]
  %f = fluid.flatten %p : tensor<2x4x1x1xf32> -> tensor<2x4xf32>
  %fw = fluid.get_param @fc.weight : tensor<5x4xf32>
  %fb = fluid.get_param @fc.bias : tensor<5xf32>
  // CHECK: %[[LOGITS:.+]] = fluid.linear %[[F]], %[[FW:[^,]+]], %{{[^ ]+}}
  %logits = fluid.linear %f, %fw, %fb : tensor<2x4xf32>, tensor<5x4xf32>, tensor<5xf32> -> tensor<2x5xf32>
  // CHECK: %[[LOSS:.+]] = fluid.softmax_cross_entropy %[[LOGITS]], %[[LABELS]]
  %loss = fluid.softmax_cross_entropy %logits, %labels : tensor<2x5xf32>, tensor<2xi64> -> tensor<f32>

  // The backward pass, last op first.
  // CHECK: %[[ONE:.+]] = fluid.constant dense<1.000000e+00> : tensor<f32>
  // CHECK: %[[DLOGITS:.+]] = fluid.softmax_cross_entropy_grad %[[ONE]], %[[LOGITS]], %[[LABELS]]
  // CHECK: %[[DF:.+]] = fluid.matmul %[[DLOGITS]], %[[FW]] : tensor<2x5xf32>, tensor<5x4xf32> -> tensor<2x4xf32>
  // CHECK: %[[DFW:.+]] = fluid.matmul %[[DLOGITS]], %[[F]] {transpose_lhs}
  // CHECK: %[[DFB:.+]] = fluid.reduce_sum %[[DLOGITS]] {axes = array<i64: 0>}
  // CHECK: %[[DP:.+]] = fluid.reshape %[[DF]] : tensor<2x4xf32> -> tensor<2x4x1x1xf32>
  // CHECK: %[[SPREAD:.+]] = fluid.broadcast_to %[[DP]] : tensor<2x4x1x1xf32> -> tensor<2x4x8x8xf32>
  // CHECK: %[[COUNT:.+]] = fluid.constant dense<6.400000e+01> : tensor<f32>
  // CHECK: %[[DSUM:.+]] = fluid.div %[[SPREAD]], %[[COUNT]]
  // CHECK: %[[DR:.+]] = fluid.relu_grad %[[DSUM]], %[[R]]
  // CHECK: %[[DX:[^,]+]], %[[DG:[^,]+]], %[[DB:[^ ]+]] = fluid.batch_norm_grad %[[DR]], %[[C]], %{{[^,]+}}, %[[MEAN]], %[[INV]]
  // The two uses of the convolution's output add up.
  // CHECK: %[[DC:.+]] = fluid.add %[[DSUM]], %[[DX]]
  // Only the filter gets a gradient: the images need none.
  // CHECK-NOT: fluid.conv2d_grad_input
  // CHECK: %[[DW:.+]] = fluid.conv2d_grad_filter %[[DC]], %[[X]] {padding = array<i64: 1, 1, 1, 1>} : (tensor<2x4x8x8xf32>, tensor<2x3x8x8xf32>) -> tensor<4x3x3x3xf32>
  // A trainable parameter the loss does not read gets zeros.
  // CHECK: %[[ZERO:.+]] = fluid.constant dense<0.000000e+00> : tensor<3xf32>
  // CHECK: return %[[LOSS]], %[[DW]], %[[DG]], %[[DB]], %[[DFW]], %[[DFB]], %[[ZERO]]
  return %loss : tensor<f32>
}

// -----

fluid.param @w : tensor<3xf32> init ones

// A parameter read twice: one gradient, the sum over both reads.
// CHECK-LABEL: func.func @twice
// CHECK: %[[A:.+]] = fluid.get_param @w
// CHECK: %[[B:.+]] = fluid.get_param @w
// CHECK: fluid.mul %[[A]], %[[B]]
// CHECK: %[[DY:.+]] = fluid.broadcast_to
// CHECK: %[[DA:.+]] = fluid.mul %[[DY]], %[[B]]
// CHECK: %[[DB:.+]] = fluid.mul %[[DY]], %[[A]]
// CHECK: %[[TOTAL:.+]] = fluid.add %[[DA]], %[[DB]]
// CHECK: return %{{.+}}, %[[TOTAL]]
func.func @twice() -> tensor<f32> {
  %a = fluid.get_param @w : tensor<3xf32>
  %b = fluid.get_param @w : tensor<3xf32>
  %p = fluid.mul %a, %b : tensor<3xf32>, tensor<3xf32> -> tensor<3xf32>
  %l = fluid.reduce_sum %p : tensor<3xf32> -> tensor<f32>
  return %l : tensor<f32>
}
