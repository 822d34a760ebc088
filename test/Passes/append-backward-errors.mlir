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
  // expected-error @+1 {{'fluid.floor' op has no gradient rule, but the loss depends on it through a trainable parameter}}
  %f = fluid.floor %w : tensor<4xf32>
  %l = fluid.mean %f : tensor<4xf32> -> tensor<f32>
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
