// BufferLiveness on hand-written buffer programs. Positions count every op
// of the block from 0 (allocations, views and constants included); the
// expected values were derived by hand from the programs below, and each
// comment says how.

// A view chain aliases its root: %a is last read through %w at 5, so %a is
// live over [1, 5] and has 3 aliases (%a, %v, %w).
func.func @views(%x: memref<2x3xf32>) -> memref<f32> {
  %a = memref.alloc() : memref<2x3xf32>
  fluid_rt.launch "relu" ins(%x : memref<2x3xf32>) outs(%a : memref<2x3xf32>) params {}
  %v = fluid_rt.view %a : memref<2x3xf32> -> memref<6xf32>
  %w = fluid_rt.view %v : memref<6xf32> -> memref<1x6xf32>
  %r = memref.alloc() : memref<f32>
  fluid_rt.launch "mean" ins(%w : memref<1x6xf32>) outs(%r : memref<f32>) params {}
  return %r : memref<f32>
}
