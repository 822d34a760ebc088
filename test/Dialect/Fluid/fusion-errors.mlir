// RUN: fluid-opt %s -split-input-file -verify-diagnostics

func.func @not_elementwise(%x: tensor<1x2x4x4xf32>, %w: tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32> {
  %r = fluid.fusion ins(%x, %w : tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> (tensor<1x2x4x4xf32>) {
  ^bb0(%a: tensor<1x2x4x4xf32>, %b: tensor<2x2x1x1xf32>):
    // expected-error @+1 {{'fluid.conv2d' op cannot be part of a fused region (only elementwise ops and per-channel sums on f32 or f64 can)}}
    %c = fluid.conv2d %a, %b : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
    fluid.yield %c : tensor<1x2x4x4xf32>
  }
  return %r : tensor<1x2x4x4xf32>
}

// -----

func.func @two_shapes(%x: tensor<2x3xf32>, %y: tensor<3xf32>) -> tensor<2x3xf32> {
  %r = fluid.fusion ins(%x, %y : tensor<2x3xf32>, tensor<3xf32>) -> (tensor<2x3xf32>) {
  ^bb0(%a: tensor<2x3xf32>, %b: tensor<3xf32>):
    %m = fluid.mul %a, %b : tensor<2x3xf32>, tensor<3xf32> -> tensor<2x3xf32>
    // expected-error @+1 {{'fluid.neg' op computes 'tensor<3xf32>' inside a fused region whose iteration shape is 2x3}}
    %n = fluid.neg %b : tensor<3xf32>
    fluid.yield %m : tensor<2x3xf32>
  }
  return %r : tensor<2x3xf32>
}

// -----

func.func @sum_used_inside(%x: tensor<2x3xf32>) -> tensor<3xf32> {
  %r = fluid.fusion ins(%x : tensor<2x3xf32>) -> (tensor<3xf32>) {
  ^bb0(%a: tensor<2x3xf32>):
    %e = fluid.exp %a : tensor<2x3xf32>
    // expected-error @+1 {{'fluid.reduce_sum' op result is used inside the fused region; a sum can only be yielded}}
    %s = fluid.reduce_sum %e {axes = array<i64: 0>} : tensor<2x3xf32> -> tensor<3xf32>
    %t = fluid.neg %s : tensor<3xf32>
    fluid.yield %t : tensor<3xf32>
  }
  return %r : tensor<3xf32>
}

// -----

func.func @wrong_yield(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'fluid.fusion' op yields 'tensor<4xf64>' but its results are 'tensor<4xf32>'}}
  %r = fluid.fusion ins(%x : tensor<4xf32>) -> (tensor<4xf32>) {
  ^bb0(%a: tensor<4xf32>):
    %c = fluid.cast %a : tensor<4xf32> -> tensor<4xf64>
    fluid.yield %c : tensor<4xf64>
  }
  return %r : tensor<4xf32>
}

// -----

func.func @argument_types(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'fluid.fusion' op input #0 has type 'tensor<4xf32>' but the body's argument has type 'tensor<4xf64>'}}
  %r = fluid.fusion ins(%x : tensor<4xf32>) -> (tensor<4xf32>) {
  ^bb0(%a: tensor<4xf64>):
    %c = fluid.cast %a : tensor<4xf64> -> tensor<4xf32>
    fluid.yield %c : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

// -----

func.func @integers(%x: tensor<4xi64>) -> tensor<4xi64> {
  %r = fluid.fusion ins(%x : tensor<4xi64>) -> (tensor<4xi64>) {
  ^bb0(%a: tensor<4xi64>):
    // expected-error @+1 {{cannot be part of a fused region}}
    %c = fluid.add %a, %a : tensor<4xi64>, tensor<4xi64> -> tensor<4xi64>
    fluid.yield %c : tensor<4xi64>
  }
  return %r : tensor<4xi64>
}

// -----

func.func @stray_yield(%x: tensor<4xf32>) {
  // expected-error @+1 {{'fluid.yield' op must end a fused region (fluid.fusion or its fluid_rt.launch), not 'func.func'}}
  fluid.yield %x : tensor<4xf32>
}

// -----

func.func @launch_without_region(%x: memref<4xf32>, %y: memref<4xf32>) {
  // expected-error @+1 {{'fluid_rt.launch' op of "fusion" must carry the fused region}}
  fluid_rt.launch "fusion" ins(%x : memref<4xf32>) outs(%y : memref<4xf32>) params {}
  return
}

// -----

func.func @region_on_a_kernel(%x: memref<4xf32>, %y: memref<4xf32>) {
  // expected-error @+1 {{'fluid_rt.launch' op of 'relu' cannot have a region (only "fusion" has one)}}
  fluid_rt.launch "relu" ins(%x : memref<4xf32>) outs(%y : memref<4xf32>) params {} {
  ^bb0(%a: tensor<4xf32>):
    %r = fluid.relu %a : tensor<4xf32>
    fluid.yield %r : tensor<4xf32>
  }
  return
}

// -----

func.func @gpu_kernel_elsewhere(%x: memref<4xf32>, %y: memref<4xf32>) {
  // expected-error @+1 {{'fluid_rt.gpu_kernel' must be a string on a launch of "fusion"}}
  fluid_rt.launch "relu" ins(%x : memref<4xf32>) outs(%y : memref<4xf32>) params {} attributes {fluid_rt.gpu_kernel = "fused_0"}
  return
}

// -----

func.func @sum_splits_elsewhere(%x: memref<4xf32>, %y: memref<4xf32>) {
  // expected-error @+1 {{'fluid_rt.gpu_sum_splits' must be a positive integer on a launch of "fusion"}}
  fluid_rt.launch "relu" ins(%x : memref<4xf32>) outs(%y : memref<4xf32>) params {} attributes {fluid_rt.gpu_sum_splits = 2 : i64}
  return
}

// -----

func.func @sum_splits_zero(%x: memref<4x2xf32>, %y: memref<2xf32>) {
  // expected-error @+1 {{'fluid_rt.gpu_sum_splits' must be a positive integer on a launch of "fusion"}}
  fluid_rt.launch "fusion" ins(%x : memref<4x2xf32>) outs(%y : memref<2xf32>) params {} {
  ^bb0(%a: tensor<4x2xf32>):
    %s = fluid.reduce_sum %a {axes = array<i64: 0>} : tensor<4x2xf32> -> tensor<2xf32>
    fluid.yield %s : tensor<2xf32>
  } attributes {fluid_rt.gpu_sum_splits = 0 : i64}
  return
}

// -----

func.func @view_of_computed(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %r = fluid.fusion ins(%x : tensor<2x3xf32>) -> (tensor<2x3xf32>) {
  ^bb0(%a: tensor<2x3xf32>):
    %n = fluid.neg %a : tensor<2x3xf32>
    // expected-error @+1 {{'fluid.slice' op is a view of a value the fused region computes; a view may only apply to an input (or a view of one)}}
    %s = fluid.slice %n {axis = 0 : i64, offset = 0 : i64} : tensor<2x3xf32> -> tensor<1x3xf32>
    %m = fluid.mul %a, %s : tensor<2x3xf32>, tensor<1x3xf32> -> tensor<2x3xf32>
    fluid.yield %m : tensor<2x3xf32>
  }
  return %r : tensor<2x3xf32>
}

// -----

func.func @view_yielded(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<1x3xf32>) {
  %r:2 = fluid.fusion ins(%x : tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<1x3xf32>) {
  ^bb0(%a: tensor<2x3xf32>):
    // expected-error @+1 {{'fluid.slice' op result is read by 'fluid.yield'; only the region's elementwise ops and sums may read a view}}
    %s = fluid.slice %a {axis = 0 : i64, offset = 0 : i64} : tensor<2x3xf32> -> tensor<1x3xf32>
    %m = fluid.mul %a, %s : tensor<2x3xf32>, tensor<1x3xf32> -> tensor<2x3xf32>
    fluid.yield %m, %s : tensor<2x3xf32>, tensor<1x3xf32>
  }
  return %r#0, %r#1 : tensor<2x3xf32>, tensor<1x3xf32>
}

// -----

func.func @not_a_view(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %r = fluid.fusion ins(%x : tensor<2x3xf32>) -> (tensor<2x3xf32>) {
  ^bb0(%a: tensor<2x3xf32>):
    // expected-error @+1 {{'fluid.slice' op cannot be part of a fused region}}
    %s = fluid.slice %a {axis = 0 : i64, offset = 1 : i64} : tensor<2x3xf32> -> tensor<1x3xf32>
    %m = fluid.mul %a, %s : tensor<2x3xf32>, tensor<1x3xf32> -> tensor<2x3xf32>
    fluid.yield %m : tensor<2x3xf32>
  }
  return %r : tensor<2x3xf32>
}

// -----

// One kernel walks the iteration space one way: its sums keep one axis
// (1, or the last in channels-last programs).
func.func @two_sum_axes(%x: tensor<2x4x4x4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %r:2 = fluid.fusion ins(%x : tensor<2x4x4x4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  ^bb0(%a: tensor<2x4x4x4xf32>):
    %s = fluid.reduce_sum %a {axes = array<i64: 0, 2, 3>} : tensor<2x4x4x4xf32> -> tensor<4xf32>
    // expected-error @+1 {{'fluid.reduce_sum' op sums per channel along axis 3, but the fused region's first sum keeps axis 1; all sums of a region keep one axis}}
    %t = fluid.reduce_sum %a {axes = array<i64: 0, 1, 2>} : tensor<2x4x4x4xf32> -> tensor<4xf32>
    fluid.yield %s, %t : tensor<4xf32>, tensor<4xf32>
  }
  return %r#0, %r#1 : tensor<4xf32>, tensor<4xf32>
}
