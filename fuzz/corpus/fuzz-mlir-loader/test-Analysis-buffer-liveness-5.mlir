// The peak: %a [1, 3] and %b [3, 5] (256 bytes each) overlap at 3; %d
// (400 bytes, [7, 9]) is disjoint from both; the scalars %s [5, 11] and %e
// [9, 11] are 4 bytes each. Exact bytes live: 256 at 1, 512 at 3, 260 at
// 5, 404 at 7, 408 at 9, 8 at 11: the peak is 512 at 3. Rounded to 256
// bytes, %d takes 512 and each scalar 256: 256, 512, 512, 768, 1024, 512,
// so the peak moves to 9 (%s, %d, %e).
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
