// A view of a temporary that is returned makes the temporary a result.
func.func @returned_view(%x: memref<6xf32>) -> memref<2x3xf32> {
  %a = memref.alloc() : memref<6xf32>
  fluid_rt.launch "relu" ins(%x : memref<6xf32>) outs(%a : memref<6xf32>) params {}
  %v = fluid_rt.view %a : memref<6xf32> -> memref<2x3xf32>
  return %v : memref<2x3xf32>
}
