// lr-param=true: the base rate is the parameter @learning_rate (f64,
// initialized to lr) that every use of lr in the schedule reads, so a
// compiled program can be given another rate when it starts.
// Without the option nothing reads a parameter for the rate.
// A parameter of that name but another type is an error.
// The rate read from the parameter equals the baked-in one, step by step,
// on the cpu backend (the same f64 operations on the same numbers).
// CURVE: step 1  epoch 0  loss {{[0-9.]+}}  lr 0.06
// eta_min + (lr - eta_min) * (1 + cos(pi * 5 / 6)) / 2 = 0.029426
// CURVE: step 9  epoch 2  loss {{[0-9.]+}}  lr 0.029426

// Warm-up ramp and start: lr * (1 - s) and lr * s, from the parameter.
// Cosine: eta_min + (lr - eta_min) * wave, with lr - eta_min = lr + (-eta_min).

// BAKED-NOT: @learning_rate

// CLASH: error: --fluid-append-optimizer needs the name @learning_rate for a non-trainable 'tensor<f64>' parameter

fluid.param @w : tensor<4xf32> init ones
fluid.param @unused : tensor<2xf32> init zeros {trainable = false}
func.func @loss() -> tensor<f32> {
  %w = fluid.get_param @w : tensor<4xf32>
  %l = fluid.mean %w : tensor<4xf32> -> tensor<f32>
  return %l : tensor<f32>
}
