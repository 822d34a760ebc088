// A function without temporaries has no peak position.
func.func @none(%x: memref<f32>) {
  return
}
