// memref.dealloc is not a use: %a is last read at 4 although freed at 5,
// %b at 8 although freed at 9. %unused is never read or written (its
// dealloc does not count either). Peak: %a and %b at 4 (16 + 16 bytes).
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
