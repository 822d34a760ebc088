// The memory report counts the recomputations of
// --fluid-recompute-elementwise: launches of batch_norm_apply and the bytes
// they write (each rounded up to 256).
// Two recomputations of 2x4 f32 (32 bytes, 256 each): 512 bytes.
// TABLE: recomputed (2) 512 bytes
// JSON: "recomputed_launches": 2,
// JSON-NEXT: "recomputed_bytes": 512,

func.func @step(%x: memref<2x4xf32> {fluid.name = "images"}, %c: memref<4xf32>) -> (memref<f32> {fluid.loss}, memref<f64> {fluid.learning_rate}) attributes {fluid.entry} {
  %y = memref.alloc() : memref<2x4xf32>
  fluid_rt.launch "batch_norm_apply" ins(%x, %c, %c, %c, %c : memref<2x4xf32>, memref<4xf32>, memref<4xf32>, memref<4xf32>, memref<4xf32>) outs(%y : memref<2x4xf32>) params {}
  %z = memref.alloc() : memref<2x4xf32>
  fluid_rt.launch "batch_norm_apply" ins(%y, %c, %c, %c, %c : memref<2x4xf32>, memref<4xf32>, memref<4xf32>, memref<4xf32>, memref<4xf32>) outs(%z : memref<2x4xf32>) params {}
  %l = memref.alloc() : memref<f32>
  fluid_rt.launch "mean" ins(%z : memref<2x4xf32>) outs(%l : memref<f32>) params {}
  %lr = memref.alloc() : memref<f64>
  fluid_rt.launch "constant" outs(%lr : memref<f64>) params {value = dense<1.0e-01> : tensor<f64>}
  return %l, %lr : memref<f32>, memref<f64>
}
