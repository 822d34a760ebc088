// RUN: fluid-opt %s --fluid-narrow-data-movement --split-input-file | FileCheck %s

// An attention head split of a stored bf16 activation for a bf16 matrix
// product: the reshape and transpose move the bf16 tensor and the product's
// narrowing cast gives it back, so no cast is left.
// CHECK-LABEL: func.func @head_split
// CHECK-SAME: (%[[X:.*]]: tensor<2x5x8xbf16>)
// CHECK-NOT: fluid.cast
// CHECK: %[[R:.*]] = fluid.reshape %[[X]] : tensor<2x5x8xbf16> -> tensor<2x5x2x4xbf16>
// CHECK: %[[T:.*]] = fluid.transpose %[[R]] {permutation = array<i64: 0, 2, 1, 3>} : tensor<2x5x2x4xbf16> -> tensor<2x2x5x4xbf16>
// CHECK-NOT: fluid.cast
// CHECK: return %[[T]]
func.func @head_split(%x: tensor<2x5x8xbf16>) -> tensor<2x2x5x4xbf16> {
  %w = fluid.cast %x : tensor<2x5x8xbf16> -> tensor<2x5x8xf32>
  %r = fluid.reshape %w : tensor<2x5x8xf32> -> tensor<2x5x2x4xf32>
  %t = fluid.transpose %r {permutation = array<i64: 0, 2, 1, 3>} : tensor<2x5x2x4xf32> -> tensor<2x2x5x4xf32>
  %n = fluid.cast %t : tensor<2x2x5x4xf32> -> tensor<2x2x5x4xbf16>
  return %n : tensor<2x2x5x4xbf16>
}

// -----

// A slice read as f32 (f16 here) moves the f16 tensor and widens after; the
// first widening stays for its other reader.
// CHECK-LABEL: func.func @class_token
// CHECK-SAME: (%[[X:.*]]: tensor<2x5x8xf16>)
// CHECK-DAG: %[[W:.*]] = fluid.cast %[[X]] : tensor<2x5x8xf16> -> tensor<2x5x8xf32>
// CHECK-DAG: %[[S:.*]] = fluid.slice %[[X]] {axis = 1 : i64, offset = 0 : i64} : tensor<2x5x8xf16> -> tensor<2x1x8xf16>
// CHECK-DAG: %[[SW:.*]] = fluid.cast %[[S]] : tensor<2x1x8xf16> -> tensor<2x1x8xf32>
// CHECK: return %[[SW]], %[[W]]
func.func @class_token(%x: tensor<2x5x8xf16>) -> (tensor<2x1x8xf32>, tensor<2x5x8xf32>) {
  %w = fluid.cast %x : tensor<2x5x8xf16> -> tensor<2x5x8xf32>
  %s = fluid.slice %w {axis = 1 : i64, offset = 0 : i64} : tensor<2x5x8xf32> -> tensor<2x1x8xf32>
  return %s, %w : tensor<2x1x8xf32>, tensor<2x5x8xf32>
}

// -----

// Not moved: a widening that is not from 16 bits (f32 -> f64), an op that
// is not pure data movement (relu), and a cast back to another type
// (bf16 -> f32 -> f16 rounds). A value rounded to bf16 and widened again
// is a widened bf16 value like any other: its transpose moves bf16.
// CHECK-LABEL: func.func @not_moved
// CHECK-SAME: (%[[A:.*]]: tensor<2x3xf32>, %[[B:.*]]: tensor<2x3xbf16>)
// CHECK: fluid.transpose %{{.*}} : tensor<2x3xf64> -> tensor<3x2xf64>
// CHECK: %[[ROUND:.*]] = fluid.cast %[[A]] : tensor<2x3xf32> -> tensor<2x3xbf16>
// CHECK: %[[BACK:.*]] = fluid.cast %[[ROUND]] : tensor<2x3xbf16> -> tensor<2x3xf32>
// CHECK: %[[T:.*]] = fluid.transpose %[[ROUND]] {{.*}} : tensor<2x3xbf16> -> tensor<3x2xbf16>
// CHECK: fluid.cast %[[T]] : tensor<3x2xbf16> -> tensor<3x2xf32>
// CHECK: fluid.relu %[[BACK]] : tensor<2x3xf32>
// CHECK: %[[WB:.*]] = fluid.cast %[[B]] : tensor<2x3xbf16> -> tensor<2x3xf32>
// CHECK: fluid.cast %[[WB]] : tensor<2x3xf32> -> tensor<2x3xf16>
func.func @not_moved(%a: tensor<2x3xf32>, %b: tensor<2x3xbf16>) -> (tensor<3x2xf64>, tensor<3x2xf32>, tensor<2x3xf32>, tensor<2x3xf16>) {
  %a64 = fluid.cast %a : tensor<2x3xf32> -> tensor<2x3xf64>
  %t64 = fluid.transpose %a64 {permutation = array<i64: 1, 0>} : tensor<2x3xf64> -> tensor<3x2xf64>
  %round = fluid.cast %a : tensor<2x3xf32> -> tensor<2x3xbf16>
  %back = fluid.cast %round : tensor<2x3xbf16> -> tensor<2x3xf32>
  %t = fluid.transpose %back {permutation = array<i64: 1, 0>} : tensor<2x3xf32> -> tensor<3x2xf32>
  %relu = fluid.relu %back : tensor<2x3xf32>
  %wb = fluid.cast %b : tensor<2x3xbf16> -> tensor<2x3xf32>
  %h = fluid.cast %wb : tensor<2x3xf32> -> tensor<2x3xf16>
  return %t64, %t, %relu, %h : tensor<3x2xf64>, tensor<3x2xf32>, tensor<2x3xf32>, tensor<2x3xf16>
}


// -----

// A layer norm's f32 output flattened for a bf16 matrix product: the cast
// moves before the reshape (a generated kernel can then write bf16); a
// transpose that an f32 op also reads, and a slice, stay f32.
// CHECK-LABEL: func.func @narrowed_before
// CHECK-SAME: (%[[X:.*]]: tensor<2x5x8xf32>)
// CHECK: %[[N:.*]] = fluid.cast %[[X]] : tensor<2x5x8xf32> -> tensor<2x5x8xbf16>
// CHECK: %[[R:.*]] = fluid.reshape %[[N]] : tensor<2x5x8xbf16> -> tensor<10x8xbf16>
// CHECK: %[[T:.*]] = fluid.transpose %[[X]] {{.*}} : tensor<2x5x8xf32> -> tensor<2x8x5xf32>
// CHECK: %[[TN:.*]] = fluid.cast %[[T]] : tensor<2x8x5xf32> -> tensor<2x8x5xbf16>
// CHECK: %[[S:.*]] = fluid.slice %[[X]] {{.*}} : tensor<2x5x8xf32> -> tensor<2x1x8xf32>
// CHECK: %[[SN:.*]] = fluid.cast %[[S]] : tensor<2x1x8xf32> -> tensor<2x1x8xbf16>
// CHECK: return %[[R]], %[[TN]], %[[T]], %[[SN]]
func.func @narrowed_before(%x: tensor<2x5x8xf32>) -> (tensor<10x8xbf16>, tensor<2x8x5xbf16>, tensor<2x8x5xf32>, tensor<2x1x8xbf16>) {
  %r = fluid.reshape %x : tensor<2x5x8xf32> -> tensor<10x8xf32>
  %rn = fluid.cast %r : tensor<10x8xf32> -> tensor<10x8xbf16>
  %t = fluid.transpose %x {permutation = array<i64: 0, 2, 1>} : tensor<2x5x8xf32> -> tensor<2x8x5xf32>
  %tn = fluid.cast %t : tensor<2x8x5xf32> -> tensor<2x8x5xbf16>
  %s = fluid.slice %x {axis = 1 : i64, offset = 0 : i64} : tensor<2x5x8xf32> -> tensor<2x1x8xf32>
  %sn = fluid.cast %s : tensor<2x1x8xf32> -> tensor<2x1x8xbf16>
  return %rn, %tn, %t, %sn : tensor<10x8xbf16>, tensor<2x8x5xbf16>, tensor<2x8x5xf32>, tensor<2x1x8xbf16>
}

// -----

// A view that a generated kernel applies as it loads (a slice at offset 0
// that an add reads) stays on the widened value: the kernel reads the bf16
// tensor already, and fused views are of f32 values. The same slice read by
// a narrowing cast moves, and both casts go.
// CHECK-LABEL: func.func @absorbed_view
// CHECK-SAME: (%[[X:.*]]: tensor<2x5x8xbf16>, %[[Y:.*]]: tensor<2x1x8xf32>)
// CHECK: %[[W:.*]] = fluid.cast %[[X]] : tensor<2x5x8xbf16> -> tensor<2x5x8xf32>
// CHECK: %[[S:.*]] = fluid.slice %[[W]] {{.*}} : tensor<2x5x8xf32> -> tensor<2x1x8xf32>
// CHECK: %[[A:.*]] = fluid.add %[[S]], %[[Y]]
// CHECK: %[[S16:.*]] = fluid.slice %[[X]] {{.*}} : tensor<2x5x8xbf16> -> tensor<2x1x8xbf16>
// CHECK-NOT: fluid.cast
// CHECK: return %[[A]], %[[S16]]
func.func @absorbed_view(%x: tensor<2x5x8xbf16>, %y: tensor<2x1x8xf32>) -> (tensor<2x1x8xf32>, tensor<2x1x8xbf16>) {
  %w = fluid.cast %x : tensor<2x5x8xbf16> -> tensor<2x5x8xf32>
  %s = fluid.slice %w {axis = 1 : i64, offset = 0 : i64} : tensor<2x5x8xf32> -> tensor<2x1x8xf32>
  %a = fluid.add %s, %y : tensor<2x1x8xf32>, tensor<2x1x8xf32> -> tensor<2x1x8xf32>
  %s2 = fluid.slice %w {axis = 1 : i64, offset = 0 : i64} : tensor<2x5x8xf32> -> tensor<2x1x8xf32>
  %n = fluid.cast %s2 : tensor<2x1x8xf32> -> tensor<2x1x8xbf16>
  return %a, %n : tensor<2x1x8xf32>, tensor<2x1x8xbf16>
}

// -----

// ResNet's stem: max pooling of a widened bf16 activation pools the bf16
// tensor (its picks unchanged), whose output the next convolution's
// narrowing cast then takes as it is; channels-last max pooling without
// picks widens its bf16 result for an f32 reader. Average pooling, which
// adds, is not moved.
// CHECK-LABEL: func.func @stem_pool
// CHECK-SAME: (%[[X:.*]]: tensor<2x8x8x4xbf16>)
// CHECK: %[[W:.*]] = fluid.cast %[[X]] : tensor<2x8x8x4xbf16> -> tensor<2x8x8x4xf32>
// CHECK: %[[Y:.*]], %[[I:.*]] = fluid.max_pool2d_with_indices %[[X]] {{{.*}}channels_last{{.*}}} : tensor<2x8x8x4xbf16> -> tensor<2x4x4x4xbf16>, tensor<2x4x4x4xui8>
// CHECK: %[[P:.*]] = fluid.max_pool2d %[[X]] {{{.*}}} : tensor<2x8x8x4xbf16> -> tensor<2x4x4x4xbf16>
// CHECK: %[[PW:.*]] = fluid.cast %[[P]] : tensor<2x4x4x4xbf16> -> tensor<2x4x4x4xf32>
// CHECK: %[[A:.*]] = fluid.avg_pool2d %[[W]]
// CHECK: return %[[Y]], %[[I]], %[[PW]], %[[A]]
func.func @stem_pool(%x: tensor<2x8x8x4xbf16>) -> (tensor<2x4x4x4xbf16>, tensor<2x4x4x4xui8>, tensor<2x4x4x4xf32>, tensor<2x8x8x2xf32>) {
  %w = fluid.cast %x : tensor<2x8x8x4xbf16> -> tensor<2x8x8x4xf32>
  %y, %i = fluid.max_pool2d_with_indices %w {channels_last, kernel_size = array<i64: 3, 3>, strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>} : tensor<2x8x8x4xf32> -> tensor<2x4x4x4xf32>, tensor<2x4x4x4xui8>
  %n = fluid.cast %y : tensor<2x4x4x4xf32> -> tensor<2x4x4x4xbf16>
  %p = fluid.max_pool2d %w {channels_last, kernel_size = array<i64: 2, 2>, strides = array<i64: 2, 2>} : tensor<2x8x8x4xf32> -> tensor<2x4x4x4xf32>
  %a = fluid.avg_pool2d %w {kernel_size = array<i64: 1, 2>, strides = array<i64: 1, 2>} : tensor<2x8x8x4xf32> -> tensor<2x8x8x2xf32>
  return %n, %i, %p, %a : tensor<2x4x4x4xbf16>, tensor<2x4x4x4xui8>, tensor<2x4x4x4xf32>, tensor<2x8x8x2xf32>
}

// -----

// A max-pooling gradient of a widened bf16 gradient that only its
// narrowing to bf16 reads (what --fluid-narrow-gradients leaves) is
// computed in bf16: from the picks, and from the input where it is a
// widening of the same type. Not where the narrowing is to another type,
// where the input is f32, or where another op reads the f32 sums.
// CHECK-LABEL: func.func @pool_gradient
// CHECK-SAME: (%[[G:.*]]: tensor<2x4x4x4xbf16>, %[[I:.*]]: tensor<2x4x4x4xui8>, %[[X:.*]]: tensor<2x8x8x4xbf16>, %[[F:.*]]: tensor<2x8x8x4xf32>)
// CHECK-DAG: %[[A:.*]] = fluid.max_pool2d_grad_indices %[[G]], %[[I]] {{{.*}}} : tensor<2x4x4x4xbf16>, tensor<2x4x4x4xui8> -> tensor<2x8x8x4xbf16>
// CHECK-DAG: %[[B:.*]] = fluid.max_pool2d_grad %[[G]], %[[X]] {{{.*}}} : tensor<2x4x4x4xbf16>, tensor<2x8x8x4xbf16>
// CHECK-DAG: %[[C:.*]] = fluid.max_pool2d_grad_indices %{{.*}}, %[[I]] {{.*}} -> tensor<2x8x8x4xf32>
// CHECK-DAG: fluid.cast %[[C]] : tensor<2x8x8x4xf32> -> tensor<2x8x8x4xf16>
// CHECK-DAG: %[[D:.*]] = fluid.max_pool2d_grad %{{.*}}, %[[F]] {{{.*}}} : tensor<2x4x4x4xf32>, tensor<2x8x8x4xf32>
// CHECK-DAG: fluid.cast %[[D]] : tensor<2x8x8x4xf32> -> tensor<2x8x8x4xbf16>
// CHECK-DAG: %[[E:.*]] = fluid.max_pool2d_grad_indices %{{.*}}, %[[I]] {{.*}} -> tensor<2x8x8x4xf32>
// CHECK-DAG: fluid.cast %[[E]] : tensor<2x8x8x4xf32> -> tensor<2x8x8x4xbf16>
// CHECK: return %[[A]], %[[B]]
func.func @pool_gradient(%g: tensor<2x4x4x4xbf16>, %i: tensor<2x4x4x4xui8>, %x: tensor<2x8x8x4xbf16>, %f: tensor<2x8x8x4xf32>) -> (tensor<2x8x8x4xbf16>, tensor<2x8x8x4xbf16>, tensor<2x8x8x4xf16>, tensor<2x8x8x4xbf16>, tensor<2x8x8x4xbf16>, tensor<2x8x8x4xf32>) {
  %gw = fluid.cast %g : tensor<2x4x4x4xbf16> -> tensor<2x4x4x4xf32>
  %xw = fluid.cast %x : tensor<2x8x8x4xbf16> -> tensor<2x8x8x4xf32>
  %a = fluid.max_pool2d_grad_indices %gw, %i {channels_last, kernel_size = array<i64: 3, 3>, strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>} : tensor<2x4x4x4xf32>, tensor<2x4x4x4xui8> -> tensor<2x8x8x4xf32>
  %an = fluid.cast %a : tensor<2x8x8x4xf32> -> tensor<2x8x8x4xbf16>
  %b = fluid.max_pool2d_grad %gw, %xw {channels_last, kernel_size = array<i64: 3, 3>, strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>} : tensor<2x4x4x4xf32>, tensor<2x8x8x4xf32>
  %bn = fluid.cast %b : tensor<2x8x8x4xf32> -> tensor<2x8x8x4xbf16>
  %c = fluid.max_pool2d_grad_indices %gw, %i {channels_last, kernel_size = array<i64: 3, 3>, strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>} : tensor<2x4x4x4xf32>, tensor<2x4x4x4xui8> -> tensor<2x8x8x4xf32>
  %cn = fluid.cast %c : tensor<2x8x8x4xf32> -> tensor<2x8x8x4xf16>
  %d = fluid.max_pool2d_grad %gw, %f {channels_last, kernel_size = array<i64: 3, 3>, strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>} : tensor<2x4x4x4xf32>, tensor<2x8x8x4xf32>
  %dn = fluid.cast %d : tensor<2x8x8x4xf32> -> tensor<2x8x8x4xbf16>
  %e = fluid.max_pool2d_grad_indices %gw, %i {channels_last, kernel_size = array<i64: 3, 3>, strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>} : tensor<2x4x4x4xf32>, tensor<2x4x4x4xui8> -> tensor<2x8x8x4xf32>
  %en = fluid.cast %e : tensor<2x8x8x4xf32> -> tensor<2x8x8x4xbf16>
  return %an, %bn, %cn, %dn, %en, %e : tensor<2x8x8x4xbf16>, tensor<2x8x8x4xbf16>, tensor<2x8x8x4xf16>, tensor<2x8x8x4xbf16>, tensor<2x8x8x4xbf16>, tensor<2x8x8x4xf32>
}
