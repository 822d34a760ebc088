// --fluid-memory-report on a step where nothing is freed (mode "none"):
// the table, the JSON, CSV and SVG files, and a write that fails.
// The module is not changed.
// A path that cannot be written fails the pass with the writer's reason.
// UNWRITABLE: fluid-opt: error: cannot write '{{.*}}/no-such-dir/x.json': {{.+}}

// Temporaries, each rounded up to 256 bytes (positions in the block):
//   %h 16x16xf32 1024 B, written at 4 (launch 0), last read at 6 (launch 1)
//   %a 16x16xf32 1024 B, written at 6 (launch 1), last read at 12 (launch 4)
//   %s 16xf32 64 B -> 256, written at 8 (launch 2), read at 10 (launch 3)
//   %unused 10xf32 40 B -> 256, never used
// The "constant" launch at 2 is the initializer's: not numbered. Live
// bytes per launch: 1024, 2048 (%h, %a), 1280 (%a, %s), 1280, 1024 (%a);
// the peak is 2048 at launch 1 (add, loc "bias"). Nothing is freed, so
// the step needs every temporary: 1024 + 1024 + 256 + 256 = 2560.
// Persistent: @w 1024 (a parameter), @w.momentum_buffer 1024 (optimizer
// state), %l 4 (the result), %c 1024 (the constant): 3076. @predict is not
// the training step and is not reported.

// TABLE:      memory of @step (mode none, 5 launches, 4 temporaries)
// TABLE-NEXT:   all temporaries 2,560 bytes 2.50 KiB
// TABLE-NEXT:   lower bound 2,048 bytes 2.00 KiB
// TABLE-NEXT:   persistent 3,076 bytes 3.00 KiB
// TABLE-NEXT:     parameters 1,024 bytes 1.00 KiB
// TABLE-NEXT:     optimizer state 1,024 bytes 1.00 KiB
// TABLE-NEXT:     results 4 bytes 4 B
// TABLE-NEXT:     constants 1,024 bytes 1.00 KiB
// TABLE-NEXT:   arguments 1,024 bytes 1.00 KiB
// TABLE-NEXT:   workspace limit none
// TABLE-NEXT: peak at launch 1 (add, bias); the largest temporaries live there:
// TABLE-NEXT:   bytes type kernel launches location
// TABLE-NEXT:   1,024 16x16xf32 matmul 0..1 fc
// TABLE-NEXT:   1,024 16x16xf32 add 1..4 bias
// TABLE-NOT: {{.}}

// TOP:      peak at launch 1
// TOP-NEXT:   bytes
// TOP-NEXT:   1,024 16x16xf32 matmul 0..1 fc
// TOP-NOT: {{.}}

// JSON:      {
// JSON-NEXT:   "function": "step",
// JSON-NEXT:   "mode": "none",
// JSON-NEXT:   "alignment": 256,
// JSON-NEXT:   "arena_bytes": 2560,
// JSON-NEXT:   "lower_bound_bytes": 2048,
// JSON-NEXT:   "peak_launch": 1,
// JSON-NEXT:   "peak_kernel": "add",
// JSON-NEXT:   "peak_location": "bias",
// JSON-NEXT:   "persistent_bytes": 3076,
// JSON-NEXT:   "parameter_bytes": 1024,
// JSON-NEXT:   "optimizer_state_bytes": 1024,
// JSON-NEXT:   "result_bytes": 4,
// JSON-NEXT:   "constant_bytes": 1024,
// JSON-NEXT:   "argument_bytes": 1024,
// JSON-NEXT:   "workspace_bytes": -1,
// JSON-NEXT:   "temporaries": 4,
// JSON-NEXT:   "launches": 5,
// JSON-NEXT:   "recomputed_launches": 0,
// JSON-NEXT:   "recomputed_bytes": 0,
// JSON-NEXT:   "largest_live": [
// JSON-NEXT:     {
// JSON-NEXT:       "bytes": 1024,
// JSON-NEXT:       "shape": [
// JSON-NEXT:         16,
// JSON-NEXT:         16
// JSON-NEXT:       ],
// JSON-NEXT:       "dtype": "f32",
// JSON-NEXT:       "kernel": "matmul",
// JSON-NEXT:       "location": "fc",
// JSON-NEXT:       "first_launch": 0,
// JSON-NEXT:       "last_launch": 1,
// JSON-NEXT:       "arena_offset": -1
// JSON-NEXT:     },
// JSON-NEXT:     {
// JSON-NEXT:       "bytes": 1024,
// JSON:            "kernel": "add",
// JSON-NEXT:       "location": "bias",
// JSON-NEXT:       "first_launch": 1,
// JSON-NEXT:       "last_launch": 4,
// JSON-NEXT:       "arena_offset": -1
// JSON-NEXT:     }
// JSON-NEXT:   ]
// JSON-NEXT: }

// CSV:      launch,kernel,live_bytes
// CSV-NEXT: 0,matmul,1024
// CSV-NEXT: 1,add,2048
// CSV-NEXT: 2,reduce_sum,1280
// CSV-NEXT: 3,mean,1280
// CSV-NEXT: 4,copy,1024

// SVG: Live temporaries of @step (none, 5 launches)
// SVG: all temporaries 2.50 KiB
// SVG: lower bound 2.00 KiB
// SVG: <circle
// SVG: peak 2.00 KiB at launch 1 (add)

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
  %s = memref.alloc() : memref<16xf32>
  fluid_rt.launch "reduce_sum" ins(%a : memref<16x16xf32>) outs(%s : memref<16xf32>) params {axes = array<i64: 0>} loc("sum")
  %l = memref.alloc() : memref<f32>
  fluid_rt.launch "mean" ins(%s : memref<16xf32>) outs(%l : memref<f32>) params {} loc("loss")
  %m = fluid_rt.param_ref @w.momentum_buffer : memref<16x16xf32>
  memref.copy %a, %m : memref<16x16xf32> to memref<16x16xf32> loc("update")
  %unused = memref.alloc() : memref<10xf32>
  return %l : memref<f32>
}

func.func @predict(%x: memref<16x16xf32>) -> memref<16x16xf32> {
  %big = memref.alloc() : memref<1024x1024xf32>
  %y = memref.alloc() : memref<16x16xf32>
  fluid_rt.launch "relu" ins(%x : memref<16x16xf32>) outs(%y : memref<16x16xf32>) params {}
  return %y : memref<16x16xf32>
}
