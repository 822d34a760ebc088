// The buffer-level memory passes handle single-block functions only, and
// say so at the function.

func.func @blocks(%x: memref<4xf32>) {
  return
^unreachable:
  return
}
