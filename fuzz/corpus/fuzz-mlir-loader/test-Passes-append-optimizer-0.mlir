// The update code --fluid-append-optimizer appends: the step counter, the
// schedule as ordinary ops, one rate product per parameter (lr_mult), the
// weight decay times decay_mult as an attribute, optimizer state as new
// non-trainable parameters, and writes back with fluid.set_param.

fluid.param @w : tensor<4xf32> init ones
fluid.param @b : tensor<f32> init zeros {lr_mult = 2.0 : f64, decay_mult = 0.0 : f64}

func.func @loss() -> tensor<f32> {
  %w = fluid.get_param @w : tensor<4xf32>
  %b = fluid.get_param @b : tensor<f32>
  %s = fluid.add %w, %b : tensor<4xf32>, tensor<f32> -> tensor<4xf32>
  %l = fluid.mean %s : tensor<4xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// MOMENTUM: fluid.param @w : tensor<4xf32> init ones
// MOMENTUM-NEXT: fluid.param @b : tensor<f32> init zeros {decay_mult = 0.000000e+00 : f64, lr_mult = 2.000000e+00 : f64}
// MOMENTUM-NEXT: fluid.param @global_step : tensor<i64> init zeros {fluid.optimizer_state, trainable = false}
// MOMENTUM-NEXT: fluid.param @w.momentum_buffer : tensor<4xf32> init zeros {fluid.optimizer_state, trainable = false}
// MOMENTUM-NEXT: fluid.param @b.momentum_buffer : tensor<f32> init zeros {fluid.optimizer_state, trainable = false}
// MOMENTUM-LABEL: func.func @loss() -> (tensor<f32> {fluid.loss}, tensor<f64> {fluid.learning_rate})
// MOMENTUM: %[[STEP:.+]] = fluid.get_param @global_step : tensor<i64>
// MOMENTUM: %[[T:.+]] = fluid.cast %[[STEP]] : tensor<i64> -> tensor<f64>
// MOMENTUM: %[[PERIODS:.+]] = fluid.floor
// MOMENTUM: %[[DECAY:.+]] = fluid.pow %{{.+}}, %[[PERIODS]]
// MOMENTUM: %[[RATE:.+]] = fluid.mul %{{.+}}, %[[DECAY]] : tensor<f64>, tensor<f64> -> tensor<f64>
// MOMENTUM: %[[NEXT:.+]] = fluid.add %[[STEP]], %{{.+}} : tensor<i64>, tensor<i64> -> tensor<i64>
// MOMENTUM: fluid.set_param @global_step, %[[NEXT]]
// MOMENTUM: %[[RATE32:.+]] = fluid.cast %[[RATE]] : tensor<f64> -> tensor<f32>
// MOMENTUM: %[[ONE:.+]] = fluid.constant dense<1.000000e+00> : tensor<f32>
// MOMENTUM: %[[WRATE:.+]] = fluid.mul %[[RATE32]], %[[ONE]]
// MOMENTUM: %[[W:.+]] = fluid.get_param @w
// MOMENTUM: %[[WV:.+]] = fluid.get_param @w.momentum_buffer
// MOMENTUM: %[[NEWW:[^,]+]], %[[NEWWV:[^ ]+]] = fluid.momentum %[[W]], %{{.+}}, %[[WV]], %[[WRATE]] {weight_decay = 1.000000e-04 : f64} : tensor<4xf32>, tensor<f32>
// MOMENTUM: fluid.set_param @w, %[[NEWW]]
// MOMENTUM: fluid.set_param @w.momentum_buffer, %[[NEWWV]]
// MOMENTUM: %[[TWO:.+]] = fluid.constant dense<2.000000e+00> : tensor<f32>
// MOMENTUM: %[[BRATE:.+]] = fluid.mul %[[RATE32]], %[[TWO]]
// MOMENTUM: fluid.momentum %{{.+}}, %{{.+}}, %{{.+}}, %[[BRATE]] : tensor<f32>, tensor<f32>
// MOMENTUM: return %{{.+}}, %[[RATE]] : tensor<f32>, tensor<f64>

// ADAMW: fluid.param @w.exp_avg : tensor<4xf32> init zeros {fluid.optimizer_state, trainable = false}
// ADAMW-NEXT: fluid.param @w.exp_avg_sq : tensor<4xf32> init zeros {fluid.optimizer_state, trainable = false}
// ADAMW: fluid.cos
// ADAMW: %[[DONE:.+]] = fluid.greater_equal
// ADAMW: %[[RATE:.+]] = fluid.select %[[DONE]]
// ADAMW: %[[NEXT:.+]] = fluid.add
// ADAMW: fluid.adam %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %[[NEXT]] {decoupled, weight_decay = 5.000000e-02 : f64}
// ADAMW: fluid.adam {{.*}} {decoupled} : tensor<f32>, tensor<f32>, tensor<i64>

// SGD-NOT: momentum_buffer
// SGD: fluid.greater_equal
// SGD: fluid.greater_equal
// SGD: fluid.sgd %{{[^{]+}} : tensor<4xf32>, tensor<f32>
