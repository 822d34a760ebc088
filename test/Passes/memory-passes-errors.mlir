// The buffer-level memory passes handle single-block functions only, and
// say so at the function.
// RUN: fluid-opt %s --fluid-insert-frees -verify-diagnostics -split-input-file
// RUN: sed 's/fluid-insert-frees/fluid-plan-memory/' %s | fluid-opt --fluid-plan-memory -verify-diagnostics -split-input-file

// expected-error @+1 {{--fluid-insert-frees handles single-block functions only}}
func.func @blocks(%x: memref<4xf32>) {
  return
^unreachable:
  return
}
