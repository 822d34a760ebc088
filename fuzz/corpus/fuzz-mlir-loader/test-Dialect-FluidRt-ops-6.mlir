func.func @bad_view(%x: memref<4xf32>) {
  %v = fluid_rt.view %x : memref<4xf32> -> memref<5xf32>
  return
}
