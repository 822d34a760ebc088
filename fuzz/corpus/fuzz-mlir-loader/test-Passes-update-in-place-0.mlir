// --fluid-update-in-place: updates whose kernel may write over its inputs
// write the parameter's buffer directly; the fresh buffer and the copy go.

fluid.param @w : tensor<4xf32> init ones
fluid.param @v : tensor<4xf32> init zeros {trainable = false}
fluid.param @step : tensor<i64> init zeros {trainable = false}

func.func @updates(%g: memref<4xf32>, %lr: memref<f32>) {
  %w = fluid_rt.param_ref @w : memref<4xf32>
  %v = fluid_rt.param_ref @v : memref<4xf32>
  %nw = memref.alloc() : memref<4xf32>
  %nv = memref.alloc() : memref<4xf32>
  fluid_rt.launch "momentum" ins(%w, %g, %v, %lr : memref<4xf32>, memref<4xf32>, memref<4xf32>, memref<f32>) outs(%nw, %nv : memref<4xf32>, memref<4xf32>) params {}
  %w_out = fluid_rt.param_ref @w : memref<4xf32>
  memref.copy %nw, %w_out : memref<4xf32> to memref<4xf32>
  %v_out = fluid_rt.param_ref @v : memref<4xf32>
  memref.copy %nv, %v_out : memref<4xf32> to memref<4xf32>
  // The step counter: a same-shape add.
  %s = fluid_rt.param_ref @step : memref<i64>
  %one = memref.alloc() : memref<i64>
  fluid_rt.launch "constant" outs(%one : memref<i64>) params {value = dense<1> : tensor<i64>}
  %ns = memref.alloc() : memref<i64>
  fluid_rt.launch "add" ins(%s, %one : memref<i64>, memref<i64>) outs(%ns : memref<i64>) params {}
  %s_out = fluid_rt.param_ref @step : memref<i64>
  memref.copy %ns, %s_out : memref<i64> to memref<i64>
  return
}
