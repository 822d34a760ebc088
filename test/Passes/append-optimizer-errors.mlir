// Bad options and programs: a clear error naming the problem.
// RUN: not fluid-opt %s --fluid-append-backward '--fluid-append-optimizer=optimizer=rmsprop' 2>&1 | FileCheck %s --check-prefix=OPTIMIZER
// RUN: not fluid-opt %s --fluid-append-backward '--fluid-append-optimizer=schedule=linear' 2>&1 | FileCheck %s --check-prefix=SCHEDULE
// RUN: not fluid-opt %s --fluid-append-backward '--fluid-append-optimizer=lr=-1' 2>&1 | FileCheck %s --check-prefix=LR
// RUN: not fluid-opt %s --fluid-append-backward '--fluid-append-optimizer=schedule=cosine' 2>&1 | FileCheck %s --check-prefix=COSINE
// RUN: not fluid-opt %s --fluid-append-backward '--fluid-append-optimizer=schedule=multistep milestones=5,2' 2>&1 | FileCheck %s --check-prefix=MILESTONES
// RUN: not fluid-opt %s --fluid-append-backward '--fluid-append-optimizer=warmup-steps=5 warmup-start-factor=0' 2>&1 | FileCheck %s --check-prefix=WARMUP
// RUN: not fluid-opt %s --fluid-append-optimizer 2>&1 | FileCheck %s --check-prefix=NOGRADS
// RUN: not fluid-opt %s '--fluid-build-training=bogus=1' 2>&1 | FileCheck %s --check-prefix=UNKNOWN

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
