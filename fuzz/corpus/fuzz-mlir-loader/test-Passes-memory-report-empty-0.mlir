// A step without temporaries: nothing is live, there is no peak, and the
// only launch is the copy into the parameter.

// TABLE:      memory of @step (mode none, 1 launch, 0 temporaries)
// TABLE-NEXT:   all temporaries 0 bytes 0 B
// TABLE-NEXT:   lower bound 0 bytes 0 B
// TABLE-NEXT:   persistent 8 bytes 8 B
// TABLE-NEXT:     parameters 8 bytes 8 B
// TABLE:      no temporary is live at any launch
// TABLE-NOT: {{.}}

// JSON:      "arena_bytes": 0,
// JSON-NEXT: "lower_bound_bytes": 0,
// JSON-NEXT: "peak_launch": -1,
// JSON-NEXT: "peak_kernel": "",
// JSON-NEXT: "peak_location": "",
// JSON:      "temporaries": 0,
// JSON-NEXT: "launches": 1,
// JSON-NEXT: "recomputed_launches": 0,
// JSON-NEXT: "recomputed_bytes": 0,
// JSON-NEXT: "largest_live": []

// CSV:      launch,kernel,live_bytes
// CSV-NEXT: 0,copy,0

fluid.param @a : tensor<f32> init ones
fluid.param @b : tensor<f32> init zeros

func.func @step() attributes {fluid.entry} {
  %a = fluid_rt.param_ref @a : memref<f32>
  %b = fluid_rt.param_ref @b : memref<f32>
  memref.copy %a, %b : memref<f32> to memref<f32>
  return
}
