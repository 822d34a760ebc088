// RUN: fluid-opt %s --fluid-widening-reductions --split-input-file | FileCheck %s

// A mean of a bf16 value widened to f32 reads the bf16 value; the cast,
// read by nothing else, goes.
// CHECK-LABEL: func.func @squeeze
// CHECK-SAME: (%[[X:.*]]: tensor<2x7x7x64xbf16>)
// CHECK-NOT: fluid.cast
// CHECK: %[[M:.*]] = fluid.mean %[[X]] {axes = array<i64: 1, 2>} : tensor<2x7x7x64xbf16> -> tensor<2x64xf32>
// CHECK: return %[[M]]
func.func @squeeze(%x: tensor<2x7x7x64xbf16>) -> tensor<2x64xf32> {
  %w = fluid.cast %x : tensor<2x7x7x64xbf16> -> tensor<2x7x7x64xf32>
  %m = fluid.mean %w {axes = array<i64: 1, 2>} : tensor<2x7x7x64xf32> -> tensor<2x64xf32>
  return %m : tensor<2x64xf32>
}

// -----

// sum_to and reduce_sum of f16 too; a cast something else reads stays.
// CHECK-LABEL: func.func @shared
// CHECK-SAME: (%[[X:.*]]: tensor<2x8x4x4xf16>)
// CHECK: %[[W:.*]] = fluid.cast %[[X]] : tensor<2x8x4x4xf16> -> tensor<2x8x4x4xf32>
// CHECK: fluid.sum_to %[[X]] : tensor<2x8x4x4xf16> -> tensor<2x8x1x1xf32>
// CHECK: fluid.reduce_sum %[[X]] {axes = array<i64: 2>} : tensor<2x8x4x4xf16> -> tensor<2x8x4xf32>
// CHECK: fluid.relu %[[W]]
func.func @shared(%x: tensor<2x8x4x4xf16>) -> (tensor<2x8x1x1xf32>, tensor<2x8x4xf32>, tensor<2x8x4x4xf32>) {
  %w = fluid.cast %x : tensor<2x8x4x4xf16> -> tensor<2x8x4x4xf32>
  %s = fluid.sum_to %w : tensor<2x8x4x4xf32> -> tensor<2x8x1x1xf32>
  %r = fluid.reduce_sum %w {axes = array<i64: 2>} : tensor<2x8x4x4xf32> -> tensor<2x8x4xf32>
  %y = fluid.relu %w : tensor<2x8x4x4xf32>
  return %s, %r, %y : tensor<2x8x1x1xf32>, tensor<2x8x4xf32>, tensor<2x8x4x4xf32>
}

// -----

// Left alone: batch norm's statistics sum (a generated kernel's, which
// reads the widening cast as it loads), a sum of an f32 value, a cast to
// f64, and a narrowing cast.
// CHECK-LABEL: func.func @untouched
// CHECK: %[[W:.*]] = fluid.cast %{{.*}} : tensor<2x8x4x4xbf16> -> tensor<2x8x4x4xf32>
// CHECK: fluid.reduce_sum %[[W]] {axes = array<i64: 0, 2, 3>} : tensor<2x8x4x4xf32> -> tensor<8xf32>
// CHECK: %[[D:.*]] = fluid.cast %{{.*}} : tensor<2x8x4x4xbf16> -> tensor<2x8x4x4xf64>
// CHECK: fluid.mean %[[D]] : tensor<2x8x4x4xf64> -> tensor<f64>
// CHECK: %[[N:.*]] = fluid.cast %{{.*}} : tensor<2x8xf64> -> tensor<2x8xf32>
// CHECK: fluid.sum_to %[[N]] : tensor<2x8xf32> -> tensor<8xf32>
func.func @untouched(%x: tensor<2x8x4x4xbf16>, %y: tensor<2x8xf64>) -> (tensor<8xf32>, tensor<f64>, tensor<8xf32>) {
  %w = fluid.cast %x : tensor<2x8x4x4xbf16> -> tensor<2x8x4x4xf32>
  %s = fluid.reduce_sum %w {axes = array<i64: 0, 2, 3>} : tensor<2x8x4x4xf32> -> tensor<8xf32>
  %d = fluid.cast %x : tensor<2x8x4x4xbf16> -> tensor<2x8x4x4xf64>
  %m = fluid.mean %d : tensor<2x8x4x4xf64> -> tensor<f64>
  %n = fluid.cast %y : tensor<2x8xf64> -> tensor<2x8xf32>
  %t = fluid.sum_to %n : tensor<2x8xf32> -> tensor<8xf32>
  return %s, %m, %t : tensor<8xf32>, tensor<f64>, tensor<8xf32>
}
