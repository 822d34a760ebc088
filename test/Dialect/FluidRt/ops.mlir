// The buffer-level ops round-trip, and a launch is verified by the rule of
// the op it runs.
// RUN: fluid-opt %s -split-input-file -verify-diagnostics | FileCheck %s

fluid.param @w : tensor<16x3x3x3xf32> init zeros
// CHECK-LABEL: func.func @ok
func.func @ok(%x: memref<8x3x32x32xf32>, %y: memref<8x16x32x32xf32>) {
  // CHECK: %[[W:.+]] = fluid_rt.param_ref @w : memref<16x3x3x3xf32>
  %w = fluid_rt.param_ref @w : memref<16x3x3x3xf32>
  // CHECK: fluid_rt.launch "conv2d" ins(%{{.+}}, %[[W]] : memref<8x3x32x32xf32>, memref<16x3x3x3xf32>) outs(%{{.+}} : memref<8x16x32x32xf32>) params {padding = array<i64: 1, 1, 1, 1>}
  fluid_rt.launch "conv2d" ins(%x, %w : memref<8x3x32x32xf32>, memref<16x3x3x3xf32>) outs(%y : memref<8x16x32x32xf32>) params {padding = array<i64: 1, 1, 1, 1>}
  // CHECK: fluid_rt.view %{{.+}} : memref<8x16x32x32xf32> -> memref<8x16384xf32>
  %v = fluid_rt.view %y : memref<8x16x32x32xf32> -> memref<8x16384xf32>
  return
}

// -----

func.func @bad_shape(%x: memref<8x3x32x32xf32>, %w: memref<16x3x3x3xf32>, %y: memref<8x16x30x30xf32>) {
  // expected-error @+3 {{'fluid.conv2d' op inferred type(s) 'tensor<8x16x32x32xf32>' are incompatible with return type(s) of operation 'tensor<8x16x30x30xf32>'}}
  // expected-error @+2 {{'fluid.conv2d' op failed to infer returned types}}
  // expected-error @+1 {{'fluid_rt.launch' op is not a valid 'conv2d' on these buffers}}
  fluid_rt.launch "conv2d" ins(%x, %w : memref<8x3x32x32xf32>, memref<16x3x3x3xf32>) outs(%y : memref<8x16x30x30xf32>) params {padding = array<i64: 1, 1, 1, 1>}
  return
}

// -----

func.func @bad_kernel(%y: memref<4xf32>) {
  // expected-error @+1 {{'fluid_rt.launch' op has no kernel 'frobnicate'}}
  fluid_rt.launch "frobnicate" outs(%y : memref<4xf32>) params {}
  return
}

// -----

func.func @no_param_kernels(%y: memref<4xf32>) {
  // expected-error @+1 {{'fluid_rt.launch' op has no kernel 'get_param'}}
  fluid_rt.launch "get_param" outs(%y : memref<4xf32>) params {name = @w}
  return
}

// -----

fluid.param @w : tensor<4xf32> init zeros
func.func @bad_ref() {
  // expected-error @+1 {{'fluid_rt.param_ref' op buffer type 'memref<5xf32>' does not match parameter @w of type 'tensor<4xf32>'}}
  %w = fluid_rt.param_ref @w : memref<5xf32>
  return
}

// -----

func.func @not_a_param() {
  // expected-error @+1 {{'fluid_rt.param_ref' op refers to @not_a_param, which is not a fluid.param}}
  %w = fluid_rt.param_ref @not_a_param : memref<5xf32>
  return
}

// -----

func.func @bad_view(%x: memref<4xf32>) {
  // expected-error @+1 {{'fluid_rt.view' op cannot view 'memref<4xf32>' as 'memref<5xf32>'}}
  %v = fluid_rt.view %x : memref<4xf32> -> memref<5xf32>
  return
}

// -----

// The memory plan's attributes: on functions, non-negative i64s.
// CHECK-LABEL: func.func @planned
// CHECK-SAME: fluid_rt.arena_bytes = 512 : i64, fluid_rt.arena_lower_bound = 256 : i64
func.func @planned() attributes {fluid_rt.arena_bytes = 512 : i64, fluid_rt.arena_lower_bound = 256 : i64} {
  return
}

// -----

// expected-error @+1 {{'func.func' op 'fluid_rt.arena_bytes' must be a non-negative i64, got -1 : i64}}
func.func @negative() attributes {fluid_rt.arena_bytes = -1 : i64} {
  return
}

// -----

// expected-error @+1 {{'func.func' op 'fluid_rt.arena_lower_bound' must be a non-negative i64, got "many"}}
func.func @not_integer() attributes {fluid_rt.arena_lower_bound = "many"} {
  return
}

// -----

// expected-error @+1 {{'func.func' op 'fluid_rt.workspace_limit' belongs on the module}}
func.func @misplaced() attributes {fluid_rt.workspace_limit = 0 : i64} {
  return
}

// -----

// expected-error @+1 {{'builtin.module' op 'fluid_rt.arena_bytes' belongs on functions}}
module attributes {fluid_rt.arena_bytes = 0 : i64} {
}

// -----

// expected-error @+1 {{'func.func' op has unknown attribute 'fluid_rt.arena'; the fluid_rt dialect's operation attributes are 'fluid_rt.arena_bytes', 'fluid_rt.arena_lower_bound', 'fluid_rt.workspace_limit', 'fluid_rt.gpu_kernel' and 'fluid_rt.gpu_sum_splits'}}
func.func @unknown() attributes {fluid_rt.arena = 0 : i64} {
  return
}

// -----

// The workspace limit may be negative (no limit).
// CHECK: module attributes {fluid_rt.workspace_limit = -1 : i64}
module attributes {fluid_rt.workspace_limit = -1 : i64} {
}

// -----

// A fused body's op that lacks a required attribute is an error, not a
// crash: the launch's check verifies the body's ops before the fusion's
// region rule reads them (a fuzzer's find, session 21).
func.func @fused_slice_without_offset(%v: memref<2x4x8x8xf32>, %w: memref<2x4x8x8xf32>) {
  // expected-error @+1 {{'fluid_rt.launch' op is not a valid 'fusion' on these buffers}}
  fluid_rt.launch "fusion" ins(%v : memref<2x4x8x8xf32>) outs(%w : memref<2x4x8x8xf32>) params {} {
  ^bb0(%arg0: tensor<2x4x8x8xf32>):
    // expected-error @+1 {{'fluid.slice' op requires attribute 'offset'}}
    %n = fluid.slice %arg0 {axis = 0 : i64, offsetx = 0 : i64} : tensor<2x4x8x8xf32> -> tensor<1x4x8x8xf32>
    %d = fluid.sub %arg0, %n : tensor<2x4x8x8xf32>, tensor<1x4x8x8xf32> -> tensor<2x4x8x8xf32>
    fluid.yield %d : tensor<2x4x8x8xf32>
  }
  return
}
