// Bad loss-scaling options and programs: a clear error naming the problem.
// RUN: not fluid-opt %s '--fluid-build-training=loss-scale=-1' 2>&1 | FileCheck %s --check-prefix=NEGATIVE
// RUN: not fluid-opt %s '--fluid-build-training=loss-scale=1e39' 2>&1 | FileCheck %s --check-prefix=NEGATIVE
// RUN: not fluid-opt %s '--fluid-build-training=loss-scale=nan' 2>&1 | FileCheck %s --check-prefix=NEGATIVE
// RUN: not fluid-opt %s '--fluid-build-training=loss-scale=8 scale-growth-interval=0' 2>&1 | FileCheck %s --check-prefix=INTERVAL
// RUN: not fluid-opt %s '--fluid-build-training=loss-scale=8 scale-growth-interval=16777217' 2>&1 | FileCheck %s --check-prefix=INTERVAL
// RUN: not fluid-opt %s '--fluid-build-training=loss-scale=8 scale-growth-factor=1' 2>&1 | FileCheck %s --check-prefix=GROWTH
// RUN: not fluid-opt %s '--fluid-build-training=loss-scale=8 scale-backoff-factor=1' 2>&1 | FileCheck %s --check-prefix=BACKOFF
// RUN: not fluid-opt %s '--fluid-build-training=loss-scale=8 min-loss-scale=4 max-loss-scale=2' 2>&1 | FileCheck %s --check-prefix=BOUNDS
// RUN: not fluid-opt %s '--fluid-build-training=loss-scale=8 max-loss-scale=1e39' 2>&1 | FileCheck %s --check-prefix=BOUNDS
// RUN: not fluid-opt %s '--fluid-build-training=loss-scale=eight' 2>&1 | FileCheck %s --check-prefix=PARSE
// The name is taken by a model parameter.
// RUN: sed 's/@w2/@loss_scale/g' %s > %t.mlir
// RUN: not fluid-opt %t.mlir '--fluid-build-training=loss-scale=8' 2>&1 | FileCheck %s --check-prefix=TAKEN

// NEGATIVE: error: --fluid-append-backward: loss-scale must be a finite f32 >= 0 (0: no loss scaling), got
// INTERVAL: error: --fluid-build-training: scale-growth-interval must be in [1, 2^24], got
// GROWTH: error: --fluid-build-training: scale-growth-factor must be finite and > 1
// BACKOFF: error: --fluid-build-training: scale-backoff-factor must be in (0, 1)
// BOUNDS: error: --fluid-build-training: min-loss-scale and max-loss-scale must satisfy 0 < min <= max <= the largest f32
// PARSE: fluid-opt: for the --loss-scale option: 'eight' value invalid for floating point argument
// TAKEN: error: --fluid-append-backward needs the name @loss_scale for a non-trainable 'tensor<f32>' parameter

fluid.param @w : tensor<4xf32> init ones
fluid.param @w2 : tensor<f32> init ones
func.func @loss() -> tensor<f32> {
  %w = fluid.get_param @w : tensor<4xf32>
  %v = fluid.get_param @w2 : tensor<f32>
  %l = fluid.mean %w : tensor<4xf32> -> tensor<f32>
  %s = fluid.add %l, %v : tensor<f32>, tensor<f32> -> tensor<f32>
  return %s : tensor<f32>
}
