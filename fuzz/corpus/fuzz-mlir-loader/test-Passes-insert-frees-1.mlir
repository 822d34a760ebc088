// A constant is written once, when the program starts: never freed. Nor
// are arguments.
func.func @constants(%x: memref<3xf32>) -> memref<3xf32> {
  %c = memref.alloc() : memref<3xf32>
  fluid_rt.launch "constant" outs(%c : memref<3xf32>) params {value = dense<2.0> : tensor<3xf32>}
  %y = memref.alloc() : memref<3xf32>
  fluid_rt.launch "mul" ins(%x, %c : memref<3xf32>, memref<3xf32>) outs(%y : memref<3xf32>) params {}
  return %y : memref<3xf32>
}
