// A memory plan: the arena (512 bytes, itself not live: only views use it)
// and three temporaries as views of it, %a and %c at offset 0 (their
// intervals [4, 6] and [9, 11] do not meet), %b at 256 (live [6, 9]
// through its view %bv). Live: 16 at 4, 32 at 6 (%a, %b) and at 9 (%b, %c).
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
