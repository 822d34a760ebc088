// --fluid-bufferize: parameters become their persistent buffers, values
// fresh buffers, ops kernel launches; set_param copies into the parameter;
// a read still used after an overwrite is snapshotted; reshapes are views.
// RUN: fluid-opt %s -split-input-file --fluid-bufferize | FileCheck %s --enable-var-scope

fluid.param @w : tensor<2x3xf32> init ones
fluid.param @m : tensor<3xf32> init zeros {trainable = false}

// CHECK-LABEL: func.func @step(
// CHECK-SAME: %[[X:.+]]: memref<4x2xf32>) -> memref<f32>
func.func @step(%x: tensor<4x2xf32>) -> tensor<f32> {
  // CHECK: %[[W:.+]] = fluid_rt.param_ref @w : memref<2x3xf32>
  %w = fluid.get_param @w : tensor<2x3xf32>
  // CHECK: %[[Y:.+]] = memref.alloc() : memref<4x3xf32>
  // CHECK: fluid_rt.launch "matmul" ins(%[[X]], %[[W]] : memref<4x2xf32>, memref<2x3xf32>) outs(%[[Y]] : memref<4x3xf32>) params {}
  %y = fluid.matmul %x, %w : tensor<4x2xf32>, tensor<2x3xf32> -> tensor<4x3xf32>
  // The old value of @m is read after @m is overwritten: it is copied.
  // CHECK: %[[MREF:.+]] = fluid_rt.param_ref @m : memref<3xf32>
  // CHECK: %[[SNAP:.+]] = memref.alloc() : memref<3xf32>
  // CHECK: memref.copy %[[MREF]], %[[SNAP]]
  %m = fluid.get_param @m : tensor<3xf32>
  // CHECK: %[[S:.+]] = memref.alloc() : memref<3xf32>
  // CHECK: fluid_rt.launch "reduce_sum" ins(%[[Y]] : memref<4x3xf32>) outs(%[[S]] : memref<3xf32>) params {axes = array<i64: 0>}
  %s = fluid.reduce_sum %y {axes = array<i64: 0>} : tensor<4x3xf32> -> tensor<3xf32>
  // CHECK: %[[M2:.+]] = fluid_rt.param_ref @m : memref<3xf32>
  // CHECK: memref.copy %[[S]], %[[M2]]
  fluid.set_param @m, %s : tensor<3xf32>
  // CHECK: %[[D:.+]] = memref.alloc() : memref<3xf32>
  // CHECK: fluid_rt.launch "sub" ins(%[[S]], %[[SNAP]] : memref<3xf32>, memref<3xf32>) outs(%[[D]] : memref<3xf32>)
  %d = fluid.sub %s, %m : tensor<3xf32>, tensor<3xf32> -> tensor<3xf32>
  // CHECK: %[[V:.+]] = fluid_rt.view %[[D]] : memref<3xf32> -> memref<1x3xf32>
  %v = fluid.reshape %d : tensor<3xf32> -> tensor<1x3xf32>
  // CHECK: %[[L:.+]] = memref.alloc() : memref<f32>
  // CHECK: fluid_rt.launch "mean" ins(%[[V]] : memref<1x3xf32>) outs(%[[L]] : memref<f32>) params {}
  %l = fluid.mean %v : tensor<1x3xf32> -> tensor<f32>
  // CHECK: return %[[L]] : memref<f32>
  return %l : tensor<f32>
}

// -----

fluid.param @w : tensor<3xf32> init ones

// A constant is a launch of the constant kernel; a parameter returned as
// it is goes out as a copy, so the caller never sees later updates.
// CHECK-LABEL: func.func @constants
// CHECK: %[[C:.+]] = memref.alloc() : memref<3xf32>
// CHECK: fluid_rt.launch "constant" outs(%[[C]] : memref<3xf32>) params {value = dense<2.000000e+00> : tensor<3xf32>}
// CHECK: %[[W:.+]] = fluid_rt.param_ref @w
// CHECK: %[[COPY:.+]] = memref.alloc() : memref<3xf32>
// CHECK: memref.copy %[[W]], %[[COPY]]
// CHECK: return %[[C]], %[[COPY]]
func.func @constants() -> (tensor<3xf32>, tensor<3xf32>) {
  %c = fluid.constant dense<2.0> : tensor<3xf32>
  %w = fluid.get_param @w : tensor<3xf32>
  return %c, %w : tensor<3xf32>, tensor<3xf32>
}
