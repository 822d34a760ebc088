// --fluid-memory-report reports a bufferized training step only.
// RUN: fluid-opt %s -split-input-file --fluid-memory-report -verify-diagnostics -o /dev/null

// expected-error @+1 {{@step is not bufferized (argument #0 is a tensor): run --fluid-bufferize first}}
func.func @step(%x: tensor<4xf32>) -> tensor<4xf32> attributes {fluid.entry} {
  return %x : tensor<4xf32>
}

// -----

fluid.param @w : tensor<4xf32> init ones

// expected-error @+1 {{@step is not bufferized (result #0 is a tensor): run --fluid-bufferize first}}
func.func @step() -> tensor<4xf32> attributes {fluid.entry} {
  %w = fluid.get_param @w : tensor<4xf32>
  return %w : tensor<4xf32>
}

// -----

fluid.param @w : tensor<4xf32> init ones

// expected-error @+1 {{@step is not bufferized (it has 'fluid.get_param'): run --fluid-bufferize first}}
func.func @step() attributes {fluid.entry} {
  %w = fluid.get_param @w : tensor<4xf32>
  fluid.set_param @w, %w : tensor<4xf32>
  return
}

// -----

// expected-error @+1 {{--fluid-memory-report: cannot choose the entry function among @a, @b}}
module {
  func.func @a() {
    return
  }
  func.func @b() {
    return
  }
}

// -----

// expected-error @+1 {{--fluid-memory-report handles single-block functions only}}
func.func @step() attributes {fluid.entry} {
  return
^unreachable:
  return
}
