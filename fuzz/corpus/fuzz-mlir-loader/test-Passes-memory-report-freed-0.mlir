// --fluid-memory-report on a step with frees at last use (mode "freed",
// the memref.dealloc ops written by hand): the step needs the peak of
// live temporaries, as a caching allocator serves it.

// The program of memory-report.mlir with a free after each last use: the
// frees move positions but no launch (launches 0 to 4: matmul, add,
// reduce_sum, mean, copy). Live bytes per launch (256-byte granules):
// 1024 (%h), 2048 (%h, %a), 1280 (%a, %s 64 -> 256), 1280, 1024 (%a).
// Freed at last use, the step needs the peak, 2048, which is also the
// lower bound; %unused (40 -> 256 bytes) is freed as soon as it is made
// and is never live. A negative workspace limit means none: -1.

// TABLE:      memory of @step (mode freed, 5 launches, 4 temporaries)
// TABLE-NEXT:   peak with frees 2,048 bytes 2.00 KiB
// TABLE-NEXT:   lower bound 2,048 bytes 2.00 KiB
// TABLE:        workspace limit none
// TABLE-NEXT: peak at launch 1 (add, bias); the largest temporaries live there:
// TABLE-NEXT:   bytes type kernel launches location
// TABLE-NEXT:   1,024 16x16xf32 matmul 0..1 fc
// TABLE-NEXT:   1,024 16x16xf32 add 1..4 bias
// TABLE-NOT: {{.}}

// JSON:      "mode": "freed",
// JSON:      "arena_bytes": 2048,
// JSON-NEXT: "lower_bound_bytes": 2048,
// JSON-NEXT: "peak_launch": 1,
// JSON-NEXT: "peak_kernel": "add",
// JSON-NEXT: "peak_location": "bias",
// JSON-NEXT: "persistent_bytes": 3076,
// JSON:      "workspace_bytes": -1,
// JSON-NEXT: "temporaries": 4,
// JSON-NEXT: "launches": 5,

// CSV:      launch,kernel,live_bytes
// CSV-NEXT: 0,matmul,1024
// CSV-NEXT: 1,add,2048
// CSV-NEXT: 2,reduce_sum,1280
// CSV-NEXT: 3,mean,1280
// CSV-NEXT: 4,copy,1024

// SVG: Live temporaries of @step (freed, 5 launches)
// SVG: peak with frees 2.00 KiB
// SVG: lower bound 2.00 KiB
// SVG: peak 2.00 KiB at launch 1 (add)

module attributes {fluid_rt.workspace_limit = -5 : i64} {
  fluid.param @w : tensor<16x16xf32> init ones
  fluid.param @w.momentum_buffer : tensor<16x16xf32> init zeros {fluid.optimizer_state, trainable = false}

  func.func @step(%x: memref<16x16xf32>) -> memref<f32> attributes {fluid.entry} {
    %w = fluid_rt.param_ref @w : memref<16x16xf32>
    %c = memref.alloc() : memref<16x16xf32>
    fluid_rt.launch "constant" outs(%c : memref<16x16xf32>) params {value = dense<1.0> : tensor<16x16xf32>}
    %h = memref.alloc() : memref<16x16xf32>
    fluid_rt.launch "matmul" ins(%x, %w : memref<16x16xf32>, memref<16x16xf32>) outs(%h : memref<16x16xf32>) params {} loc("fc")
    %a = memref.alloc() : memref<16x16xf32>
    fluid_rt.launch "add" ins(%h, %c : memref<16x16xf32>, memref<16x16xf32>) outs(%a : memref<16x16xf32>) params {} loc("bias")
    memref.dealloc %h : memref<16x16xf32>
    %s = memref.alloc() : memref<16xf32>
    fluid_rt.launch "reduce_sum" ins(%a : memref<16x16xf32>) outs(%s : memref<16xf32>) params {axes = array<i64: 0>} loc("sum")
    %l = memref.alloc() : memref<f32>
    fluid_rt.launch "mean" ins(%s : memref<16xf32>) outs(%l : memref<f32>) params {} loc("loss")
    memref.dealloc %s : memref<16xf32>
    %m = fluid_rt.param_ref @w.momentum_buffer : memref<16x16xf32>
    memref.copy %a, %m : memref<16x16xf32> to memref<16x16xf32> loc("update")
    memref.dealloc %a : memref<16x16xf32>
    %unused = memref.alloc() : memref<10xf32>
    memref.dealloc %unused : memref<10xf32>
    return %l : memref<f32>
  }
}
