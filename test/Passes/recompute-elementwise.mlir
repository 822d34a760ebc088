// --fluid-recompute-elementwise: the backward pass's uses of
// relu(batch_norm(x)) read a copy computed right before the first of them,
// when the batch norm's input and statistics are read there anyway and the
// value is at least min-bytes; the forward value keeps its forward uses.
// RUN: fluid-opt %s -split-input-file --fluid-recompute-elementwise=min-bytes=0 | FileCheck %s --enable-var-scope
// RUN: fluid-opt %s -split-input-file --fluid-recompute-elementwise=min-bytes=2049 | FileCheck %s --check-prefix=LARGE

fluid.param @g : tensor<4xf32> init ones
fluid.param @b : tensor<4xf32> init zeros
fluid.param @rm : tensor<4xf32> init zeros {trainable = false}
fluid.param @rv : tensor<4xf32> init ones {trainable = false}

// 2x4x8x8 f32: 2048 bytes, below min-bytes=2049.
// LARGE-NOT: batch_norm_apply
// CHECK-LABEL: func.func @step(
// CHECK-SAME: %[[X:[^:]+]]: tensor<2x4x8x8xf32>
func.func @step(%x: tensor<2x4x8x8xf32>, %dr: tensor<2x4x8x8xf32>) -> (tensor<f32> {fluid.loss}, tensor<f64> {fluid.learning_rate}) attributes {fluid.entry} {
  // CHECK: %[[G:.+]] = fluid.get_param @g
  // CHECK: %[[B:.+]] = fluid.get_param @b
  %g = fluid.get_param @g : tensor<4xf32>
  %b = fluid.get_param @b : tensor<4xf32>
  %rm = fluid.get_param @rm : tensor<4xf32>
  %rv = fluid.get_param @rv : tensor<4xf32>
  // CHECK: %[[Y:[^,]+]], %[[MEAN:[^,]+]], %[[INV:[^,]+]], %{{[^,]+}}, %{{[^ ]+}} = fluid.batch_norm %[[X]]
  %y, %mean, %inv, %nrm, %nrv = fluid.batch_norm %x, %g, %b, %rm, %rv : tensor<2x4x8x8xf32>, tensor<4xf32>
  // CHECK: %[[R:.+]] = fluid.relu %[[Y]]
  // CHECK: fluid.mean %[[R]]
  %r = fluid.relu %y : tensor<2x4x8x8xf32>
  %loss = fluid.mean %r : tensor<2x4x8x8xf32> -> tensor<f32>
  // The backward pass: the copy comes right before its first use, and
  // every backward use reads it.
  // CHECK: %[[S:.+]] = fluid.add %[[X]], %[[X]]
  %s = fluid.add %x, %x : tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32> -> tensor<2x4x8x8xf32>
  // CHECK-NEXT: %[[Y2:.+]] = fluid.batch_norm_apply %[[X]], %[[G]], %[[B]], %[[MEAN]], %[[INV]] : tensor<2x4x8x8xf32>, tensor<4xf32>
  // CHECK-NEXT: %[[R2:.+]] = fluid.relu %[[Y2]]
  // CHECK-NEXT: %[[DY:.+]] = fluid.relu_grad %{{.+}}, %[[R2]]
  %dy = fluid.relu_grad %dr, %r : tensor<2x4x8x8xf32>
  // CHECK-NEXT: fluid.mul %[[R2]], %[[S]]
  %t = fluid.mul %r, %s : tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32> -> tensor<2x4x8x8xf32>
  // CHECK-NEXT: fluid.batch_norm_grad %[[DY]], %[[X]], %[[G]], %[[MEAN]], %[[INV]]
  %dx, %dg, %db = fluid.batch_norm_grad %dy, %x, %g, %mean, %inv : tensor<2x4x8x8xf32>, tensor<4xf32>
  %lr = fluid.constant dense<1.0e-01> : tensor<f64>
  return %loss, %lr : tensor<f32>, tensor<f64>
}

// -----

fluid.param @g : tensor<4xf32> init ones
fluid.param @b : tensor<4xf32> init zeros
fluid.param @rm : tensor<4xf32> init zeros {trainable = false}
fluid.param @rv : tensor<4xf32> init ones {trainable = false}

// Not recomputed: the normalized value has a forward use besides the ReLU
// (%r1);
// the batch norm's input is not read by the backward pass (%r2: the copy
// would keep it alive); the ReLU's output is not read by the backward pass
// (%r3).
// CHECK-LABEL: func.func @kept(
// CHECK-NOT: batch_norm_apply
// CHECK: return
func.func @kept(%x: tensor<2x4xf32>, %z: tensor<2x4xf32>, %w: tensor<2x4xf32>, %dr: tensor<2x4xf32>) -> (tensor<f32> {fluid.loss}, tensor<f64> {fluid.learning_rate}) attributes {fluid.entry} {
  %g = fluid.get_param @g : tensor<4xf32>
  %b = fluid.get_param @b : tensor<4xf32>
  %rm = fluid.get_param @rm : tensor<4xf32>
  %rv = fluid.get_param @rv : tensor<4xf32>
  %y1, %m1, %i1, %a1, %v1 = fluid.batch_norm %x, %g, %b, %rm, %rv : tensor<2x4xf32>, tensor<4xf32>
  %r1 = fluid.relu %y1 : tensor<2x4xf32>
  %y2, %m2, %i2, %a2, %v2 = fluid.batch_norm %z, %g, %b, %rm, %rv : tensor<2x4xf32>, tensor<4xf32>
  %r2 = fluid.relu %y2 : tensor<2x4xf32>
  %y3, %m3, %i3, %a3, %v3 = fluid.batch_norm %w, %g, %b, %rm, %rv : tensor<2x4xf32>, tensor<4xf32>
  %r3 = fluid.relu %y3 : tensor<2x4xf32>
  %s12 = fluid.add %r1, %r2 : tensor<2x4xf32>, tensor<2x4xf32> -> tensor<2x4xf32>
  %s1y = fluid.add %s12, %y1 : tensor<2x4xf32>, tensor<2x4xf32> -> tensor<2x4xf32>
  %s = fluid.add %s1y, %r3 : tensor<2x4xf32>, tensor<2x4xf32> -> tensor<2x4xf32>
  %loss = fluid.mean %s : tensor<2x4xf32> -> tensor<f32>
  %e1 = fluid.relu_grad %dr, %r1 : tensor<2x4xf32>
  %d1, %g1, %b1 = fluid.batch_norm_grad %e1, %x, %g, %m1, %i1 : tensor<2x4xf32>, tensor<4xf32>
  %e2 = fluid.relu_grad %dr, %r2 : tensor<2x4xf32>
  %d2, %g2, %b2 = fluid.batch_norm_grad %e2, %dr, %g, %m2, %i2 : tensor<2x4xf32>, tensor<4xf32>
  %d3, %g3, %b3 = fluid.batch_norm_grad %dr, %w, %g, %m3, %i3 : tensor<2x4xf32>, tensor<4xf32>
  %lr = fluid.constant dense<1.0e-01> : tensor<f64>
  return %loss, %lr : tensor<f32>, tensor<f64>
}

// -----

fluid.param @g : tensor<4xf32> init ones
fluid.param @b : tensor<4xf32> init zeros
fluid.param @rm : tensor<4xf32> init zeros {trainable = false}
fluid.param @rv : tensor<4xf32> init ones {trainable = false}

// Residual blocks: relu(batch_norm(x) + z). With a projection shortcut (z
// another batch norm's output, %o1) both are normalized again; with an
// identity shortcut the block's input must be kept for the backward pass
// anyway: %o2's input %o1 is recomputed, so its forward value is gone and
// %o2 stays stored; %o3's input %o2 is kept (the filter-gradient-like use
// %k), so %o3 is recomputed. A batch norm's output that the backward pass
// reads itself (%y4, a product's gradient) is normalized again too.
// CHECK-LABEL: func.func @blocks(
// CHECK-SAME: %[[A:[^:]+]]: tensor<2x4xf32>, %[[B:[^:]+]]: tensor<2x4xf32>, %[[C:[^:]+]]: tensor<2x4xf32>, %[[D:[^:]+]]: tensor<2x4xf32>, %[[E:[^:]+]]: tensor<2x4xf32>
// CHECK: fluid.mean
// CHECK-NEXT: %[[Y4:.+]] = fluid.batch_norm_apply %[[E]]
// CHECK-NEXT: fluid.mul %[[Y4]], %[[A]]
// CHECK-NEXT: fluid.batch_norm_grad
// CHECK-NEXT: %[[P3:.+]] = fluid.batch_norm_apply %[[D]]
// CHECK-NEXT: %[[S3:.+]] = fluid.add %[[P3]], %[[O2:[^ ]+]] :
// CHECK-NEXT: %[[R3:.+]] = fluid.relu %[[S3]]
// CHECK-NEXT: fluid.relu_grad %[[A]], %[[R3]]
// CHECK-NEXT: fluid.batch_norm_grad
// CHECK-NEXT: fluid.relu_grad %[[A]], %[[O2]]
// CHECK-NEXT: fluid.mul %[[O2]]
// CHECK-NEXT: fluid.batch_norm_grad
// CHECK-NEXT: %[[P1:.+]] = fluid.batch_norm_apply %[[A]]
// CHECK-NEXT: %[[Q1:.+]] = fluid.batch_norm_apply %[[B]]
// CHECK-NEXT: %[[S1:.+]] = fluid.add %[[P1]], %[[Q1]]
// CHECK-NEXT: %[[R1:.+]] = fluid.relu %[[S1]]
// CHECK-NEXT: fluid.relu_grad %[[A]], %[[R1]]
// CHECK-NOT: batch_norm_apply
// CHECK: return
func.func @blocks(%a: tensor<2x4xf32>, %b: tensor<2x4xf32>, %c: tensor<2x4xf32>, %d: tensor<2x4xf32>, %e: tensor<2x4xf32>) -> (tensor<f32> {fluid.loss}, tensor<f64> {fluid.learning_rate}) attributes {fluid.entry} {
  %g = fluid.get_param @g : tensor<4xf32>
  %bb = fluid.get_param @b : tensor<4xf32>
  %rm = fluid.get_param @rm : tensor<4xf32>
  %rv = fluid.get_param @rv : tensor<4xf32>
  %ya, %ma, %ia, %xa, %va = fluid.batch_norm %a, %g, %bb, %rm, %rv : tensor<2x4xf32>, tensor<4xf32>
  %yb, %mb, %ib, %xb, %vb = fluid.batch_norm %b, %g, %bb, %rm, %rv : tensor<2x4xf32>, tensor<4xf32>
  %s1 = fluid.add %ya, %yb : tensor<2x4xf32>, tensor<2x4xf32> -> tensor<2x4xf32>
  %o1 = fluid.relu %s1 : tensor<2x4xf32>
  %yc, %mc, %ic, %xc, %vc = fluid.batch_norm %c, %g, %bb, %rm, %rv : tensor<2x4xf32>, tensor<4xf32>
  %s2 = fluid.add %yc, %o1 : tensor<2x4xf32>, tensor<2x4xf32> -> tensor<2x4xf32>
  %o2 = fluid.relu %s2 : tensor<2x4xf32>
  %yd, %md, %id, %xd, %vd = fluid.batch_norm %d, %g, %bb, %rm, %rv : tensor<2x4xf32>, tensor<4xf32>
  %s3 = fluid.add %yd, %o2 : tensor<2x4xf32>, tensor<2x4xf32> -> tensor<2x4xf32>
  %o3 = fluid.relu %s3 : tensor<2x4xf32>
  %y4, %m4, %i4, %x4, %v4 = fluid.batch_norm %e, %g, %bb, %rm, %rv : tensor<2x4xf32>, tensor<4xf32>
  %p = fluid.mul %y4, %o3 : tensor<2x4xf32>, tensor<2x4xf32> -> tensor<2x4xf32>
  %loss = fluid.mean %p : tensor<2x4xf32> -> tensor<f32>
  // The backward pass, in the order a chain of blocks has it.
  %t4 = fluid.mul %y4, %a : tensor<2x4xf32>, tensor<2x4xf32> -> tensor<2x4xf32>
  %d4, %g4, %b4 = fluid.batch_norm_grad %t4, %e, %g, %m4, %i4 : tensor<2x4xf32>, tensor<4xf32>
  %e3 = fluid.relu_grad %a, %o3 : tensor<2x4xf32>
  %d3, %g3, %b3 = fluid.batch_norm_grad %e3, %d, %g, %md, %id : tensor<2x4xf32>, tensor<4xf32>
  %e2 = fluid.relu_grad %a, %o2 : tensor<2x4xf32>
  %k = fluid.mul %o2, %e2 : tensor<2x4xf32>, tensor<2x4xf32> -> tensor<2x4xf32>
  %d2, %g2, %b2 = fluid.batch_norm_grad %e2, %c, %g, %mc, %ic : tensor<2x4xf32>, tensor<4xf32>
  %e1 = fluid.relu_grad %a, %o1 : tensor<2x4xf32>
  %d1, %g1, %b1 = fluid.batch_norm_grad %e1, %a, %g, %ma, %ia : tensor<2x4xf32>, tensor<4xf32>
  %dd, %gd, %bd = fluid.batch_norm_grad %e1, %b, %g, %mb, %ib : tensor<2x4xf32>, tensor<4xf32>
  %lr = fluid.constant dense<1.0e-01> : tensor<f64>
  return %loss, %lr : tensor<f32>, tensor<f64>
}

// -----

// Chains of elementwise ops: GELU composed as x * 0.5 * (1 + erf(x / c)),
// whose gradient reads t = x / c, h = x * 0.5 and u = 1 + erf(t), and the
// next layer reads y. Keeping x alone costs one tensor instead of four
// (here none: x is an argument, kept anyway): the four are computed again
// from x before the first backward use of any of them, and the backward pass reads the copies; the forward values keep
// their forward uses. A value the chain does not reach (z, of a mean) is
// left as it is. With min-bytes above the values' size nothing changes.
// CHECK-LABEL: func.func @gelu(
// CHECK-SAME: %[[X:[^:]+]]: tensor<2x8xf32>
// CHECK: %[[C:.+]] = fluid.constant dense<1.41
// CHECK: %[[HALF:.+]] = fluid.constant dense<5.0
// CHECK: %[[ONE:.+]] = fluid.constant dense<1.0
// CHECK: %[[T:.+]] = fluid.div %[[X]], %[[C]]
// CHECK: %[[E:.+]] = fluid.erf %[[T]]
// CHECK: %[[U:.+]] = fluid.add %[[ONE]], %[[E]]
// CHECK: %[[H:.+]] = fluid.mul %[[X]], %[[HALF]]
// CHECK: %[[Y:.+]] = fluid.mul %[[H]], %[[U]]
// CHECK: %[[LOSS:.+]] = fluid.mean %[[Y]]
// The copies, before the backward pass's first use (of y).
// CHECK: %[[T2:.+]] = fluid.div %[[X]], %[[C]]
// CHECK: %[[E2:.+]] = fluid.erf %[[T2]]
// CHECK: %[[U2:.+]] = fluid.add %[[ONE]], %[[E2]]
// CHECK: %[[H2:.+]] = fluid.mul %[[X]], %[[HALF]]
// CHECK: %[[Y2:.+]] = fluid.mul %[[H2]], %[[U2]]
// CHECK: fluid.mul %[[Y2]], %{{.+}}
// CHECK: fluid.mul %{{.+}}, %[[U2]]
// CHECK: fluid.mul %{{.+}}, %[[H2]]
// CHECK: fluid.mul %[[T2]], %[[T2]]
// LARGE-LABEL: func.func @gelu(
// LARGE-NOT: fluid.erf %
// LARGE: fluid.erf %
// LARGE-NOT: fluid.erf %
// LARGE: return
func.func @gelu(%x: tensor<2x8xf32>, %g: tensor<2x8xf32>) -> (tensor<f32> {fluid.loss}, tensor<f64> {fluid.learning_rate}) attributes {fluid.entry} {
  %c = fluid.constant dense<1.41421354> : tensor<f32>
  %half = fluid.constant dense<5.0e-01> : tensor<f32>
  %one = fluid.constant dense<1.0> : tensor<f32>
  %t = fluid.div %x, %c : tensor<2x8xf32>, tensor<f32> -> tensor<2x8xf32>
  %e = fluid.erf %t : tensor<2x8xf32>
  %u = fluid.add %one, %e : tensor<f32>, tensor<2x8xf32> -> tensor<2x8xf32>
  %h = fluid.mul %x, %half : tensor<2x8xf32>, tensor<f32> -> tensor<2x8xf32>
  %y = fluid.mul %h, %u : tensor<2x8xf32>, tensor<2x8xf32> -> tensor<2x8xf32>
  %loss = fluid.mean %y : tensor<2x8xf32> -> tensor<f32>
  // The backward pass.
  %dw = fluid.mul %y, %g : tensor<2x8xf32>, tensor<2x8xf32> -> tensor<2x8xf32>
  %dh = fluid.mul %dw, %u : tensor<2x8xf32>, tensor<2x8xf32> -> tensor<2x8xf32>
  %du = fluid.mul %dw, %h : tensor<2x8xf32>, tensor<2x8xf32> -> tensor<2x8xf32>
  %sq = fluid.mul %t, %t : tensor<2x8xf32>, tensor<2x8xf32> -> tensor<2x8xf32>
  %dt = fluid.mul %sq, %du : tensor<2x8xf32>, tensor<2x8xf32> -> tensor<2x8xf32>
  %lr = fluid.constant dense<1.0e-01> : tensor<f64>
  return %loss, %lr : tensor<f32>, tensor<f64>
}

// -----

// The pass works on the tensor level.
// RUN: not fluid-opt %s -split-input-file --fluid-bufferize --fluid-recompute-elementwise 2>&1 | FileCheck %s --check-prefix=BUFFERS
// BUFFERS: error: --fluid-recompute-elementwise works on the tensor level of a single-block training step (run it before --fluid-bufferize)
func.func @buffers(%x: tensor<4xf32>) -> (tensor<f32> {fluid.loss}, tensor<f64> {fluid.learning_rate}) attributes {fluid.entry} {
  %loss = fluid.mean %x : tensor<4xf32> -> tensor<f32>
  %lr = fluid.constant dense<1.0e-01> : tensor<f64>
  return %loss, %lr : tensor<f32>, tensor<f64>
}
