// lr-param=true: the base rate is the parameter @learning_rate (f64,
// initialized to lr) that every use of lr in the schedule reads, so a
// compiled program can be given another rate when it starts.
// RUN: fluid-opt %s '--fluid-build-training=optimizer=sgd lr=0.25 schedule=cosine total-steps=8 eta-min=0.01 warmup-steps=2 warmup-start-factor=0.5 lr-param=true fold-lr-math=false group-optimizer=false' | FileCheck %s
// Without the option nothing reads a parameter for the rate.
// RUN: fluid-opt %s '--fluid-build-training=optimizer=sgd lr=0.25 schedule=cosine total-steps=8 fold-lr-math=false group-optimizer=false' | FileCheck %s --check-prefix=BAKED
// A parameter of that name but another type is an error.
// RUN: sed 's/@unused/@learning_rate/' %s | not fluid-opt --mlir-print-op-on-diagnostic=false '--fluid-build-training=lr-param=true' 2>&1 | FileCheck %s --check-prefix=CLASH
// The rate read from the parameter equals the baked-in one, step by step,
// on the cpu backend (the same f64 operations on the same numbers).
// RUN: rm -rf %t && mkdir -p %t
// RUN: fluid-models mlp --batch 8 --image-size 8 -o %t/mlp.mlir
// RUN: fluid-opt %t/mlp.mlir '--fluid-build-training=optimizer=momentum lr=0.3 schedule=cosine total-steps=6 eta-min=0.01 warmup-steps=3 warmup-start-factor=0.2' -o %t/baked.mlir
// RUN: fluid-opt %t/mlp.mlir '--fluid-build-training=optimizer=momentum lr=0.3 schedule=cosine total-steps=6 eta-min=0.01 warmup-steps=3 warmup-start-factor=0.2 lr-param=true' -o %t/param.mlir
// RUN: fluid-train %t/baked.mlir --data synthetic --synthetic-size 32 --steps 9 --log-every 1 | grep '^step' | sed 's/  [0-9]* images.s//' > %t/baked.log
// RUN: fluid-train %t/param.mlir --data synthetic --synthetic-size 32 --steps 9 --log-every 1 | grep '^step' | sed 's/  [0-9]* images.s//' > %t/param.log
// RUN: diff %t/baked.log %t/param.log
// RUN: FileCheck %s --check-prefix=CURVE --input-file=%t/param.log
// CURVE: step 1  epoch 0  loss {{[0-9.]+}}  lr 0.06
// eta_min + (lr - eta_min) * (1 + cos(pi * 5 / 6)) / 2 = 0.029426
// CURVE: step 9  epoch 2  loss {{[0-9.]+}}  lr 0.029426

// CHECK: fluid.param @global_step : tensor<i64>
// CHECK-NEXT: fluid.param @learning_rate : tensor<f64> init constant(2.500000e-01) {fluid.optimizer_state, trainable = false}
// Warm-up ramp and start: lr * (1 - s) and lr * s, from the parameter.
// CHECK: %[[BASE1:.*]] = fluid.get_param @learning_rate : tensor<f64>
// CHECK: fluid.mul %[[BASE1]], %{{.*}} : tensor<f64>, tensor<f64> -> tensor<f64>
// CHECK: %[[BASE2:.*]] = fluid.get_param @learning_rate : tensor<f64>
// CHECK: fluid.mul %[[BASE2]], %{{.*}} : tensor<f64>, tensor<f64> -> tensor<f64>
// Cosine: eta_min + (lr - eta_min) * wave, with lr - eta_min = lr + (-eta_min).
// CHECK: %[[BASE3:.*]] = fluid.get_param @learning_rate : tensor<f64>
// CHECK: fluid.add %[[BASE3]], %{{.*}} : tensor<f64>, tensor<f64> -> tensor<f64>

// BAKED-NOT: @learning_rate

// CLASH: error: --fluid-append-optimizer needs the name @learning_rate for a non-trainable 'tensor<f64>' parameter

fluid.param @w : tensor<4xf32> init ones
fluid.param @unused : tensor<2xf32> init zeros {trainable = false}
func.func @loss() -> tensor<f32> {
  %w = fluid.get_param @w : tensor<4xf32>
  %l = fluid.mean %w : tensor<4xf32> -> tensor<f32>
  return %l : tensor<f32>
}
