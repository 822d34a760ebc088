// What --fluid-append-backward refuses, with the reason.
// RUN: fluid-opt %s -split-input-file --fluid-append-backward -verify-diagnostics

func.func @not_scalar(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{--fluid-append-backward: @not_scalar must return exactly one scalar floating-point loss}}
  return %x : tensor<4xf32>
}

// -----

fluid.param @w : tensor<4xf32> init ones
func.func @no_rule() -> tensor<f32> {
  %w = fluid.get_param @w : tensor<4xf32>
  // expected-error @+1 {{'fluid.cos' op has no gradient rule, but the loss depends on it through a trainable parameter}}
  %f = fluid.cos %w : tensor<4xf32>
  %l = fluid.mean %f : tensor<4xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// Widening sums (a 16-bit input summed into f32) are made after
// differentiation; they have no gradient rule.
fluid.param @h : tensor<4xbf16> init ones
func.func @widening_mean() -> tensor<f32> {
  %h = fluid.get_param @h : tensor<4xbf16>
  // expected-error @+1 {{'fluid.mean' op has no gradient rule as a widening sum (a 16-bit input summed into f32): --fluid-widening-reductions makes those after differentiation}}
  %l = fluid.mean %h : tensor<4xbf16> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

fluid.param @s : tensor<2x4xbf16> init ones
func.func @widening_sum_to() -> tensor<f32> {
  %s = fluid.get_param @s : tensor<2x4xbf16>
  // expected-error @+1 {{'fluid.sum_to' op has no gradient rule as a widening sum (a 16-bit input summed into f32): --fluid-widening-reductions makes those after differentiation}}
  %t = fluid.sum_to %s : tensor<2x4xbf16> -> tensor<4xf32>
  %l = fluid.mean %t : tensor<4xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// batch_norm_apply is what the backward pass recomputes; it is never
// differentiated.
fluid.param @gamma : tensor<4xf32> init ones
func.func @differentiates_batch_norm_apply(%x: tensor<2x4xf32>, %c: tensor<4xf32>) -> tensor<f32> {
  %g = fluid.get_param @gamma : tensor<4xf32>
  // expected-error @+1 {{'fluid.batch_norm_apply' op has no gradient rule: it recomputes a batch norm's output for the backward pass, so it appears only after differentiation}}
  %y = fluid.batch_norm_apply %x, %g, %c, %c, %c : tensor<2x4xf32>, tensor<4xf32>
  %l = fluid.mean %y : tensor<2x4xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// expected-error @+1 {{--fluid-append-backward: cannot choose the entry function among @a, @b}}
module {
  func.func @a() {
    return
  }
  func.func @b() {
    return
  }
}

// -----

// A loss that no trainable parameter reaches has nothing to train.
fluid.param @w : tensor<4xf32> init ones
func.func @constant_loss(%x: tensor<4xf32>) -> tensor<f32> {
  %l = fluid.mean %x : tensor<4xf32> -> tensor<f32>
  // expected-error @+1 {{--fluid-append-backward: the loss of @constant_loss depends on none of the 1 trainable parameters; there is nothing to train}}
  return %l : tensor<f32>
}

// -----

// floor passes no gradient: a loss that reads the parameters only through
// it has nothing to train either.
fluid.param @w : tensor<4xf32> init ones
func.func @only_through_floor() -> tensor<f32> {
  %w = fluid.get_param @w : tensor<4xf32>
  %f = fluid.floor %w : tensor<4xf32>
  %l = fluid.mean %f : tensor<4xf32> -> tensor<f32>
  // expected-error @+1 {{--fluid-append-backward: the loss of @only_through_floor depends on none of the 1 trainable parameters; there is nothing to train}}
  return %l : tensor<f32>
}

// -----

// A trainable parameter the loss does not reach is worth a warning.
fluid.param @used : tensor<4xf32> init ones
fluid.param @unused : tensor<4xf32> init ones
// expected-warning @+1 {{--fluid-append-backward: the loss does not depend on 1 trainable parameter (@unused); their gradient is zero}}
func.func @partly_used() -> tensor<f32> {
  %w = fluid.get_param @used : tensor<4xf32>
  %l = fluid.mean %w : tensor<4xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// Only the optimizer writes trainable parameters.
fluid.param @w : tensor<4xf32> init ones
func.func @writes_trainable() -> tensor<f32> {
  %w = fluid.get_param @w : tensor<4xf32>
  %r = fluid.relu %w : tensor<4xf32>
  // expected-error @+1 {{--fluid-append-backward: @writes_trainable writes the trainable parameter @w, which the optimizer updates; a forward function may write only parameters with trainable = false}}
  fluid.set_param @w, %r : tensor<4xf32>
  %l = fluid.mean %w : tensor<4xf32> -> tensor<f32>
  return %l : tensor<f32>
}
