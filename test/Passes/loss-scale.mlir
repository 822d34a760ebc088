// Dynamic loss scaling (--fluid-append-backward's loss-scale, then
// --fluid-append-optimizer): the backward pass starts from @loss_scale, the
// gradients are unscaled and checked by one fluid.unscale_grads per element
// type, every update reads its flag (skip_if), and the scale and its
// counters are updated from the flag with ordinary scalar ops.
// RUN: fluid-opt %s '--fluid-build-training=optimizer=momentum lr=0.1 loss-scale=1024 scale-growth-interval=3 scale-growth-factor=4 scale-backoff-factor=0.25 min-loss-scale=2 max-loss-scale=65536' | FileCheck %s --enable-var-scope
// RUN: fluid-opt %s '--fluid-build-training=optimizer=adam lr=0.1 loss-scale=8 group-optimizer=false' | FileCheck %s --enable-var-scope --check-prefix=SINGLE
// RUN: fluid-opt %s '--fluid-build-training=optimizer=sgd lr=0.1' | FileCheck %s --check-prefix=NONE
// The passes' output parses and prints back the same.
// RUN: fluid-opt %s '--fluid-build-training=optimizer=momentum lr=0.1 loss-scale=1024' | fluid-opt --verify-roundtrip -o /dev/null

fluid.param @w : tensor<4xf32> init ones
fluid.param @b : tensor<f32> init zeros
fluid.param @d : tensor<2xf64> init ones

func.func @loss(%x: tensor<4xf32> {fluid.name = "x"}) -> tensor<f32> {
  %w = fluid.get_param @w : tensor<4xf32>
  %b = fluid.get_param @b : tensor<f32>
  %d = fluid.get_param @d : tensor<2xf64>
  %p = fluid.mul %w, %x : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  %s = fluid.add %p, %b : tensor<4xf32>, tensor<f32> -> tensor<4xf32>
  %l = fluid.mean %s : tensor<4xf32> -> tensor<f32>
  %dm = fluid.mean %d : tensor<2xf64> -> tensor<f64>
  %d32 = fluid.cast %dm : tensor<f64> -> tensor<f32>
  %t = fluid.add %l, %d32 : tensor<f32>, tensor<f32> -> tensor<f32>
  return %t : tensor<f32>
}

// The scale is optimizer state (a PyTorch state dict lacks it), so are its
// counters.
// CHECK: fluid.param @loss_scale : tensor<f32> init constant(1.024000e+03) {fluid.optimizer_state, trainable = false}
// CHECK: fluid.param @loss_scale.growth_tracker : tensor<f32> init zeros {fluid.optimizer_state, trainable = false}
// CHECK-NEXT: fluid.param @loss_scale.skipped_steps : tensor<i64> init zeros {fluid.optimizer_state, trainable = false}
// CHECK-LABEL: func.func @loss
// CHECK-SAME: -> (tensor<f32> {fluid.loss, fluid.loss_scale = @loss_scale}, tensor<f64> {fluid.learning_rate})
// The loss is returned as computed; the backward pass starts at the scale.
// CHECK: %[[LOSS:.+]] = fluid.add %{{.+}}, %{{.+}} : tensor<f32>, tensor<f32> -> tensor<f32>
// CHECK-NEXT: %[[SEED:.+]] = fluid.get_param @loss_scale : tensor<f32>
// CHECK-NEXT: fluid.cast %[[SEED]] : tensor<f32> -> tensor<f64>
// CHECK: %{{.+}} = fluid.reshape %[[SEED]] : tensor<f32> -> tensor<1xf32>
// One unscale per element type; one flag from both.
// CHECK: %[[SCALE:.+]] = fluid.get_param @loss_scale : tensor<f32>
// CHECK-NEXT: %[[U32:.+]]:2, %[[F32:.+]] = fluid.unscale_grads(%{{.+}}, %{{.+}}), %[[SCALE]] : (tensor<4xf32>, tensor<f32>)
// CHECK-NEXT: %[[U64:.+]], %[[F64:.+]] = fluid.unscale_grads(%{{.+}}), %[[SCALE]] : (tensor<2xf64>)
// CHECK-NEXT: %[[FOUND:.+]] = fluid.maximum %[[F32]], %[[F64]] : tensor<f32>, tensor<f32> -> tensor<f32>
// Each group of updates skips on the flag.
// CHECK-DAG: fluid.momentum_group(%{{.+}}, %{{.+}}), (%[[U32]]#0, %[[U32]]#1), (%{{.+}}, %{{.+}}), %{{.+}} skip_if %[[FOUND]] {{.*}}: (tensor<4xf32>, tensor<f32>), tensor<f32>
// CHECK-DAG: fluid.momentum %{{.+}}, %[[U64]], %{{.+}}, %{{.+}} skip_if %[[FOUND]] {{.*}}: tensor<2xf64>, tensor<f64>
// good = (tracker + 1) * (1 - found); grow at the interval; back off on
// the flag; clamp; count skipped steps.
// CHECK: %[[OLD:.+]] = fluid.get_param @loss_scale : tensor<f32>
// CHECK-NEXT: %[[TRACKER:.+]] = fluid.get_param @loss_scale.growth_tracker : tensor<f32>
// CHECK: %[[OK:.+]] = fluid.sub %{{.+}}, %[[FOUND]]
// CHECK: %[[NEXT:.+]] = fluid.add %[[TRACKER]], %{{.+}}
// CHECK-NEXT: %[[GOOD:.+]] = fluid.mul %[[NEXT]], %[[OK]]
// CHECK-NEXT: %[[INTERVAL:.+]] = fluid.constant dense<3.000000e+00> : tensor<f32>
// CHECK-NEXT: %[[GROW:.+]] = fluid.greater_equal %[[GOOD]], %[[INTERVAL]]
// CHECK: %[[GROWTH:.+]] = fluid.constant dense<4.000000e+00> : tensor<f32>
// CHECK-NEXT: %[[UP:.+]] = fluid.select %[[GROW]], %[[GROWTH]], %{{.+}}
// CHECK-NEXT: %[[BACKOFF:.+]] = fluid.constant dense<2.500000e-01> : tensor<f32>
// CHECK-NEXT: %[[FACTOR:.+]] = fluid.select %[[FOUND]], %[[BACKOFF]], %[[UP]]
// CHECK-NEXT: %[[MAX:.+]] = fluid.constant dense<6.553600e+04> : tensor<f32>
// CHECK-NEXT: %[[MIN:.+]] = fluid.constant dense<2.000000e+00> : tensor<f32>
// CHECK-NEXT: %[[SCALED:.+]] = fluid.mul %[[OLD]], %[[FACTOR]]
// CHECK-NEXT: %[[LOW:.+]] = fluid.maximum %[[SCALED]], %[[MIN]]
// CHECK-NEXT: %[[NEW:.+]] = fluid.minimum %[[LOW]], %[[MAX]]
// CHECK-NEXT: fluid.set_param @loss_scale, %[[NEW]]
// CHECK: %[[RESET:.+]] = fluid.select %[[GROW]], %{{.+}}, %[[GOOD]]
// CHECK-NEXT: fluid.set_param @loss_scale.growth_tracker, %[[RESET]]
// CHECK-NEXT: %[[SKIPPED:.+]] = fluid.get_param @loss_scale.skipped_steps : tensor<i64>
// CHECK-NEXT: %[[ONE:.+]] = fluid.cast %[[FOUND]] : tensor<f32> -> tensor<i64>
// CHECK-NEXT: %[[COUNT:.+]] = fluid.add %[[SKIPPED]], %[[ONE]]
// CHECK-NEXT: fluid.set_param @loss_scale.skipped_steps, %[[COUNT]]
// CHECK: return %[[LOSS]], %{{.+}} : tensor<f32>, tensor<f64>

// Single updates (no grouping) take the flag too.
// SINGLE: fluid.unscale_grads
// SINGLE: fluid.adam %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} skip_if %{{.+}} : tensor<4xf32>, tensor<f32>, tensor<i64>
// SINGLE: fluid.adam %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} skip_if %{{.+}} : tensor<f32>, tensor<f32>, tensor<i64>
// SINGLE: fluid.adam %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} skip_if %{{.+}} : tensor<2xf64>, tensor<f64>, tensor<i64>

// Without loss-scale nothing of this.
// NONE-NOT: loss_scale
// NONE-NOT: unscale_grads
// NONE-NOT: skip_if
