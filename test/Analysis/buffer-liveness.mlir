// BufferLiveness on hand-written buffer programs. Positions count every op
// of the block from 0 (allocations, views and constants included); the
// expected values were derived by hand from the programs below, and each
// comment says how.
// RUN: fluid-opt %s -split-input-file --fluid-test-buffer-liveness -o /dev/null | FileCheck %s

// A view chain aliases its root: %a is last read through %w at 5, so %a is
// live over [1, 5] and has 3 aliases (%a, %v, %w).
// CHECK-LABEL: @views: 7 ops, 3 buffers
// CHECK-NEXT: #0 argument arg 0: 24 bytes, live [1, 1], producer fluid_rt.launch "relu", 1 alias
// CHECK-NEXT: #1 temporary at 0: 24 bytes, live [1, 5], producer fluid_rt.launch "relu", 3 aliases
// CHECK-NEXT: #2 result at 4: 4 bytes, live [5, 6], producer fluid_rt.launch "mean", 1 alias
// CHECK-NEXT: persistent: 0 parameter, 24 argument, 4 result, 0 constant
// CHECK-NEXT: peak 24 bytes at 1 (alignment 1)
// CHECK-NEXT: peak 256 bytes at 1 (alignment 256)
func.func @views(%x: memref<2x3xf32>) -> memref<f32> {
  %a = memref.alloc() : memref<2x3xf32>
  fluid_rt.launch "relu" ins(%x : memref<2x3xf32>) outs(%a : memref<2x3xf32>) params {}
  %v = fluid_rt.view %a : memref<2x3xf32> -> memref<6xf32>
  %w = fluid_rt.view %v : memref<6xf32> -> memref<1x6xf32>
  %r = memref.alloc() : memref<f32>
  fluid_rt.launch "mean" ins(%w : memref<1x6xf32>) outs(%r : memref<f32>) params {}
  return %r : memref<f32>
}

// -----

// The snapshot pattern of --fluid-bufferize: @m's old value is copied into
// %snap (2) before @m is overwritten (6), and %snap is read after that (8).
// Both param_refs of @m are parameters; persistentBytes counts @m once.
// Live temporaries: %snap [2, 8] and %s [4, 8], 12 bytes each, so the peak
// is 24 bytes (2 x 256 aligned) where both are first live, at 4.
fluid.param @m : tensor<3xf32> init zeros {trainable = false}

// CHECK-LABEL: @snapshot: 10 ops, 6 buffers
// CHECK-NEXT: #0 argument arg 0: 12 bytes, live [4, 4], producer fluid_rt.launch "add", 1 alias
// CHECK-NEXT: #1 parameter at 0: 12 bytes, live [2, 4], producer memref.copy, 1 alias
// CHECK-NEXT: #2 temporary at 1: 12 bytes, live [2, 8], producer memref.copy, 1 alias
// CHECK-NEXT: #3 temporary at 3: 12 bytes, live [4, 8], producer fluid_rt.launch "add", 1 alias
// CHECK-NEXT: #4 parameter at 5: 12 bytes, live [6, 6], producer memref.copy, 1 alias
// CHECK-NEXT: #5 result at 7: 12 bytes, live [8, 9], producer fluid_rt.launch "sub", 1 alias
// CHECK-NEXT: persistent: 12 parameter, 12 argument, 12 result, 0 constant
// CHECK-NEXT: peak 24 bytes at 4 (alignment 1)
// CHECK-NEXT: peak 512 bytes at 4 (alignment 256)
func.func @snapshot(%x: memref<3xf32>) -> memref<3xf32> {
  %m = fluid_rt.param_ref @m : memref<3xf32>
  %snap = memref.alloc() : memref<3xf32>
  memref.copy %m, %snap : memref<3xf32> to memref<3xf32>
  %s = memref.alloc() : memref<3xf32>
  fluid_rt.launch "add" ins(%m, %x : memref<3xf32>, memref<3xf32>) outs(%s : memref<3xf32>) params {}
  %m2 = fluid_rt.param_ref @m : memref<3xf32>
  memref.copy %s, %m2 : memref<3xf32> to memref<3xf32>
  %d = memref.alloc() : memref<3xf32>
  fluid_rt.launch "sub" ins(%s, %snap : memref<3xf32>, memref<3xf32>) outs(%d : memref<3xf32>) params {}
  return %d : memref<3xf32>
}

// -----

// What is not a temporary: the argument, the parameter, a constant (written
// by the "constant" kernel, also returned: still a constant) and a result
// returned through a view. The only temporary is %y (48 bytes, [4, 6]).
fluid.param @w : tensor<2x3xf32> init ones

// CHECK-LABEL: @kinds: 9 ops, 5 buffers
// CHECK-NEXT: #0 argument arg 0: 32 bytes, live [4, 4], producer fluid_rt.launch "matmul", 1 alias
// CHECK-NEXT: #1 parameter at 0: 24 bytes, live [4, 4], producer fluid_rt.launch "matmul", 1 alias
// CHECK-NEXT: #2 constant at 1: 12 bytes, live [2, 8], producer fluid_rt.launch "constant", 1 alias
// CHECK-NEXT: #3 temporary at 3: 48 bytes, live [4, 6], producer fluid_rt.launch "matmul", 1 alias
// CHECK-NEXT: #4 result at 5: 48 bytes, live [6, 8], producer fluid_rt.launch "relu", 2 aliases
// CHECK-NEXT: persistent: 24 parameter, 32 argument, 48 result, 12 constant
// CHECK-NEXT: peak 48 bytes at 4 (alignment 1)
// CHECK-NEXT: peak 256 bytes at 4 (alignment 256)
func.func @kinds(%x: memref<4x2xf32>) -> (memref<12xf32>, memref<3xf32>) {
  %w = fluid_rt.param_ref @w : memref<2x3xf32>
  %c = memref.alloc() : memref<3xf32>
  fluid_rt.launch "constant" outs(%c : memref<3xf32>) params {value = dense<2.0> : tensor<3xf32>}
  %y = memref.alloc() : memref<4x3xf32>
  fluid_rt.launch "matmul" ins(%x, %w : memref<4x2xf32>, memref<2x3xf32>) outs(%y : memref<4x3xf32>) params {}
  %t = memref.alloc() : memref<4x3xf32>
  fluid_rt.launch "relu" ins(%y : memref<4x3xf32>) outs(%t : memref<4x3xf32>) params {}
  %tv = fluid_rt.view %t : memref<4x3xf32> -> memref<12xf32>
  return %tv, %c : memref<12xf32>, memref<3xf32>
}

// -----

// memref.dealloc is not a use: %a is last read at 4 although freed at 5,
// %b at 8 although freed at 9. %unused is never read or written (its
// dealloc does not count either). Peak: %a and %b at 4 (16 + 16 bytes).
// CHECK-LABEL: @frees: 11 ops, 5 buffers
// CHECK-NEXT: #0 argument arg 0: 16 bytes, live [2, 2], producer fluid_rt.launch "relu", 1 alias
// CHECK-NEXT: #1 temporary at 0: 64 bytes, unused, producer none, 1 alias
// CHECK-NEXT: #2 temporary at 1: 16 bytes, live [2, 4], producer fluid_rt.launch "relu", 1 alias
// CHECK-NEXT: #3 temporary at 3: 16 bytes, live [4, 8], producer fluid_rt.launch "relu", 1 alias
// CHECK-NEXT: #4 result at 7: 16 bytes, live [8, 10], producer fluid_rt.launch "relu", 1 alias
// CHECK-NEXT: persistent: 0 parameter, 16 argument, 16 result, 0 constant
// CHECK-NEXT: peak 32 bytes at 4 (alignment 1)
// CHECK-NEXT: peak 512 bytes at 4 (alignment 256)
func.func @frees(%x: memref<4xf32>) -> memref<4xf32> {
  %unused = memref.alloc() : memref<16xf32>
  %a = memref.alloc() : memref<4xf32>
  fluid_rt.launch "relu" ins(%x : memref<4xf32>) outs(%a : memref<4xf32>) params {}
  %b = memref.alloc() : memref<4xf32>
  fluid_rt.launch "relu" ins(%a : memref<4xf32>) outs(%b : memref<4xf32>) params {}
  memref.dealloc %a : memref<4xf32>
  memref.dealloc %unused : memref<16xf32>
  %c = memref.alloc() : memref<4xf32>
  fluid_rt.launch "relu" ins(%b : memref<4xf32>) outs(%c : memref<4xf32>) params {}
  memref.dealloc %b : memref<4xf32>
  return %c : memref<4xf32>
}

// -----

// A memory plan: the arena (512 bytes, itself not live: only views use it)
// and three temporaries as views of it, %a and %c at offset 0 (their
// intervals [4, 6] and [9, 11] do not meet), %b at 256 (live [6, 9]
// through its view %bv). Live: 16 at 4, 32 at 6 (%a, %b) and at 9 (%b, %c).
// CHECK-LABEL: @arena: 13 ops, 6 buffers
// CHECK-NEXT: #0 argument arg 0: 16 bytes, live [4, 4], producer fluid_rt.launch "relu", 1 alias
// CHECK-NEXT: #1 arena at 0: 512 bytes, unused, producer none, 1 alias
// CHECK-NEXT: #2 temporary at 3: 16 bytes in #1 at offset 0, live [4, 6], producer fluid_rt.launch "relu", 1 alias
// CHECK-NEXT: #3 temporary at 5: 16 bytes in #1 at offset 256, live [6, 9], producer fluid_rt.launch "relu", 2 aliases
// CHECK-NEXT: #4 temporary at 8: 16 bytes in #1 at offset 0, live [9, 11], producer fluid_rt.launch "relu", 1 alias
// CHECK-NEXT: #5 result at 10: 4 bytes, live [11, 12], producer fluid_rt.launch "mean", 1 alias
// CHECK-NEXT: persistent: 0 parameter, 16 argument, 4 result, 0 constant
// CHECK-NEXT: peak 32 bytes at 6 (alignment 1)
// CHECK-NEXT: peak 512 bytes at 6 (alignment 256)
func.func @arena(%x: memref<4xf32>) -> memref<f32> {
  %arena = memref.alloc() : memref<512xi8>
  %c0 = arith.constant 0 : index
  %c256 = arith.constant 256 : index
  %a = memref.view %arena[%c0][] : memref<512xi8> to memref<4xf32>
  fluid_rt.launch "relu" ins(%x : memref<4xf32>) outs(%a : memref<4xf32>) params {}
  %b = memref.view %arena[%c256][] : memref<512xi8> to memref<4xf32>
  fluid_rt.launch "relu" ins(%a : memref<4xf32>) outs(%b : memref<4xf32>) params {}
  %bv = fluid_rt.view %b : memref<4xf32> -> memref<2x2xf32>
  %c = memref.view %arena[%c0][] : memref<512xi8> to memref<2x2xf32>
  fluid_rt.launch "relu" ins(%bv : memref<2x2xf32>) outs(%c : memref<2x2xf32>) params {}
  %r = memref.alloc() : memref<f32>
  fluid_rt.launch "mean" ins(%c : memref<2x2xf32>) outs(%r : memref<f32>) params {}
  return %r : memref<f32>
}

// -----

// The peak: %a [1, 3] and %b [3, 5] (256 bytes each) overlap at 3; %d
// (400 bytes, [7, 9]) is disjoint from both; the scalars %s [5, 11] and %e
// [9, 11] are 4 bytes each. Exact bytes live: 256 at 1, 512 at 3, 260 at
// 5, 404 at 7, 408 at 9, 8 at 11: the peak is 512 at 3. Rounded to 256
// bytes, %d takes 512 and each scalar 256: 256, 512, 512, 768, 1024, 512,
// so the peak moves to 9 (%s, %d, %e).
// CHECK-LABEL: @peak: 13 ops, 8 buffers
// CHECK: #2 temporary at 0: 256 bytes, live [1, 3]
// CHECK-NEXT: #3 temporary at 2: 256 bytes, live [3, 5]
// CHECK-NEXT: #4 temporary at 4: 4 bytes, live [5, 11]
// CHECK-NEXT: #5 temporary at 6: 400 bytes, live [7, 9]
// CHECK-NEXT: #6 temporary at 8: 4 bytes, live [9, 11]
// CHECK-NEXT: #7 result at 10: 4 bytes, live [11, 12]
// CHECK-NEXT: persistent: 0 parameter, 656 argument, 4 result, 0 constant
// CHECK-NEXT: peak 512 bytes at 3 (alignment 1)
// CHECK-NEXT: peak 1024 bytes at 9 (alignment 256)
func.func @peak(%x: memref<64xf32>, %y: memref<100xf32>) -> memref<f32> {
  %a = memref.alloc() : memref<64xf32>
  fluid_rt.launch "relu" ins(%x : memref<64xf32>) outs(%a : memref<64xf32>) params {}
  %b = memref.alloc() : memref<64xf32>
  fluid_rt.launch "relu" ins(%a : memref<64xf32>) outs(%b : memref<64xf32>) params {}
  %s = memref.alloc() : memref<f32>
  fluid_rt.launch "mean" ins(%b : memref<64xf32>) outs(%s : memref<f32>) params {}
  %d = memref.alloc() : memref<100xf32>
  fluid_rt.launch "relu" ins(%y : memref<100xf32>) outs(%d : memref<100xf32>) params {}
  %e = memref.alloc() : memref<f32>
  fluid_rt.launch "mean" ins(%d : memref<100xf32>) outs(%e : memref<f32>) params {}
  %r = memref.alloc() : memref<f32>
  fluid_rt.launch "add" ins(%s, %e : memref<f32>, memref<f32>) outs(%r : memref<f32>) params {}
  return %r : memref<f32>
}

// -----

// A function without temporaries has no peak position.
// CHECK-LABEL: @none: 1 ops, 1 buffers
// CHECK-NEXT: #0 argument arg 0: 4 bytes, unused, producer none, 1 alias
// CHECK-NEXT: persistent: 0 parameter, 4 argument, 0 result, 0 constant
// CHECK-NEXT: peak 0 bytes at -1 (alignment 1)
// CHECK-NEXT: peak 0 bytes at -1 (alignment 256)
func.func @none(%x: memref<f32>) {
  return
}
