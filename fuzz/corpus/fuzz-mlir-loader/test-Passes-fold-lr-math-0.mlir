// --fluid-fold-lr-math on the per-parameter rates of --fluid-append-optimizer:
// parameters with lr_mult 1 use the step's rate itself, each other
// multiplier leaves one product shared by its parameters, a constant
// schedule folds to constants, what depends on the step stays (computed
// once), and the model's own ops are left alone.
// Products: 9 of the model (forward and backward) and, without the pass,
// one per parameter; with it, none under a constant schedule.
// UNFOLDED: {{^}}14{{$}}
// FOLDED: {{^}}9{{$}}

fluid.param @w : tensor<4xf32> init ones
fluid.param @b : tensor<f32> init zeros {lr_mult = 2.0 : f64, decay_mult = 0.0 : f64}
fluid.param @c : tensor<4xf32> init ones {lr_mult = 2.0 : f64}
fluid.param @d : tensor<4xf32> init ones {lr_mult = 0.5 : f64}
fluid.param @e : tensor<4xf32> init ones
fluid.param @stat : tensor<4xf32> init zeros {trainable = false}

func.func @loss() -> tensor<f32> {
  %w = fluid.get_param @w : tensor<4xf32>
  %b = fluid.get_param @b : tensor<f32>
  %c = fluid.get_param @c : tensor<4xf32>
  %d = fluid.get_param @d : tensor<4xf32>
  %e = fluid.get_param @e : tensor<4xf32>
  %stat = fluid.get_param @stat : tensor<4xf32>
  %one = fluid.constant dense<1.0> : tensor<4xf32>
  %0 = fluid.add %w, %b : tensor<4xf32>, tensor<f32> -> tensor<4xf32>
  %1 = fluid.mul %0, %c : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  %2 = fluid.mul %1, %d : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  %3 = fluid.mul %2, %e : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  %4 = fluid.add %3, %stat : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  %l = fluid.mean %4 : tensor<4xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// The model's ops are still there (no scalar math of its own is touched).
// CONST-LABEL: func.func @loss
// CONST-COUNT-3: fluid.mul %{{.*}} : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
// CONST: %[[COUNTER:.*]] = fluid.get_param @global_step : tensor<i64>
// CONST-NOT: fluid.cast
// CONST: %[[RATE:.*]] = fluid.constant dense<1.000000e-01> : tensor<f64>
// CONST: fluid.set_param @global_step
// CONST-NOT: fluid.mul
// CONST-NOT: fluid.cast
// CONST: %[[R1:.*]] = fluid.constant dense<1.000000e-01> : tensor<f32>
// CONST: fluid.momentum %{{.*}}, %{{.*}}, %{{.*}}, %[[R1]] {weight_decay = 1.000000e-04 : f64}
// CONST: %[[R2:.*]] = fluid.constant dense<2.000000e-01> : tensor<f32>
// CONST: fluid.momentum %{{.*}}, %{{.*}}, %{{.*}}, %[[R2]] : tensor<f32>
// CONST: fluid.momentum %{{.*}}, %{{.*}}, %{{.*}}, %[[R2]] {weight_decay = 1.000000e-04 : f64}
// CONST: %[[R3:.*]] = fluid.constant dense<5.000000e-02> : tensor<f32>
// CONST: fluid.momentum %{{.*}}, %{{.*}}, %{{.*}}, %[[R3]]
// CONST: fluid.momentum %{{.*}}, %{{.*}}, %{{.*}}, %[[R1]]
// CONST: return %{{.*}}, %[[RATE]]

// The step schedule: rate = @learning_rate x 0.1^floor(t / 3), once; one
// product for lr_mult 2 and one for 0.5; the rest use the rate itself.
// STEP-LABEL: func.func @loss
// STEP: %[[T:.*]] = fluid.cast %{{.*}} : tensor<i64> -> tensor<f64>
// STEP: fluid.floor
// STEP: fluid.pow
// STEP: %[[BASE:.*]] = fluid.get_param @learning_rate
// STEP-NOT: fluid.get_param @learning_rate
// STEP: %[[RATE:.*]] = fluid.mul %[[BASE]], %{{.*}} : tensor<f64>, tensor<f64> -> tensor<f64>
// STEP: %[[R32:.*]] = fluid.cast %[[RATE]] : tensor<f64> -> tensor<f32>
// STEP-NOT: fluid.cast
// STEP: fluid.momentum %{{.*}}, %{{.*}}, %{{.*}}, %[[R32]]
// STEP: %[[TWO:.*]] = fluid.constant dense<2.000000e+00> : tensor<f32>
// STEP: %[[R2:.*]] = fluid.mul %[[R32]], %[[TWO]]
// STEP: fluid.momentum %{{.*}}, %{{.*}}, %{{.*}}, %[[R2]] : tensor<f32>
// STEP: fluid.momentum %{{.*}}, %{{.*}}, %{{.*}}, %[[R2]] {weight_decay
// STEP: %[[HALF:.*]] = fluid.constant dense<5.000000e-01> : tensor<f32>
// STEP: %[[R3:.*]] = fluid.mul %[[R32]], %[[HALF]]
// STEP: fluid.momentum %{{.*}}, %{{.*}}, %{{.*}}, %[[R3]]
// STEP-NOT: fluid.mul
// STEP: fluid.momentum %{{.*}}, %{{.*}}, %{{.*}}, %[[R32]]
// STEP: return %{{.*}}, %[[RATE]]

// Cosine with warm-up: one read of @learning_rate, the product by 1 of the
// cosine's (lr - eta_min) gone, eta_min + x kept (0.0 + -0.0 is +0.0).
// COSINE-LABEL: func.func @loss
// COSINE: %[[BASE:.*]] = fluid.get_param @learning_rate
// COSINE-NOT: fluid.get_param @learning_rate
// COSINE: fluid.cos
// COSINE: %[[WAVE:.*]] = fluid.div
// COSINE: fluid.mul %[[BASE]], %[[WAVE]]
// COSINE: %[[RATE:.*]] = fluid.select
// COSINE: %[[R32:.*]] = fluid.cast %[[RATE]] : tensor<f64> -> tensor<f32>
// COSINE: fluid.adam %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[R32]], %{{.*}} {decoupled
