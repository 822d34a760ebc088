// Bad options and programs: a clear error naming the problem.

// OPTIMIZER: fluid-opt: error: --fluid-append-optimizer: unknown optimizer 'rmsprop'; expected sgd, momentum, adam or adamw
// SCHEDULE: error: --fluid-append-optimizer: unknown schedule 'linear'; expected constant, step, multistep, exponential or cosine
// LR: error: --fluid-append-optimizer: lr must be finite and > 0
// COSINE: error: --fluid-append-optimizer: the cosine schedule needs total-steps >= 1
// MILESTONES: error: --fluid-append-optimizer: milestones must be positive and ascending
// WARMUP: error: --fluid-append-optimizer: warmup-start-factor must be in (0, 1]
// NOGRADS: error: --fluid-append-optimizer: @loss returns no gradients (fluid.grad_of); run --fluid-append-backward first
// UNKNOWN: fluid-opt: error: --fluid-build-training: unknown option 'bogus'

fluid.param @w : tensor<4xf32> init ones
func.func @loss() -> tensor<f32> {
  %w = fluid.get_param @w : tensor<4xf32>
  %l = fluid.mean %w : tensor<4xf32> -> tensor<f32>
  return %l : tensor<f32>
}
