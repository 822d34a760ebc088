// RUN: fluid-opt %s --fluid-test-buffer-liveness -verify-diagnostics -o /dev/null

// expected-error @+1 {{--fluid-test-buffer-liveness handles single-block functions only}}
func.func @blocks() {
  return
^unreachable:
  return
}
