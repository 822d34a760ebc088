// Folders: constants fold and deduplicate, a reshape to the same type
// disappears, and nothing with a parameter effect is removed or merged.
// RUN: fluid-opt %s -split-input-file -canonicalize -cse | FileCheck %s --enable-var-scope

// CHECK-LABEL: func.func @identity_reshape
// CHECK-SAME: (%[[X:.*]]: tensor<2x3xf32>)
// CHECK-NEXT: return %[[X]]
func.func @identity_reshape(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = fluid.reshape %x : tensor<2x3xf32> -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// CHECK-LABEL: func.func @real_reshape
// CHECK: fluid.reshape %{{.*}} : tensor<2x3xf32> -> tensor<6xf32>
func.func @real_reshape(%x: tensor<2x3xf32>) -> tensor<6xf32> {
  %0 = fluid.reshape %x : tensor<2x3xf32> -> tensor<6xf32>
  return %0 : tensor<6xf32>
}

// -----

// Equal constants merge, unused ones go, and then so do equal pure ops.
// CHECK-LABEL: func.func @constants
// CHECK: %[[C:.*]] = fluid.constant dense<2.000000e+00> : tensor<f32>
// CHECK-NOT: fluid.constant
// CHECK: %[[M:.*]] = fluid.mul %{{.*}}, %[[C]]
// CHECK-NOT: fluid.mul
// CHECK: return %[[M]], %[[M]]
func.func @constants(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %a = fluid.constant dense<2.0> : tensor<f32>
  %b = fluid.constant dense<2.0> : tensor<f32>
  %unused = fluid.constant dense<3.0> : tensor<f32>
  %0 = fluid.mul %x, %a : tensor<4xf32>, tensor<f32> -> tensor<4xf32>
  %1 = fluid.mul %x, %b : tensor<4xf32>, tensor<f32> -> tensor<4xf32>
  return %0, %1 : tensor<4xf32>, tensor<4xf32>
}

// -----

fluid.param @w : tensor<4xf32> init zeros

// Two reads around a write must both stay: the write changes the value.
// An unused pure op goes away; the write stays.
// CHECK-LABEL: func.func @param_effects
// CHECK: %[[R1:.*]] = fluid.get_param @w
// CHECK-NOT: fluid.relu
// CHECK: fluid.set_param @w, %{{.*}}
// CHECK: %[[R2:.*]] = fluid.get_param @w
// CHECK: return %[[R1]], %[[R2]]
func.func @param_effects(%v: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %0 = fluid.get_param @w : tensor<4xf32>
  %dead = fluid.relu %0 : tensor<4xf32>
  fluid.set_param @w, %v : tensor<4xf32>
  %1 = fluid.get_param @w : tensor<4xf32>
  return %0, %1 : tensor<4xf32>, tensor<4xf32>
}

// -----

fluid.param @w : tensor<4xf32> init zeros

// Without a write in between, two reads are the same value.
// CHECK-LABEL: func.func @repeated_reads
// CHECK: %[[R:.*]] = fluid.get_param @w
// CHECK-NOT: fluid.get_param
// CHECK: return %[[R]], %[[R]]
func.func @repeated_reads() -> (tensor<4xf32>, tensor<4xf32>) {
  %0 = fluid.get_param @w : tensor<4xf32>
  %1 = fluid.get_param @w : tensor<4xf32>
  return %0, %1 : tensor<4xf32>, tensor<4xf32>
}
