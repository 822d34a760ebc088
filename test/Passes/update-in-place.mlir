// --fluid-update-in-place: updates whose kernel may write over its inputs
// write the parameter's buffer directly; the fresh buffer and the copy go.
// RUN: fluid-opt %s -split-input-file --fluid-update-in-place | FileCheck %s --enable-var-scope

fluid.param @w : tensor<4xf32> init ones
fluid.param @v : tensor<4xf32> init zeros {trainable = false}
fluid.param @step : tensor<i64> init zeros {trainable = false}

// CHECK-LABEL: func.func @updates
func.func @updates(%g: memref<4xf32>, %lr: memref<f32>) {
  %w = fluid_rt.param_ref @w : memref<4xf32>
  %v = fluid_rt.param_ref @v : memref<4xf32>
  // CHECK: %[[W:.+]] = fluid_rt.param_ref @w
  // CHECK: %[[V:.+]] = fluid_rt.param_ref @v
  // CHECK: %[[W2:.+]] = fluid_rt.param_ref @w
  // CHECK: %[[V2:.+]] = fluid_rt.param_ref @v
  // CHECK: fluid_rt.launch "momentum" ins(%[[W]], %{{.+}}, %[[V]], %{{.+}} : {{.+}}) outs(%[[W2]], %[[V2]] : memref<4xf32>, memref<4xf32>)
  %nw = memref.alloc() : memref<4xf32>
  %nv = memref.alloc() : memref<4xf32>
  fluid_rt.launch "momentum" ins(%w, %g, %v, %lr : memref<4xf32>, memref<4xf32>, memref<4xf32>, memref<f32>) outs(%nw, %nv : memref<4xf32>, memref<4xf32>) params {}
  %w_out = fluid_rt.param_ref @w : memref<4xf32>
  memref.copy %nw, %w_out : memref<4xf32> to memref<4xf32>
  %v_out = fluid_rt.param_ref @v : memref<4xf32>
  memref.copy %nv, %v_out : memref<4xf32> to memref<4xf32>
  // The step counter: a same-shape add.
  // CHECK: %[[S:.+]] = fluid_rt.param_ref @step
  // CHECK: %[[S2:.+]] = fluid_rt.param_ref @step
  // CHECK: fluid_rt.launch "add" ins(%[[S]], %{{.+}} : memref<i64>, memref<i64>) outs(%[[S2]] : memref<i64>)
  // CHECK-NOT: memref.copy
  // CHECK-NOT: memref.alloc() : memref<4xf32>
  %s = fluid_rt.param_ref @step : memref<i64>
  %one = memref.alloc() : memref<i64>
  fluid_rt.launch "constant" outs(%one : memref<i64>) params {value = dense<1> : tensor<i64>}
  %ns = memref.alloc() : memref<i64>
  fluid_rt.launch "add" ins(%s, %one : memref<i64>, memref<i64>) outs(%ns : memref<i64>) params {}
  %s_out = fluid_rt.param_ref @step : memref<i64>
  memref.copy %ns, %s_out : memref<i64> to memref<i64>
  return
}

// -----

fluid.param @w : tensor<4xf32> init ones

// Left alone: the parameter is read between the update and the copy, and a
// kernel (softmax) that may not write over its inputs.
// CHECK-LABEL: func.func @kept
// CHECK: fluid_rt.launch "sgd" {{.+}} outs(%[[NEW:[^ ]+]] : memref<4xf32>)
// CHECK: fluid_rt.launch "relu"
// CHECK: memref.copy %[[NEW]]
// CHECK: fluid_rt.launch "softmax" {{.+}} outs(%[[R:[^ ]+]] : memref<4xf32>)
// CHECK: memref.copy %[[R]]
func.func @kept(%g: memref<4xf32>, %lr: memref<f32>, %out: memref<4xf32>) {
  %w = fluid_rt.param_ref @w : memref<4xf32>
  %new = memref.alloc() : memref<4xf32>
  fluid_rt.launch "sgd" ins(%w, %g, %lr : memref<4xf32>, memref<4xf32>, memref<f32>) outs(%new : memref<4xf32>) params {}
  fluid_rt.launch "relu" ins(%w : memref<4xf32>) outs(%out : memref<4xf32>) params {}
  %w2 = fluid_rt.param_ref @w : memref<4xf32>
  memref.copy %new, %w2 : memref<4xf32> to memref<4xf32>
  %r = memref.alloc() : memref<4xf32>
  fluid_rt.launch "softmax" ins(%g : memref<4xf32>) outs(%r : memref<4xf32>) params {axis = 0 : i64}
  %w3 = fluid_rt.param_ref @w : memref<4xf32>
  memref.copy %r, %w3 : memref<4xf32> to memref<4xf32>
  return
}

// -----

fluid.param @a : tensor<4xf32> init ones
fluid.param @b : tensor<4xf32> init ones

// A grouped update writes each entry's own parameter in place; a copy of
// one entry's result into another entry's parameter stays (the kernel runs
// entries in parallel, so entry 0's output must not be entry 1's input).
// CHECK-LABEL: func.func @group
// CHECK-DAG: %[[A:.+]] = fluid_rt.param_ref @a
// CHECK-DAG: %[[B:.+]] = fluid_rt.param_ref @b
// CHECK: %[[A2:.+]] = fluid_rt.param_ref @a
// CHECK: fluid_rt.launch "sgd_group" ins(%[[A]], %[[B]], %{{.+}}, %{{.+}}, %{{.+}} : {{.+}}) outs(%[[A2]], %[[FRESH:.+]] : memref<4xf32>, memref<4xf32>)
// CHECK: memref.copy %[[FRESH]], %{{.+}} : memref<4xf32> to memref<4xf32>
func.func @group(%g: memref<4xf32>, %lr: memref<f32>) {
  %a = fluid_rt.param_ref @a : memref<4xf32>
  %b = fluid_rt.param_ref @b : memref<4xf32>
  %na = memref.alloc() : memref<4xf32>
  %nb = memref.alloc() : memref<4xf32>
  fluid_rt.launch "sgd_group" ins(%a, %b, %g, %g, %lr : memref<4xf32>, memref<4xf32>, memref<4xf32>, memref<4xf32>, memref<f32>) outs(%na, %nb : memref<4xf32>, memref<4xf32>) params {operandSegmentSizes = array<i32: 2, 2, 1, 0>}
  %a_out = fluid_rt.param_ref @a : memref<4xf32>
  memref.copy %na, %a_out : memref<4xf32> to memref<4xf32>
  %wrong = fluid_rt.param_ref @a : memref<4xf32>
  memref.copy %nb, %wrong : memref<4xf32> to memref<4xf32>
  return
}
