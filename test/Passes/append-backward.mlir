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

// -----

// maximum: dy to the operand that is the result, half to each at a tie
// (where both compare greater or equal), all to both where neither does
// (a NaN); the broadcast operand's share summed to its shape.
fluid.param @a : tensor<2x3xf32> init ones
fluid.param @b : tensor<3xf32> init ones
// CHECK-LABEL: func.func @maximum
// CHECK: %[[A:.+]] = fluid.get_param @a
// CHECK: %[[B:.+]] = fluid.get_param @b
// CHECK: %[[DY:.+]] = fluid.broadcast_to
// CHECK: %[[AGE:.+]] = fluid.greater_equal %[[A]], %[[B]] : tensor<2x3xf32>, tensor<3xf32>
// CHECK: %[[BGE:.+]] = fluid.greater_equal %[[B]], %[[A]] : tensor<3xf32>, tensor<2x3xf32>
// CHECK: %[[POINT5:.+]] = fluid.constant dense<5.000000e-01> : tensor<f32>
// CHECK: %[[HALF:.+]] = fluid.mul %[[DY]], %[[POINT5]]
// CHECK: %[[ZERO:.+]] = fluid.constant dense<0.000000e+00> : tensor<f32>
// CHECK: %[[ATIED:.+]] = fluid.select %[[AGE]], %[[HALF]], %[[ZERO]]
// CHECK: %[[DA:.+]] = fluid.select %[[BGE]], %[[ATIED]], %[[DY]]
// CHECK: %[[BTIED:.+]] = fluid.select %[[BGE]], %[[HALF]], %[[ZERO]]
// CHECK: %[[DBFULL:.+]] = fluid.select %[[AGE]], %[[BTIED]], %[[DY]]
// CHECK: %[[DB:.+]] = fluid.sum_to %[[DBFULL]] : tensor<2x3xf32> -> tensor<3xf32>
// CHECK: return %{{.+}}, %[[DA]], %[[DB]]
func.func @maximum() -> tensor<f32> {
  %a = fluid.get_param @a : tensor<2x3xf32>
  %b = fluid.get_param @b : tensor<3xf32>
  %m = fluid.maximum %a, %b : tensor<2x3xf32>, tensor<3xf32> -> tensor<2x3xf32>
  %l = fluid.reduce_sum %m : tensor<2x3xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// minimum: the same with the comparisons the other way round; only the
// parameter gets a gradient, not the constant.
fluid.param @a : tensor<3xf32> init ones
// CHECK-LABEL: func.func @minimum
// CHECK: %[[A:.+]] = fluid.get_param @a
// CHECK: %[[C:.+]] = fluid.constant dense<1.000000e+00> : tensor<f32>
// CHECK: %[[DY:.+]] = fluid.broadcast_to
// CHECK: %[[AWINS:.+]] = fluid.greater_equal %[[C]], %[[A]] : tensor<f32>, tensor<3xf32>
// CHECK: %[[CWINS:.+]] = fluid.greater_equal %[[A]], %[[C]] : tensor<3xf32>, tensor<f32>
// CHECK: %[[HALF:.+]] = fluid.mul %[[DY]]
// CHECK: %[[TIED:.+]] = fluid.select %[[AWINS]], %[[HALF]]
// CHECK: %[[DA:.+]] = fluid.select %[[CWINS]], %[[TIED]], %[[DY]]
// CHECK-NOT: fluid.select
// CHECK: return %{{.+}}, %[[DA]]
func.func @minimum() -> tensor<f32> {
  %a = fluid.get_param @a : tensor<3xf32>
  %c = fluid.constant dense<1.0> : tensor<f32>
  %m = fluid.minimum %a, %c : tensor<3xf32>, tensor<f32> -> tensor<3xf32>
  %l = fluid.reduce_sum %m : tensor<3xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// select: dy where the condition holds to on_true, elsewhere to on_false,
// each summed to its shape; nothing to the condition.
fluid.param @c : tensor<3xf32> init ones
fluid.param @t : tensor<2x3xf32> init ones
fluid.param @f : tensor<f32> init ones
// CHECK-LABEL: func.func @select
// CHECK-SAME: -> (tensor<f32> {fluid.loss}, tensor<3xf32> {fluid.grad_of = @c}, tensor<2x3xf32> {fluid.grad_of = @t}, tensor<f32> {fluid.grad_of = @f})
// CHECK: %[[C:.+]] = fluid.get_param @c
// CHECK: %[[DY:.+]] = fluid.broadcast_to
// CHECK: %[[ZERO:.+]] = fluid.constant dense<0.000000e+00> : tensor<f32>
// CHECK: %[[DT:.+]] = fluid.select %[[C]], %[[DY]], %[[ZERO]]
// CHECK: %[[DFFULL:.+]] = fluid.select %[[C]], %[[ZERO]], %[[DY]]
// CHECK: %[[DF:.+]] = fluid.sum_to %[[DFFULL]] : tensor<2x3xf32> -> tensor<f32>
// CHECK: %[[DC:.+]] = fluid.constant dense<0.000000e+00> : tensor<3xf32>
// CHECK: return %{{.+}}, %[[DC]], %[[DT]], %[[DF]]
func.func @select() -> tensor<f32> {
  %c = fluid.get_param @c : tensor<3xf32>
  %t = fluid.get_param @t : tensor<2x3xf32>
  %f = fluid.get_param @f : tensor<f32>
  %s = fluid.select %c, %t, %f : tensor<3xf32>, tensor<2x3xf32>, tensor<f32> -> tensor<2x3xf32>
  %l = fluid.reduce_sum %s : tensor<2x3xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// pow: y x^(y - 1) dy, none where y = 0; dy x^y log(x), none where x = 0
// and y >= 0 (PyTorch's rules); the broadcast exponent's summed.
fluid.param @x : tensor<2x3xf32> init ones
fluid.param @y : tensor<3xf32> init ones
// CHECK-LABEL: func.func @pow
// CHECK: %[[X:.+]] = fluid.get_param @x
// CHECK: %[[Y:.+]] = fluid.get_param @y
// CHECK: %[[P:.+]] = fluid.pow %[[X]], %[[Y]]
// CHECK: %[[DY:.+]] = fluid.broadcast_to
// CHECK: %[[ZERO:.+]] = fluid.constant dense<0.000000e+00> : tensor<f32>
// CHECK: %[[ONE:.+]] = fluid.constant dense<1.000000e+00> : tensor<f32>
// CHECK: %[[YM1:.+]] = fluid.sub %[[Y]], %[[ONE]]
// CHECK: %[[LOWER:.+]] = fluid.pow %[[X]], %[[YM1]]
// CHECK: %[[SLOPE:.+]] = fluid.mul %[[Y]], %[[LOWER]]
// CHECK: %[[DXFULL:.+]] = fluid.mul %[[DY]], %[[SLOPE]]
// CHECK: %[[DX:.+]] = fluid.select %[[Y]], %[[DXFULL]], %[[ZERO]]
// CHECK: %[[LOG:.+]] = fluid.log %[[X]]
// CHECK: %[[YSLOPE:.+]] = fluid.mul %[[P]], %[[LOG]]
// CHECK: %[[YPOS:.+]] = fluid.greater_equal %[[Y]], %[[ZERO]]
// CHECK: %[[ATZERO:.+]] = fluid.select %[[YPOS]], %[[ZERO]], %[[YSLOPE]]
// CHECK: %[[MASKED:.+]] = fluid.select %[[X]], %[[YSLOPE]], %[[ATZERO]]
// CHECK: %[[DYFULL:.+]] = fluid.mul %[[DY]], %[[MASKED]]
// CHECK: %[[DEXP:.+]] = fluid.sum_to %[[DYFULL]] : tensor<2x3xf32> -> tensor<3xf32>
// CHECK: return %{{.+}}, %[[DX]], %[[DEXP]]
func.func @pow() -> tensor<f32> {
  %x = fluid.get_param @x : tensor<2x3xf32>
  %y = fluid.get_param @y : tensor<3xf32>
  %p = fluid.pow %x, %y : tensor<2x3xf32>, tensor<3xf32> -> tensor<2x3xf32>
  %l = fluid.reduce_sum %p : tensor<2x3xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// A constant exponent gets no gradient: no logarithm.
fluid.param @x : tensor<3xf32> init ones
// CHECK-LABEL: func.func @square
// CHECK: fluid.select
// CHECK-NOT: fluid.log
// CHECK-NOT: fluid.greater_equal
// CHECK: return
func.func @square() -> tensor<f32> {
  %x = fluid.get_param @x : tensor<3xf32>
  %two = fluid.constant dense<2.0> : tensor<f32>
  %p = fluid.pow %x, %two : tensor<3xf32>, tensor<f32> -> tensor<3xf32>
  %l = fluid.reduce_sum %p : tensor<3xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// slice: dy between zeros along the axis; a slice of the whole input
// passes dy as it is.
fluid.param @x : tensor<2x6xf32> init ones
// CHECK-LABEL: func.func @slice
// CHECK: %[[DY:.+]] = fluid.broadcast_to %{{.+}} : tensor<1x1xf32> -> tensor<2x3xf32>
// CHECK: %[[ZERO:.+]] = fluid.constant dense<0.000000e+00> : tensor<f32>
// CHECK: %[[BEFORE:.+]] = fluid.broadcast_to %[[ZERO]] : tensor<f32> -> tensor<2x2xf32>
// CHECK: %[[AFTER:.+]] = fluid.broadcast_to %[[ZERO]] : tensor<f32> -> tensor<2x1xf32>
// CHECK: %[[DX:.+]] = fluid.concat %[[BEFORE]], %[[DY]], %[[AFTER]] {axis = 1 : i64} : (tensor<2x2xf32>, tensor<2x3xf32>, tensor<2x1xf32>) -> tensor<2x6xf32>
// CHECK: return %{{.+}}, %[[DX]]
func.func @slice() -> tensor<f32> {
  %x = fluid.get_param @x : tensor<2x6xf32>
  %s = fluid.slice %x {axis = 1 : i64, offset = 2 : i64} : tensor<2x6xf32> -> tensor<2x3xf32>
  %l = fluid.reduce_sum %s : tensor<2x3xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

fluid.param @x : tensor<4x3xf32> init ones
// CHECK-LABEL: func.func @slice_at_start
// CHECK: %[[DY:.+]] = fluid.broadcast_to %{{.+}} : tensor<1x1xf32> -> tensor<2x3xf32>
// CHECK-NEXT: %[[ZERO:.+]] = fluid.constant dense<0.000000e+00> : tensor<f32>
// CHECK-NEXT: %[[AFTER:.+]] = fluid.broadcast_to %[[ZERO]] : tensor<f32> -> tensor<2x3xf32>
// CHECK-NEXT: %[[DX:.+]] = fluid.concat %[[DY]], %[[AFTER]] {axis = 0 : i64} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>
// CHECK-NEXT: return %{{.+}}, %[[DX]]
func.func @slice_at_start() -> tensor<f32> {
  %x = fluid.get_param @x : tensor<4x3xf32>
  %s = fluid.slice %x {axis = 0 : i64, offset = 0 : i64} : tensor<4x3xf32> -> tensor<2x3xf32>
  %w = fluid.slice %s {axis = 1 : i64, offset = 0 : i64} : tensor<2x3xf32> -> tensor<2x3xf32>
  %l = fluid.reduce_sum %w : tensor<2x3xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// gather: dy's slices added back where they were taken from, with the
// same indices.
fluid.param @table : tensor<5x3xf32> init ones
// CHECK-LABEL: func.func @gather
// CHECK: %[[I:.+]] = fluid.constant dense<[4, 0, 4]> : tensor<3xi64>
// CHECK: %[[DY:.+]] = fluid.broadcast_to %{{.+}} : tensor<1x1xf32> -> tensor<3x3xf32>
// CHECK-NEXT: %[[DX:.+]] = fluid.gather_grad %[[DY]], %[[I]] {axis = 0 : i64} : (tensor<3x3xf32>, tensor<3xi64>) -> tensor<5x3xf32>
// CHECK-NEXT: return %{{.+}}, %[[DX]]
func.func @gather() -> tensor<f32> {
  %t = fluid.get_param @table : tensor<5x3xf32>
  %i = fluid.constant dense<[4, 0, 4]> : tensor<3xi64>
  %g = fluid.gather %t, %i {axis = 0 : i64} : (tensor<5x3xf32>, tensor<3xi64>) -> tensor<3x3xf32>
  %l = fluid.reduce_sum %g : tensor<3x3xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// broadcast_to and sum_to: each one's gradient is the other.
fluid.param @x : tensor<3x1xf32> init ones
// CHECK-LABEL: func.func @broadcast_and_sum
// CHECK: %[[DS:.+]] = fluid.broadcast_to %{{.+}} : tensor<1x1xf32> -> tensor<3x1xf32>
// CHECK: %[[DB:.+]] = fluid.broadcast_to %[[DS]] : tensor<3x1xf32> -> tensor<2x3x4xf32>
// CHECK: %[[DX:.+]] = fluid.sum_to %[[DB]] : tensor<2x3x4xf32> -> tensor<3x1xf32>
// CHECK: return %{{.+}}, %[[DX]]
func.func @broadcast_and_sum() -> tensor<f32> {
  %x = fluid.get_param @x : tensor<3x1xf32>
  %b = fluid.broadcast_to %x : tensor<3x1xf32> -> tensor<2x3x4xf32>
  %s = fluid.sum_to %b : tensor<2x3x4xf32> -> tensor<3x1xf32>
  %l = fluid.reduce_sum %s : tensor<3x1xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// floor and greater_equal pass no gradient: no gradient code is built
// for their results, only for the product's other operand.
fluid.param @x : tensor<3xf32> init ones
// CHECK-LABEL: func.func @piecewise_constant
// CHECK: %[[X:.+]] = fluid.get_param @x
// CHECK: %[[F:.+]] = fluid.floor %[[X]]
// CHECK: %[[G:.+]] = fluid.greater_equal %[[F]], %[[X]]
// CHECK: %[[DY:.+]] = fluid.broadcast_to
// CHECK: %[[DX:.+]] = fluid.mul %[[DY]], %[[G]]
// CHECK-NOT: fluid.mul
// CHECK: return %{{.+}}, %[[DX]]
func.func @piecewise_constant() -> tensor<f32> {
  %x = fluid.get_param @x : tensor<3xf32>
  %f = fluid.floor %x : tensor<3xf32>
  %g = fluid.greater_equal %f, %x : tensor<3xf32>, tensor<3xf32> -> tensor<3xf32>
  %p = fluid.mul %x, %g : tensor<3xf32>, tensor<3xf32> -> tensor<3xf32>
  %l = fluid.reduce_sum %p : tensor<3xf32> -> tensor<f32>
  return %l : tensor<f32>
}
