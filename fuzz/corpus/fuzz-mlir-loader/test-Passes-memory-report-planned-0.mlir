// --fluid-memory-report on a planned step (mode "planned", the arena and
// its views written by hand): the step needs the arena, whatever the lower
// bound.

// The program of memory-report.mlir, planned (badly) by hand: %h at
// offset 0, %a at 1024, %s at 2048 although %h's bytes are free by then,
// so the arena is 2304 bytes while no plan needs more than the lower
// bound, 2048 (%h and %a at launch 1). Live bytes per launch as in
// memory-report.mlir: 1024, 2048, 1280, 1280, 1024. Three temporaries
// (the views); the arena itself is none of them. The workspace limit is
// the module's, 1 MiB.

// TABLE:      memory of @step (mode planned, 5 launches, 3 temporaries)
// TABLE-NEXT:   arena 2,304 bytes 2.25 KiB
// TABLE-NEXT:   lower bound 2,048 bytes 2.00 KiB
// TABLE-NEXT:   persistent 3,076 bytes 3.00 KiB
// TABLE:        workspace limit 1,048,576 bytes 1.00 MiB
// TABLE-NEXT: peak at launch 1 (add, bias); the largest temporaries live there:
// TABLE-NEXT:   bytes type kernel launches location
// TABLE-NEXT:   1,024 16x16xf32 matmul 0..1 fc
// TABLE-NEXT:   1,024 16x16xf32 add 1..4 bias
// TABLE-NOT: {{.}}

// JSON:      "mode": "planned",
// JSON:      "arena_bytes": 2304,
// JSON-NEXT: "lower_bound_bytes": 2048,
// JSON-NEXT: "peak_launch": 1,
// JSON:      "workspace_bytes": 1048576,
// JSON-NEXT: "temporaries": 3,
// JSON-NEXT: "launches": 5,
// JSON:      "kernel": "matmul",
// JSON:      "arena_offset": 0
// JSON:      "kernel": "add",
// JSON:      "arena_offset": 1024

// CSV:      launch,kernel,live_bytes
// CSV-NEXT: 0,matmul,1024
// CSV-NEXT: 1,add,2048
// CSV-NEXT: 2,reduce_sum,1280
// CSV-NEXT: 3,mean,1280
// CSV-NEXT: 4,copy,1024

// SVG: Live temporaries of @step (planned, 5 launches)
// SVG: arena 2.25 KiB
// SVG: lower bound 2.00 KiB
// SVG: peak 2.00 KiB at launch 1 (add)

module attributes {fluid_rt.workspace_limit = 1048576 : i64} {
  fluid.param @w : tensor<16x16xf32> init ones
  fluid.param @w.momentum_buffer : tensor<16x16xf32> init zeros {fluid.optimizer_state, trainable = false}

  func.func @step(%x: memref<16x16xf32>) -> memref<f32> attributes {fluid.entry, fluid_rt.arena_bytes = 2304 : i64, fluid_rt.arena_lower_bound = 2048 : i64} {
    %arena = memref.alloc() : memref<2304xi8>
    %c0 = arith.constant 0 : index
    %c1024 = arith.constant 1024 : index
    %c2048 = arith.constant 2048 : index
    %w = fluid_rt.param_ref @w : memref<16x16xf32>
    %c = memref.alloc() : memref<16x16xf32>
    fluid_rt.launch "constant" outs(%c : memref<16x16xf32>) params {value = dense<1.0> : tensor<16x16xf32>}
    %h = memref.view %arena[%c0][] : memref<2304xi8> to memref<16x16xf32>
    fluid_rt.launch "matmul" ins(%x, %w : memref<16x16xf32>, memref<16x16xf32>) outs(%h : memref<16x16xf32>) params {} loc("fc")
    %a = memref.view %arena[%c1024][] : memref<2304xi8> to memref<16x16xf32>
    fluid_rt.launch "add" ins(%h, %c : memref<16x16xf32>, memref<16x16xf32>) outs(%a : memref<16x16xf32>) params {} loc("bias")
    %s = memref.view %arena[%c2048][] : memref<2304xi8> to memref<16xf32>
    fluid_rt.launch "reduce_sum" ins(%a : memref<16x16xf32>) outs(%s : memref<16xf32>) params {axes = array<i64: 0>} loc("sum")
    %l = memref.alloc() : memref<f32>
    fluid_rt.launch "mean" ins(%s : memref<16xf32>) outs(%l : memref<f32>) params {} loc("loss")
    %m = fluid_rt.param_ref @w.momentum_buffer : memref<16x16xf32>
    memref.copy %a, %m : memref<16x16xf32> to memref<16x16xf32> loc("update")
    return %l : memref<f32>
  }
}
