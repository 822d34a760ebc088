// --fluid-plan-memory: temporaries become views of one arena at offsets
// from their lifetimes; elementwise launches write over dead inputs where
// the kernel allows it and the types match exactly.
// RUN: fluid-opt %s -split-input-file --fluid-plan-memory=in-place=false | FileCheck %s --check-prefixes=CHECK,OFFSETS --enable-var-scope
// RUN: fluid-opt %s -split-input-file --fluid-plan-memory | FileCheck %s --check-prefixes=CHECK,INPLACE --enable-var-scope
// Planning twice changes nothing.
// RUN: fluid-opt %s -split-input-file --fluid-plan-memory > %t.once.mlir
// RUN: fluid-opt %t.once.mlir -split-input-file --fluid-plan-memory > %t.twice.mlir
// RUN: diff %t.once.mlir %t.twice.mlir

// Three 4096-byte buffers in a chain: %a and %b meet at the second relu,
// %b and %c at the third; %c can take %a's place. A 100-byte buffer is
// rounded up to 256. Without in-place reuse: %a at 0, %b at 4096, %c at 0,
// %d (live with %c) at 4096; 8192 bytes, which is also the most bytes live
// at one launch (the lower bound).
// CHECK-LABEL: func.func @offsets(
// OFFSETS-SAME: fluid_rt.arena_bytes = 8192 : i64, fluid_rt.arena_lower_bound = 8192 : i64
// OFFSETS: %[[ARENA:.+]] = memref.alloc() {alignment = 256 : i64} : memref<8192xi8>
// OFFSETS: %[[O0:.+]] = arith.constant 0 : index
// OFFSETS: %[[A:.+]] = memref.view %[[ARENA]][%[[O0]]][] : memref<8192xi8> to memref<1024xf32>
// OFFSETS: %[[O1:.+]] = arith.constant 4096 : index
// OFFSETS: %[[B:.+]] = memref.view %[[ARENA]][%[[O1]]][] : memref<8192xi8> to memref<1024xf32>
// OFFSETS: %[[O2:.+]] = arith.constant 0 : index
// OFFSETS: %[[C:.+]] = memref.view %[[ARENA]][%[[O2]]][] : memref<8192xi8> to memref<1024xf32>
// OFFSETS: %[[O3:.+]] = arith.constant 4096 : index
// OFFSETS: %[[D:.+]] = memref.view %[[ARENA]][%[[O3]]][] : memref<8192xi8> to memref<25xf32>
// OFFSETS: fluid_rt.launch "slice" ins(%[[C]] : memref<1024xf32>) outs(%[[D]] : memref<25xf32>)
// OFFSETS-NOT: memref.dealloc
// The result keeps a buffer of its own.
// OFFSETS: %[[L:.+]] = memref.alloc() : memref<f32>
// OFFSETS: return %[[L]]
// With in-place reuse every relu writes over its dead input: one buffer
// (and %d beside it).
// INPLACE-SAME: fluid_rt.arena_bytes = 4352 : i64, fluid_rt.arena_lower_bound = 4352 : i64
// INPLACE: %[[ARENA:.+]] = memref.alloc() {alignment = 256 : i64} : memref<4352xi8>
// INPLACE: %[[A:.+]] = memref.view %[[ARENA]]
// INPLACE: fluid_rt.launch "relu" ins(%{{.+}} : memref<1024xf32>) outs(%[[A]] : memref<1024xf32>)
// INPLACE: fluid_rt.launch "relu" ins(%[[A]] : memref<1024xf32>) outs(%[[A]] : memref<1024xf32>)
// INPLACE: fluid_rt.launch "relu" ins(%[[A]] : memref<1024xf32>) outs(%[[A]] : memref<1024xf32>)
func.func @offsets(%x: memref<1024xf32>) -> memref<f32> {
  %a = memref.alloc() : memref<1024xf32>
  fluid_rt.launch "relu" ins(%x : memref<1024xf32>) outs(%a : memref<1024xf32>) params {}
  %b = memref.alloc() : memref<1024xf32>
  fluid_rt.launch "relu" ins(%a : memref<1024xf32>) outs(%b : memref<1024xf32>) params {}
  %c = memref.alloc() : memref<1024xf32>
  fluid_rt.launch "relu" ins(%b : memref<1024xf32>) outs(%c : memref<1024xf32>) params {}
  %d = memref.alloc() : memref<25xf32>
  fluid_rt.launch "slice" ins(%c : memref<1024xf32>) outs(%d : memref<25xf32>) params {axis = 0 : i64, offset = 0 : i64}
  memref.dealloc %c : memref<1024xf32>
  %l = memref.alloc() : memref<f32>
  fluid_rt.launch "mean" ins(%d : memref<25xf32>) outs(%l : memref<f32>) params {}
  return %l : memref<f32>
}

// -----

fluid.param @w : tensor<2x3xf32> init ones

// In-place reuse is refused when the input is read later, has another
// shape (a broadcast operand), is a parameter, a result or a constant, or
// when the kernel (matmul) may not write over its inputs; it happens
// through views of the input's type.
// CHECK-LABEL: func.func @not_in_place(
func.func @not_in_place(%x: memref<2x3xf32>, %bias: memref<3xf32>) -> (memref<2x3xf32>, memref<f32>) {
  // INPLACE: %[[W:.+]] = fluid_rt.param_ref @w
  %w = fluid_rt.param_ref @w : memref<2x3xf32>
  // INPLACE: %[[A:.+]] = memref.view
  // INPLACE: fluid_rt.launch "relu" ins(%{{.+}} : memref<2x3xf32>) outs(%[[A]] :
  %a = memref.alloc() : memref<2x3xf32>
  fluid_rt.launch "relu" ins(%x : memref<2x3xf32>) outs(%a : memref<2x3xf32>) params {}
  // %a is read again below: %b gets a buffer of its own.
  // INPLACE: %[[B:.+]] = memref.view
  // INPLACE: fluid_rt.launch "add" ins(%[[A]], %[[A]] : {{.*}}) outs(%[[B]] :
  %b = memref.alloc() : memref<2x3xf32>
  fluid_rt.launch "add" ins(%a, %a : memref<2x3xf32>, memref<2x3xf32>) outs(%b : memref<2x3xf32>) params {}
  // The broadcast bias (dead here) has another shape; %b is read later.
  // INPLACE: %[[BIAS:.+]] = memref.view
  // INPLACE: fluid_rt.launch "relu" ins(%{{.+}} : memref<3xf32>) outs(%[[BIAS]] :
  // INPLACE: %[[C:.+]] = memref.view
  // INPLACE: fluid_rt.launch "add" ins(%[[B]], %[[BIAS]] : {{.*}}) outs(%[[C]] :
  %bias2 = memref.alloc() : memref<3xf32>
  fluid_rt.launch "relu" ins(%bias : memref<3xf32>) outs(%bias2 : memref<3xf32>) params {}
  %c = memref.alloc() : memref<2x3xf32>
  fluid_rt.launch "add" ins(%b, %bias2 : memref<2x3xf32>, memref<3xf32>) outs(%c : memref<2x3xf32>) params {}
  // Through a view of the output's type: %e is %c.
  // INPLACE: %[[FLAT:.+]] = fluid_rt.view %[[C]]
  // INPLACE-NEXT: fluid_rt.launch "relu" ins(%[[FLAT]] : memref<6xf32>) outs(%[[FLAT]] : memref<6xf32>)
  %flat = fluid_rt.view %c : memref<2x3xf32> -> memref<6xf32>
  %e = memref.alloc() : memref<6xf32>
  fluid_rt.launch "relu" ins(%flat : memref<6xf32>) outs(%e : memref<6xf32>) params {}
  // The parameter is never overwritten, and %a is read later.
  // INPLACE: %[[F:.+]] = memref.view
  // INPLACE: fluid_rt.launch "mul" ins(%[[W]], %[[A]] : {{.*}}) outs(%[[F]] :
  %f = memref.alloc() : memref<2x3xf32>
  fluid_rt.launch "mul" ins(%w, %a : memref<2x3xf32>, memref<2x3xf32>) outs(%f : memref<2x3xf32>) params {}
  // Both inputs die here: the output takes the first one's buffer.
  // INPLACE-NEXT: fluid_rt.launch "add" ins(%[[A]], %[[B]] : {{.*}}) outs(%[[A]] :
  %m = memref.alloc() : memref<2x3xf32>
  fluid_rt.launch "add" ins(%a, %b : memref<2x3xf32>, memref<2x3xf32>) outs(%m : memref<2x3xf32>) params {}
  // matmul may not write over its inputs (%f dies here).
  // INPLACE: %[[GG:.+]] = memref.view
  // INPLACE: fluid_rt.launch "matmul" ins(%[[F]], %{{.+}} : {{.*}}) outs(%[[GG]] :
  %ft = memref.alloc() : memref<3x3xf32>
  fluid_rt.launch "constant" outs(%ft : memref<3x3xf32>) params {value = dense<1.0> : tensor<3x3xf32>}
  %gg = memref.alloc() : memref<2x3xf32>
  fluid_rt.launch "matmul" ins(%f, %ft : memref<2x3xf32>, memref<3x3xf32>) outs(%gg : memref<2x3xf32>) params {}
  // A result is a buffer of its own, never a dead input's.
  // INPLACE: %[[G:.+]] = memref.alloc() : memref<2x3xf32>
  // INPLACE: fluid_rt.launch "relu" ins(%[[GG]] : {{.*}}) outs(%[[G]] :
  %g = memref.alloc() : memref<2x3xf32>
  fluid_rt.launch "relu" ins(%gg : memref<2x3xf32>) outs(%g : memref<2x3xf32>) params {}
  // Neither a result (%g) nor a constant (%k) is overwritten.
  // INPLACE: %[[K:.+]] = memref.alloc() : memref<2x3xf32>
  // INPLACE: %[[H:.+]] = memref.view
  // INPLACE: fluid_rt.launch "sub" ins(%[[G]], %[[K]] : {{.*}}) outs(%[[H]] :
  %k = memref.alloc() : memref<2x3xf32>
  fluid_rt.launch "constant" outs(%k : memref<2x3xf32>) params {value = dense<1.0> : tensor<2x3xf32>}
  %h = memref.alloc() : memref<2x3xf32>
  fluid_rt.launch "sub" ins(%g, %k : memref<2x3xf32>, memref<2x3xf32>) outs(%h : memref<2x3xf32>) params {}
  %n = memref.alloc() : memref<f32>
  fluid_rt.launch "mean" ins(%h : memref<2x3xf32>) outs(%n : memref<f32>) params {}
  return %g, %n : memref<2x3xf32>, memref<f32>
}

// -----

// The workspace limit is recorded on the module, in bytes.
// RUN: fluid-opt %s -split-input-file --fluid-plan-memory=workspace-limit=64 | FileCheck %s --check-prefix=LIMIT
// LIMIT: module attributes {fluid_rt.workspace_limit = 67108864 : i64}
func.func @nothing() {
  return
}

// -----

// Bad options.
// RUN: not fluid-opt %s -split-input-file --fluid-plan-memory=alignment=48 2>&1 | FileCheck %s --check-prefix=ALIGN
// ALIGN: error: --fluid-plan-memory: alignment must be a power of two, got 48
// RUN: not fluid-opt %s -split-input-file --fluid-plan-memory=workspace-limit=-2 2>&1 | FileCheck %s --check-prefix=WORKSPACE
// WORKSPACE: error: --fluid-plan-memory: workspace-limit must be -1 (none) or a size in MiB up to 2^30, got -2
