// --fluid-data-parallel: the gradients the updates read are averaged over
// the ranks in buckets of at least bucket-bytes, in the order the program
// computes them, each bucket's all-reduce right after its last gradient.
// RUN: fluid-opt %s -split-input-file --fluid-data-parallel="bucket-bytes=64" | FileCheck %s --enable-var-scope
// RUN: fluid-opt %s -split-input-file --fluid-data-parallel="bucket-bytes=0" | FileCheck %s --check-prefix=EACH --enable-var-scope
// RUN: fluid-opt %s -split-input-file --fluid-data-parallel | FileCheck %s --check-prefix=ONE --enable-var-scope

fluid.param @a : tensor<4xf32> init ones
fluid.param @b : tensor<16xf32> init ones
fluid.param @c : tensor<4xf32> init ones
fluid.param @d : tensor<8xf32> init ones

// Gradients computed in the order gd (32 bytes), gb (64), ga (16), gc
// (16), read by updates in another order. With 64 bytes a bucket: [gd, gb]
// (96 bytes) after gb's producer, [ga, gc] after gc's. The updates read
// the averages; the producers are unchanged.
// CHECK-LABEL: func.func @buckets
// CHECK: %[[GD:.*]] = fluid.neg %{{.*}} : tensor<8xf32>
// CHECK-NEXT: %[[GB:.*]] = fluid.neg %{{.*}} : tensor<16xf32>
// CHECK-NEXT: %[[R0:.*]]:2 = fluid.all_reduce_mean(%[[GD]], %[[GB]]) {bucket = 0 : i64} : (tensor<8xf32>, tensor<16xf32>)
// CHECK-NEXT: %[[GA:.*]] = fluid.neg %{{.*}} : tensor<4xf32>
// CHECK-NEXT: %[[GC:.*]] = fluid.relu %{{.*}} : tensor<4xf32>
// CHECK-NEXT: %[[R1:.*]]:2 = fluid.all_reduce_mean(%[[GA]], %[[GC]]) {bucket = 1 : i64} : (tensor<4xf32>, tensor<4xf32>)
// CHECK: fluid.sgd %{{.*}}, %[[R1]]#0, %{{.*}} :
// CHECK: fluid.sgd %{{.*}}, %[[R0]]#1, %{{.*}} :
// CHECK: fluid.sgd_group(%{{.*}}, %{{.*}}), (%[[R1]]#1, %[[R0]]#0), %{{.*}} :
// CHECK-NOT: all_reduce_mean
// One gradient a bucket with bucket-bytes=0.
// EACH-LABEL: func.func @buckets
// EACH: fluid.all_reduce_mean(%{{[^,]*}}) {bucket = 0 : i64}
// EACH: fluid.all_reduce_mean(%{{[^,]*}}) {bucket = 1 : i64}
// EACH: fluid.all_reduce_mean(%{{[^,]*}}) {bucket = 2 : i64}
// EACH: fluid.all_reduce_mean(%{{[^,]*}}) {bucket = 3 : i64}
// EACH-NOT: all_reduce_mean
// EACH-LABEL: func.func @scaled
// One bucket with the default 25 MiB, after the last gradient.
// ONE-LABEL: func.func @buckets
// ONE: %[[GC:.*]] = fluid.relu
// ONE-NEXT: fluid.all_reduce_mean(%{{.*}}, %{{.*}}, %{{.*}}, %[[GC]]) {bucket = 0 : i64}
// ONE-NOT: all_reduce_mean
// ONE-LABEL: func.func @scaled
func.func @buckets(%x8: tensor<8xf32>, %x16: tensor<16xf32>, %x4: tensor<4xf32>, %lr: tensor<f32>) -> tensor<f32> {
  %gd = fluid.neg %x8 : tensor<8xf32>
  %gb = fluid.neg %x16 : tensor<16xf32>
  %ga = fluid.neg %x4 : tensor<4xf32>
  %gc = fluid.relu %x4 : tensor<4xf32>
  %a = fluid.get_param @a : tensor<4xf32>
  %na = fluid.sgd %a, %ga, %lr : tensor<4xf32>, tensor<f32>
  fluid.set_param @a, %na : tensor<4xf32>
  %b = fluid.get_param @b : tensor<16xf32>
  %nb = fluid.sgd %b, %gb, %lr : tensor<16xf32>, tensor<f32>
  fluid.set_param @b, %nb : tensor<16xf32>
  %c = fluid.get_param @c : tensor<4xf32>
  %d = fluid.get_param @d : tensor<8xf32>
  %n:2 = fluid.sgd_group (%c, %d), (%gc, %gd), %lr : (tensor<4xf32>, tensor<8xf32>), tensor<f32>
  fluid.set_param @c, %n#0 : tensor<4xf32>
  fluid.set_param @d, %n#1 : tensor<8xf32>
  return %lr : tensor<f32>
}

// -----

fluid.param @w : tensor<4xf32> init ones

// Under dynamic loss scaling the scaled gradients are averaged, before
// unscale_grads, so that every rank sees the same overflow flag; a
// gradient that is a function argument is averaged at the start.
// CHECK-LABEL: func.func @scaled
// CHECK-SAME: (%[[G:[^:]*]]: tensor<4xf32>
// CHECK-NEXT: %[[R:.*]] = fluid.all_reduce_mean(%[[G]]) {bucket = 0 : i64} : (tensor<4xf32>)
// CHECK: %[[U:.*]], %[[F:.*]] = fluid.unscale_grads(%[[R]]), %{{.*}} : (tensor<4xf32>)
// CHECK: fluid.sgd %{{.*}}, %[[U]], %{{.*}} skip_if %[[F]]
// CHECK-NOT: all_reduce_mean
func.func @scaled(%g: tensor<4xf32>, %scale: tensor<f32>, %lr: tensor<f32>) {
  %u:2 = fluid.unscale_grads (%g), %scale : (tensor<4xf32>)
  %w = fluid.get_param @w : tensor<4xf32>
  %nw = fluid.sgd %w, %u#0, %lr skip_if %u#1 : tensor<4xf32>, tensor<f32>
  fluid.set_param @w, %nw : tensor<4xf32>
  return
}

// -----

// A function without updates is left alone.
// CHECK-LABEL: func.func @forward
// CHECK-NOT: all_reduce_mean
func.func @forward(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = fluid.relu %x : tensor<4xf32>
  return %y : tensor<4xf32>
}
