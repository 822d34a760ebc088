// --fluid-insert-frees: every temporary is freed right after the last op
// that uses it through any view; parameters, arguments, results and
// constants never are. Running the pass twice adds nothing.
// RUN: fluid-opt %s -split-input-file --fluid-insert-frees | FileCheck %s --enable-var-scope
// RUN: fluid-opt %s -split-input-file --fluid-insert-frees --fluid-insert-frees | FileCheck %s --enable-var-scope

fluid.param @w : tensor<6xf32> init ones

// CHECK-LABEL: func.func @step(
// CHECK-SAME: %[[X:.+]]: memref<6xf32>
func.func @step(%x: memref<6xf32>) -> memref<f32> {
  // CHECK: %[[W:.+]] = fluid_rt.param_ref @w
  %w = fluid_rt.param_ref @w : memref<6xf32>
  // CHECK: %[[A:.+]] = memref.alloc() : memref<6xf32>
  // CHECK-NEXT: fluid_rt.launch "mul" ins(%[[X]], %[[W]] : {{.*}}) outs(%[[A]] :
  %a = memref.alloc() : memref<6xf32>
  fluid_rt.launch "mul" ins(%x, %w : memref<6xf32>, memref<6xf32>) outs(%a : memref<6xf32>) params {}
  // %a lives on through its view %v: it is not freed after the view.
  // CHECK-NEXT: %[[V:.+]] = fluid_rt.view %[[A]]
  // CHECK-NEXT: %[[B:.+]] = memref.alloc() : memref<2x3xf32>
  // CHECK-NEXT: fluid_rt.launch "relu" ins(%[[V]] : {{.*}}) outs(%[[B]] :
  %v = fluid_rt.view %a : memref<6xf32> -> memref<2x3xf32>
  %b = memref.alloc() : memref<2x3xf32>
  fluid_rt.launch "relu" ins(%v : memref<2x3xf32>) outs(%b : memref<2x3xf32>) params {}
  // The last use of %a (through %v) and of %b: both freed after it, in
  // the order of their allocation.
  // CHECK-NEXT: %[[C:.+]] = memref.alloc() : memref<2x3xf32>
  // CHECK-NEXT: fluid_rt.launch "add" ins(%[[V]], %[[B]] : {{.*}}) outs(%[[C]] :
  // CHECK-NEXT: memref.dealloc %[[A]]
  // CHECK-NEXT: memref.dealloc %[[B]]
  %c = memref.alloc() : memref<2x3xf32>
  fluid_rt.launch "add" ins(%v, %b : memref<2x3xf32>, memref<2x3xf32>) outs(%c : memref<2x3xf32>) params {}
  // An allocation nothing uses is freed right away.
  // CHECK-NEXT: %[[U:.+]] = memref.alloc() : memref<4xf32>
  // CHECK-NEXT: memref.dealloc %[[U]]
  %unused = memref.alloc() : memref<4xf32>
  // The parameter is written from %c; %c is freed after the copy, never
  // the parameter.
  // CHECK-NEXT: %[[W2:.+]] = fluid_rt.param_ref @w
  // CHECK-NEXT: %[[CV:.+]] = fluid_rt.view %[[C]]
  // CHECK-NEXT: memref.copy %[[CV]], %[[W2]]
  %w2 = fluid_rt.param_ref @w : memref<6xf32>
  %cv = fluid_rt.view %c : memref<2x3xf32> -> memref<6xf32>
  memref.copy %cv, %w2 : memref<6xf32> to memref<6xf32>
  // CHECK-NEXT: %[[L:.+]] = memref.alloc() : memref<f32>
  // CHECK-NEXT: fluid_rt.launch "mean" ins(%[[C]] : {{.*}}) outs(%[[L]] :
  // CHECK-NEXT: memref.dealloc %[[C]]
  %l = memref.alloc() : memref<f32>
  fluid_rt.launch "mean" ins(%c : memref<2x3xf32>) outs(%l : memref<f32>) params {}
  // The result is not freed.
  // CHECK-NEXT: return %[[L]]
  return %l : memref<f32>
}

// -----

// A constant is written once, when the program starts: never freed. Nor
// are arguments.
// CHECK-LABEL: func.func @constants(
// CHECK-NOT: memref.dealloc
// CHECK: return
func.func @constants(%x: memref<3xf32>) -> memref<3xf32> {
  %c = memref.alloc() : memref<3xf32>
  fluid_rt.launch "constant" outs(%c : memref<3xf32>) params {value = dense<2.0> : tensor<3xf32>}
  %y = memref.alloc() : memref<3xf32>
  fluid_rt.launch "mul" ins(%x, %c : memref<3xf32>, memref<3xf32>) outs(%y : memref<3xf32>) params {}
  return %y : memref<3xf32>
}

// -----

// A view of a temporary that is returned makes the temporary a result.
// CHECK-LABEL: func.func @returned_view
// CHECK-NOT: memref.dealloc
// CHECK: return
func.func @returned_view(%x: memref<6xf32>) -> memref<2x3xf32> {
  %a = memref.alloc() : memref<6xf32>
  fluid_rt.launch "relu" ins(%x : memref<6xf32>) outs(%a : memref<6xf32>) params {}
  %v = fluid_rt.view %a : memref<6xf32> -> memref<2x3xf32>
  return %v : memref<2x3xf32>
}
