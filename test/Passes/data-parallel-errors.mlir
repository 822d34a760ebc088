// Programs --fluid-data-parallel refuses, and malformed all-reduces: a
// clear error naming the problem.
// RUN: not fluid-opt %s -split-input-file --fluid-data-parallel 2>&1 | FileCheck %s
// RUN: not fluid-opt %s --fluid-data-parallel="bucket-bytes=-1" 2>&1 | FileCheck %s --check-prefix=OPTION

// OPTION: bucket-bytes

fluid.param @w : tensor<4xf32> init ones

// CHECK: error: 'fluid.all_reduce_mean' op is already in @twice: --fluid-data-parallel runs once per program
func.func @twice(%g: tensor<4xf32>, %lr: tensor<f32>) {
  %r = fluid.all_reduce_mean (%g) {bucket = 0 : i64} : (tensor<4xf32>)
  %w = fluid.get_param @w : tensor<4xf32>
  %nw = fluid.sgd %w, %r, %lr : tensor<4xf32>, tensor<f32>
  fluid.set_param @w, %nw : tensor<4xf32>
  return
}

// -----

// CHECK: error: 'fluid.all_reduce_mean' op needs at least one tensor
func.func @empty() {
  "fluid.all_reduce_mean"() {bucket = 0 : i64} : () -> ()
  return
}

// -----

// CHECK: error: 'fluid.all_reduce_mean' op has bucket -2; buckets are numbered from 0
func.func @bucket(%g: tensor<4xf32>) -> tensor<4xf32> {
  %r = fluid.all_reduce_mean (%g) {bucket = -2 : i64} : (tensor<4xf32>)
  return %r : tensor<4xf32>
}

// -----

// CHECK: error: 'fluid.all_reduce_mean' op entry 0: result of type 'tensor<4xf64>', but the input is 'tensor<4xf32>'
func.func @types(%g: tensor<4xf32>) -> tensor<4xf64> {
  %r = "fluid.all_reduce_mean"(%g) {bucket = 0 : i64} : (tensor<4xf32>) -> tensor<4xf64>
  return %r : tensor<4xf64>
}
