// --fluid-group-optimizer: updates with the same rule, element type, rate
// (and step) and hyper-parameters become one grouped op where the last of
// them was, their set_params behind it; everything else stays apart.
// RUN: fluid-opt %s -split-input-file --fluid-group-optimizer | FileCheck %s --enable-var-scope

fluid.param @a : tensor<4xf32> init ones
fluid.param @b : tensor<2x3xf32> init ones
fluid.param @c : tensor<4xf32> init ones
fluid.param @d : tensor<4xf64> init ones
fluid.param @e : tensor<3xf64> init ones
fluid.param @f : tensor<4xf32> init ones

// Two dtypes give two groups; a different weight decay stays single.
// CHECK-LABEL: func.func @by_dtype_and_decay
// CHECK-SAME: (%[[G4:[^:]*]]: tensor<4xf32>, %[[G23:[^:]*]]: tensor<2x3xf32>, %[[GD:[^:]*]]: tensor<4xf64>, %[[GE:[^:]*]]: tensor<3xf64>, %[[LR:[^:]*]]: tensor<f32>, %[[LR64:[^:]*]]: tensor<f64>)
// CHECK-DAG: %[[A:.*]] = fluid.get_param @a
// CHECK-DAG: %[[B:.*]] = fluid.get_param @b
// CHECK-DAG: %[[C:.*]] = fluid.get_param @c
// CHECK: %[[NC:.*]] = fluid.sgd %[[C]], %[[G4]], %[[LR]] {weight_decay = 1.000000e-03 : f64}
// CHECK: fluid.set_param @c, %[[NC]]
// CHECK: %[[N32:.*]]:3 = fluid.sgd_group(%[[A]], %[[B]], %{{.*}}), (%[[G4]], %[[G23]], %[[G4]]), %[[LR]] {weight_decay = 1.000000e-04 : f64} : (tensor<4xf32>, tensor<2x3xf32>, tensor<4xf32>), tensor<f32>
// CHECK-NEXT: fluid.set_param @a, %[[N32]]#0
// CHECK-NEXT: fluid.set_param @b, %[[N32]]#1
// CHECK-NEXT: fluid.set_param @f, %[[N32]]#2
// CHECK: %[[N64:.*]]:2 = fluid.sgd_group(%{{.*}}, %{{.*}}), (%[[GD]], %[[GE]]), %[[LR64]] {weight_decay = 1.000000e-04 : f64} : (tensor<4xf64>, tensor<3xf64>), tensor<f64>
// CHECK-NEXT: fluid.set_param @d, %[[N64]]#0
// CHECK-NEXT: fluid.set_param @e, %[[N64]]#1
// CHECK-NOT: fluid.sgd
func.func @by_dtype_and_decay(%g4: tensor<4xf32>, %g23: tensor<2x3xf32>, %gd: tensor<4xf64>, %ge: tensor<3xf64>, %lr: tensor<f32>, %lr64: tensor<f64>) {
  %a = fluid.get_param @a : tensor<4xf32>
  %na = fluid.sgd %a, %g4, %lr {weight_decay = 1.0e-4 : f64} : tensor<4xf32>, tensor<f32>
  fluid.set_param @a, %na : tensor<4xf32>
  %b = fluid.get_param @b : tensor<2x3xf32>
  %nb = fluid.sgd %b, %g23, %lr {weight_decay = 1.0e-4 : f64} : tensor<2x3xf32>, tensor<f32>
  fluid.set_param @b, %nb : tensor<2x3xf32>
  %c = fluid.get_param @c : tensor<4xf32>
  %nc = fluid.sgd %c, %g4, %lr {weight_decay = 1.0e-3 : f64} : tensor<4xf32>, tensor<f32>
  fluid.set_param @c, %nc : tensor<4xf32>
  %d = fluid.get_param @d : tensor<4xf64>
  %nd = fluid.sgd %d, %gd, %lr64 {weight_decay = 1.0e-4 : f64} : tensor<4xf64>, tensor<f64>
  fluid.set_param @d, %nd : tensor<4xf64>
  %f = fluid.get_param @f : tensor<4xf32>
  %nf = fluid.sgd %f, %g4, %lr {weight_decay = 1.0e-4 : f64} : tensor<4xf32>, tensor<f32>
  fluid.set_param @f, %nf : tensor<4xf32>
  %e = fluid.get_param @e : tensor<3xf64>
  %ne = fluid.sgd %e, %ge, %lr64 {weight_decay = 1.0e-4 : f64} : tensor<3xf64>, tensor<f64>
  fluid.set_param @e, %ne : tensor<3xf64>
  return
}

// -----

fluid.param @w : tensor<4xf32> init ones
fluid.param @v : tensor<4xf32> init ones
fluid.param @x : tensor<4xf32> init ones
fluid.param @w.momentum_buffer : tensor<4xf32> init zeros {trainable = false}
fluid.param @v.momentum_buffer : tensor<4xf32> init zeros {trainable = false}
fluid.param @x.momentum_buffer : tensor<4xf32> init zeros {trainable = false}
fluid.param @y : tensor<4xf32> init ones
fluid.param @y.momentum_buffer : tensor<4xf32> init zeros {trainable = false}
fluid.param @m : tensor<4xf32> init ones
fluid.param @n : tensor<4xf32> init ones
fluid.param @m.exp_avg : tensor<4xf32> init zeros {trainable = false}
fluid.param @n.exp_avg : tensor<4xf32> init zeros {trainable = false}
fluid.param @m.exp_avg_sq : tensor<4xf32> init zeros {trainable = false}
fluid.param @n.exp_avg_sq : tensor<4xf32> init zeros {trainable = false}

// Momentum and Adam in one step: a group each; Nesterov stays apart from
// plain momentum, and so does a rate that is another value.
// CHECK-LABEL: func.func @rules
// CHECK: fluid.momentum %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {nesterov}
// CHECK: fluid.momentum %{{.*}}, %{{.*}}, %{{.*}}, %[[LR2:[^ ]*]] : tensor<4xf32>, tensor<f32>
// CHECK: %[[P:.*]]:2, %[[V:.*]]:2 = fluid.momentum_group(%{{.*}}, %{{.*}}), (%{{.*}}, %{{.*}}), (%{{.*}}, %{{.*}}), %{{.*}} : (tensor<4xf32>, tensor<4xf32>), tensor<f32>
// CHECK-NEXT: fluid.set_param @w, %[[P]]#0
// CHECK-NEXT: fluid.set_param @w.momentum_buffer, %[[V]]#0
// CHECK-NEXT: fluid.set_param @v, %[[P]]#1
// CHECK-NEXT: fluid.set_param @v.momentum_buffer, %[[V]]#1
// CHECK: %[[AP:.*]]:2, %[[AM:.*]]:2, %[[AV:.*]]:2 = fluid.adam_group(%{{.*}}, %{{.*}}), (%{{.*}}, %{{.*}}), (%{{.*}}, %{{.*}}), (%{{.*}}, %{{.*}}), %{{.*}}, %{{.*}} {decoupled, weight_decay = 1.000000e-02 : f64} : (tensor<4xf32>, tensor<4xf32>), tensor<f32>, tensor<i64>
// CHECK-NEXT: fluid.set_param @m, %[[AP]]#0
// CHECK-NEXT: fluid.set_param @m.exp_avg, %[[AM]]#0
// CHECK-NEXT: fluid.set_param @m.exp_avg_sq, %[[AV]]#0
// CHECK-NEXT: fluid.set_param @n, %[[AP]]#1
func.func @rules(%g: tensor<4xf32>, %lr: tensor<f32>, %lr2: tensor<f32>, %step: tensor<i64>) {
  %w = fluid.get_param @w : tensor<4xf32>
  %wv = fluid.get_param @w.momentum_buffer : tensor<4xf32>
  %nw, %nwv = fluid.momentum %w, %g, %wv, %lr : tensor<4xf32>, tensor<f32>
  fluid.set_param @w, %nw : tensor<4xf32>
  fluid.set_param @w.momentum_buffer, %nwv : tensor<4xf32>
  %m = fluid.get_param @m : tensor<4xf32>
  %m1 = fluid.get_param @m.exp_avg : tensor<4xf32>
  %m2 = fluid.get_param @m.exp_avg_sq : tensor<4xf32>
  %nm, %nm1, %nm2 = fluid.adam %m, %g, %m1, %m2, %lr, %step {decoupled, weight_decay = 1.0e-2 : f64} : tensor<4xf32>, tensor<f32>, tensor<i64>
  fluid.set_param @m, %nm : tensor<4xf32>
  fluid.set_param @m.exp_avg, %nm1 : tensor<4xf32>
  fluid.set_param @m.exp_avg_sq, %nm2 : tensor<4xf32>
  %x = fluid.get_param @x : tensor<4xf32>
  %xv = fluid.get_param @x.momentum_buffer : tensor<4xf32>
  %nx, %nxv = fluid.momentum %x, %g, %xv, %lr {nesterov} : tensor<4xf32>, tensor<f32>
  fluid.set_param @x, %nx : tensor<4xf32>
  fluid.set_param @x.momentum_buffer, %nxv : tensor<4xf32>
  %y = fluid.get_param @y : tensor<4xf32>
  %yv = fluid.get_param @y.momentum_buffer : tensor<4xf32>
  %ny, %nyv = fluid.momentum %y, %g, %yv, %lr2 : tensor<4xf32>, tensor<f32>
  fluid.set_param @y, %ny : tensor<4xf32>
  fluid.set_param @y.momentum_buffer, %nyv : tensor<4xf32>
  %v = fluid.get_param @v : tensor<4xf32>
  %vv = fluid.get_param @v.momentum_buffer : tensor<4xf32>
  %nv, %nvv = fluid.momentum %v, %g, %vv, %lr : tensor<4xf32>, tensor<f32>
  fluid.set_param @v, %nv : tensor<4xf32>
  fluid.set_param @v.momentum_buffer, %nvv : tensor<4xf32>
  %n = fluid.get_param @n : tensor<4xf32>
  %n1 = fluid.get_param @n.exp_avg : tensor<4xf32>
  %n2 = fluid.get_param @n.exp_avg_sq : tensor<4xf32>
  %nn, %nn1, %nn2 = fluid.adam %n, %g, %n1, %n2, %lr, %step {decoupled, weight_decay = 1.0e-2 : f64} : tensor<4xf32>, tensor<f32>, tensor<i64>
  fluid.set_param @n, %nn : tensor<4xf32>
  fluid.set_param @n.exp_avg, %nn1 : tensor<4xf32>
  fluid.set_param @n.exp_avg_sq, %nn2 : tensor<4xf32>
  return
}

// -----

fluid.param @a : tensor<4xf32> init ones
fluid.param @b : tensor<4xf32> init ones
fluid.param @c : tensor<4xf32> init ones
fluid.param @d : tensor<4xf32> init ones
fluid.param @e : tensor<4xf32> init ones
fluid.param @f : tensor<4xf32> init ones

// Left alone, since grouping would be visible: @a's new value is also
// returned, and @b and @c are read again before the group's place (@c as
// the gradient of another parameter's update). @d, @f and @e group, @f
// reading @c's new value. (A step updates each parameter once:
// fluid.set_param's verifier rejects a second write.)
// CHECK-LABEL: func.func @visible
// CHECK: %[[NA:.*]] = fluid.sgd
// CHECK-NEXT: fluid.set_param @a, %[[NA]]
// CHECK: %[[NB:.*]] = fluid.sgd
// CHECK-NEXT: fluid.set_param @b, %[[NB]]
// CHECK: %[[NC:.*]] = fluid.sgd
// CHECK-NEXT: fluid.set_param @c, %[[NC]]
// CHECK: %[[B2:.*]] = fluid.get_param @b
// CHECK: %[[D:.*]] = fluid.get_param @d
// CHECK: %[[C2:.*]] = fluid.get_param @c
// CHECK: %[[F:.*]] = fluid.get_param @f
// CHECK: %[[E:.*]] = fluid.get_param @e
// CHECK: %[[G:.*]]:3 = fluid.sgd_group(%[[D]], %[[F]], %[[E]]), (%{{.*}}, %[[C2]], %{{.*}})
// CHECK-NEXT: fluid.set_param @d, %[[G]]#0
// CHECK-NEXT: fluid.set_param @f, %[[G]]#1
// CHECK-NEXT: fluid.set_param @e, %[[G]]#2
// CHECK: return %[[NA]], %[[B2]]
func.func @visible(%g: tensor<4xf32>, %lr: tensor<f32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %a = fluid.get_param @a : tensor<4xf32>
  %na = fluid.sgd %a, %g, %lr : tensor<4xf32>, tensor<f32>
  fluid.set_param @a, %na : tensor<4xf32>
  %b = fluid.get_param @b : tensor<4xf32>
  %nb = fluid.sgd %b, %g, %lr : tensor<4xf32>, tensor<f32>
  fluid.set_param @b, %nb : tensor<4xf32>
  %c = fluid.get_param @c : tensor<4xf32>
  %nc = fluid.sgd %c, %g, %lr : tensor<4xf32>, tensor<f32>
  fluid.set_param @c, %nc : tensor<4xf32>
  %b2 = fluid.get_param @b : tensor<4xf32>
  %d = fluid.get_param @d : tensor<4xf32>
  %nd = fluid.sgd %d, %g, %lr : tensor<4xf32>, tensor<f32>
  fluid.set_param @d, %nd : tensor<4xf32>
  %c2 = fluid.get_param @c : tensor<4xf32>
  %f = fluid.get_param @f : tensor<4xf32>
  %nf = fluid.sgd %f, %c2, %lr : tensor<4xf32>, tensor<f32>
  fluid.set_param @f, %nf : tensor<4xf32>
  %e = fluid.get_param @e : tensor<4xf32>
  %ne = fluid.sgd %e, %g, %lr : tensor<4xf32>, tensor<f32>
  fluid.set_param @e, %ne : tensor<4xf32>
  return %na, %b2 : tensor<4xf32>, tensor<4xf32>
}

// -----

fluid.param @a : tensor<4xf32> init ones
fluid.param @b : tensor<4xf32> init ones

// A group of one is the single op.
// CHECK-LABEL: func.func @alone
// CHECK-NOT: _group
// CHECK: fluid.sgd
// CHECK: fluid.sgd
func.func @alone(%g: tensor<4xf32>, %lr: tensor<f32>, %lr2: tensor<f32>) {
  %a = fluid.get_param @a : tensor<4xf32>
  %na = fluid.sgd %a, %g, %lr : tensor<4xf32>, tensor<f32>
  fluid.set_param @a, %na : tensor<4xf32>
  %b = fluid.get_param @b : tensor<4xf32>
  %nb = fluid.sgd %b, %g, %lr2 : tensor<4xf32>, tensor<f32>
  fluid.set_param @b, %nb : tensor<4xf32>
  return
}
