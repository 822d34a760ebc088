// Every verifier and shape-rule message of the dialect, each triggered once.
// Shape rules report the reason, then MLIR adds 'failed to infer returned types'.
// RUN: fluid-opt %s -split-input-file -verify-diagnostics

func.func @f(%x: tensor<4x9x7xf32>, %w: tensor<8x4x3x3xf32>) -> tensor<8x7x5xf32> {
  // expected-error @+2 {{input must have rank 4 (NCHW), got 'tensor<4x9x7xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = fluid.conv2d %x, %w : (tensor<4x9x7xf32>, tensor<8x4x3x3xf32>) -> tensor<8x7x5xf32>
  return %0 : tensor<8x7x5xf32>
}

// -----

func.func @f(%x: tensor<2x4x9x7xf32>, %w: tensor<8x4x3xf32>) -> tensor<2x8x7x5xf32> {
  // expected-error @+2 {{filter must have rank 4 (OIHW)}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = fluid.conv2d %x, %w : (tensor<2x4x9x7xf32>, tensor<8x4x3xf32>) -> tensor<2x8x7x5xf32>
  return %0 : tensor<2x8x7x5xf32>
}

// -----

func.func @f(%x: tensor<2x4x9x7xf32>, %w: tensor<8x4x3x3xf64>) -> tensor<2x8x7x5xf32> {
  // expected-error @+2 {{input and filter must have the same element type, got 'f32' and 'f64'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = fluid.conv2d %x, %w : (tensor<2x4x9x7xf32>, tensor<8x4x3x3xf64>) -> tensor<2x8x7x5xf32>
  return %0 : tensor<2x8x7x5xf32>
}

// -----

func.func @f(%x: tensor<2x4x9x7xf32>, %w: tensor<8x4x3x3xf32>) -> tensor<2x8x7x5xf32> {
  // expected-error @+2 {{'strides' must have 2 values, got 3}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = fluid.conv2d %x, %w {strides = array<i64: 1, 1, 1>} : (tensor<2x4x9x7xf32>, tensor<8x4x3x3xf32>) -> tensor<2x8x7x5xf32>
  return %0 : tensor<2x8x7x5xf32>
}

// -----

func.func @f(%x: tensor<2x4x9x7xf32>, %w: tensor<8x4x3x3xf32>) -> tensor<2x8x7x5xf32> {
  // expected-error @+2 {{'strides' values must be >= 1, got 0}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = fluid.conv2d %x, %w {strides = array<i64: 0, 1>} : (tensor<2x4x9x7xf32>, tensor<8x4x3x3xf32>) -> tensor<2x8x7x5xf32>
  return %0 : tensor<2x8x7x5xf32>
}

// -----

func.func @f(%x: tensor<2x4x9x7xf32>, %w: tensor<8x4x3x3xf32>) -> tensor<2x8x9x7xf32> {
  // expected-error @+2 {{'padding' must have 4 values, got 2}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = fluid.conv2d %x, %w {padding = array<i64: 1, 1>} : (tensor<2x4x9x7xf32>, tensor<8x4x3x3xf32>) -> tensor<2x8x9x7xf32>
  return %0 : tensor<2x8x9x7xf32>
}

// -----

func.func @f(%x: tensor<2x4x9x7xf32>, %w: tensor<8x4x3x3xf32>) -> tensor<2x8x9x7xf32> {
  // expected-error @+2 {{'padding' values must be >= 0, got -1}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = fluid.conv2d %x, %w {padding = array<i64: 1, -1, 1, 1>} : (tensor<2x4x9x7xf32>, tensor<8x4x3x3xf32>) -> tensor<2x8x9x7xf32>
  return %0 : tensor<2x8x9x7xf32>
}

// -----

func.func @f(%x: tensor<2x4x9x7xf32>, %w: tensor<8x4x3x3xf32>) -> tensor<2x8x7x5xf32> {
  // expected-error @+2 {{'dilation' values must be >= 1, got 0}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = fluid.conv2d %x, %w {dilation = array<i64: 0, 0>} : (tensor<2x4x9x7xf32>, tensor<8x4x3x3xf32>) -> tensor<2x8x7x5xf32>
  return %0 : tensor<2x8x7x5xf32>
}

// -----

func.func @f(%x: tensor<2x4x9x7xf32>, %w: tensor<8x4x3x3xf32>) -> tensor<2x8x7x5xf32> {
  // expected-error @+2 {{'groups' must be >= 1, got 0}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = fluid.conv2d %x, %w {groups = 0 : i64} : (tensor<2x4x9x7xf32>, tensor<8x4x3x3xf32>) -> tensor<2x8x7x5xf32>
  return %0 : tensor<2x8x7x5xf32>
}

// -----

func.func @f(%x: tensor<2x64x9x7xf32>, %w: tensor<96x21x3x3xf32>) -> tensor<2x96x7x5xf32> {
  // expected-error @+2 {{groups (3) must divide the input channels (64)}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = fluid.conv2d %x, %w {groups = 3 : i64} : (tensor<2x64x9x7xf32>, tensor<96x21x3x3xf32>) -> tensor<2x96x7x5xf32>
  return %0 : tensor<2x96x7x5xf32>
}

// -----

func.func @f(%x: tensor<2x64x9x7xf32>, %w: tensor<48x2x3x3xf32>) -> tensor<2x48x7x5xf32> {
  // expected-error @+2 {{groups (32) must divide the output channels (48)}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = fluid.conv2d %x, %w {groups = 32 : i64} : (tensor<2x64x9x7xf32>, tensor<48x2x3x3xf32>) -> tensor<2x48x7x5xf32>
  return %0 : tensor<2x48x7x5xf32>
}

// -----

func.func @f(%x: tensor<2x64x9x7xf32>, %w: tensor<64x4x3x3xf32>) -> tensor<2x64x7x5xf32> {
  // expected-error @+2 {{input has 64 channels but the filter expects 4 per group x 32 groups = 128}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = fluid.conv2d %x, %w {groups = 32 : i64} : (tensor<2x64x9x7xf32>, tensor<64x4x3x3xf32>) -> tensor<2x64x7x5xf32>
  return %0 : tensor<2x64x7x5xf32>
}

// -----

func.func @f(%x: tensor<2x4x9x7xf32>, %w: tensor<8x4x3x3xf32>, %b: tensor<4xf32>) -> tensor<2x8x7x5xf32> {
  // expected-error @+2 {{bias must have shape [8] (the output channels), got 'tensor<4xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = fluid.conv2d %x, %w, %b : (tensor<2x4x9x7xf32>, tensor<8x4x3x3xf32>, tensor<4xf32>) -> tensor<2x8x7x5xf32>
  return %0 : tensor<2x8x7x5xf32>
}

// -----

func.func @f(%x: tensor<2x4x9x7xf32>, %w: tensor<8x4x3x3xf32>, %b: tensor<8xf16>) -> tensor<2x8x7x5xf32> {
  // expected-error @+2 {{input and bias must have the same element type}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = fluid.conv2d %x, %w, %b : (tensor<2x4x9x7xf32>, tensor<8x4x3x3xf32>, tensor<8xf16>) -> tensor<2x8x7x5xf32>
  return %0 : tensor<2x8x7x5xf32>
}

// -----

func.func @f(%x: tensor<1x1x4x4xf32>, %w: tensor<1x1x3x3xf32>) -> tensor<1x1x1x2xf32> {
  // expected-error @+2 {{window extent 5 along height exceeds the padded input size 4}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = fluid.conv2d %x, %w {dilation = array<i64: 2, 1>} : (tensor<1x1x4x4xf32>, tensor<1x1x3x3xf32>) -> tensor<1x1x1x2xf32>
  return %0 : tensor<1x1x1x2xf32>
}

// -----

func.func @f(%x: tensor<1x1x4x4xf32>, %w: tensor<1x1x3x3xf32>) -> tensor<1x1x2x2xf32> {
  // expected-error @+2 {{window arithmetic along width overflows 64 bits}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = fluid.conv2d %x, %w {padding = array<i64: 0, 9223372036854775807, 0, 1>} : (tensor<1x1x4x4xf32>, tensor<1x1x3x3xf32>) -> tensor<1x1x2x2xf32>
  return %0 : tensor<1x1x2x2xf32>
}

// -----

func.func @f(%x: tensor<2x4x9x7xf32>, %w: tensor<8x4x3x3xf32>) -> tensor<2x8x9x7xf32> {
  // expected-error @+2 {{inferred type(s) 'tensor<2x8x7x5xf32>' are incompatible with return type(s) of operation 'tensor<2x8x9x7xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = fluid.conv2d %x, %w : (tensor<2x4x9x7xf32>, tensor<8x4x3x3xf32>) -> tensor<2x8x9x7xf32>
  return %0 : tensor<2x8x9x7xf32>
}

// -----

func.func @f(%x: tensor<?x4x9x7xf32>, %w: tensor<8x4x3x3xf32>) -> tensor<2x8x7x5xf32> {
  // expected-error @+1 {{operand #0 must be statically shaped tensor of f16, bf16, f32 or f64, of rank at most 8, whose size fits in 64 bits, but got 'tensor<?x4x9x7xf32>'}}
  %0 = fluid.conv2d %x, %w : (tensor<?x4x9x7xf32>, tensor<8x4x3x3xf32>) -> tensor<2x8x7x5xf32>
  return %0 : tensor<2x8x7x5xf32>
}

// -----

func.func @f(%x: tensor<2x4x9x7xi32>) -> tensor<2x4x9x7xi32> {
  // expected-error @+1 {{operand #0 must be statically shaped tensor of f16, bf16, f32 or f64}}
  %0 = fluid.relu %x : tensor<2x4x9x7xi32>
  return %0 : tensor<2x4x9x7xi32>
}

// -----

func.func @f(%x: tensor<1x1x1x1x1x1x1x1x1xf32>) -> tensor<1x1x1x1x1x1x1x1x1xf32> {
  // expected-error @+1 {{of rank at most 8}}
  %0 = fluid.relu %x : tensor<1x1x1x1x1x1x1x1x1xf32>
  return %0 : tensor<1x1x1x1x1x1x1x1x1xf32>
}

// -----

// Each dimension is valid, but the element count overflows 64 bits.
func.func @f(%x: tensor<4294967296x4294967296xf32>) -> tensor<4294967296x4294967296xf32> {
  // expected-error @+1 {{whose size fits in 64 bits}}
  %0 = fluid.relu %x : tensor<4294967296x4294967296xf32>
  return %0 : tensor<4294967296x4294967296xf32>
}

// -----

// The element count fits, but the size in bytes does not.
func.func @f(%x: tensor<2305843009213693952xf64>) -> tensor<2305843009213693952xf64> {
  // expected-error @+1 {{whose size fits in 64 bits}}
  %0 = fluid.tanh %x : tensor<2305843009213693952xf64>
  return %0 : tensor<2305843009213693952xf64>
}

// -----

func.func @f(%x: tensor<4xf32>) -> tensor<4xf64> {
  // expected-error @+1 {{requires the same type for all operands and results}}
  %0 = "fluid.sigmoid"(%x) : (tensor<4xf32>) -> tensor<4xf64>
  return %0 : tensor<4xf64>
}

// -----

func.func @f(%x: tensor<2x8x5xf32>, %c: tensor<8xf32>) {
  // expected-error @+1 {{'fluid.batch_norm' op input must have rank 2 or 4 (NC or NCHW), got 'tensor<2x8x5xf32>'}}
  %y:5 = fluid.batch_norm %x, %c, %c, %c, %c : tensor<2x8x5xf32>, tensor<8xf32>
  return
}

// -----

func.func @f(%x: tensor<2x8x5x5xf32>, %c: tensor<4xf32>) {
  // expected-error @+1 {{'fluid.batch_norm' op per-channel operands must have shape [8] (the input's channels), got 'tensor<4xf32>'}}
  %y:5 = fluid.batch_norm %x, %c, %c, %c, %c : tensor<2x8x5x5xf32>, tensor<4xf32>
  return
}

// -----

func.func @f(%x: tensor<2x8x5x5xf32>, %c: tensor<8xf64>) {
  // expected-error @+1 {{input and per-channel operands must have the same element type, got 'f32' and 'f64'}}
  %y:5 = fluid.batch_norm %x, %c, %c, %c, %c : tensor<2x8x5x5xf32>, tensor<8xf64>
  return
}

// -----

func.func @f(%x: tensor<2x8x5x5xf32>, %c: tensor<8xf32>) {
  // expected-error @+1 {{'epsilon' must be finite and > 0, got 0}}
  %y:5 = fluid.batch_norm %x, %c, %c, %c, %c {epsilon = 0.0 : f64} : tensor<2x8x5x5xf32>, tensor<8xf32>
  return
}

// -----

func.func @f(%x: tensor<2x8x5x5xf32>, %c: tensor<8xf32>) {
  // expected-error @+1 {{'momentum' must be in [0, 1], got 1.5}}
  %y:5 = fluid.batch_norm %x, %c, %c, %c, %c {momentum = 1.5 : f64} : tensor<2x8x5x5xf32>, tensor<8xf32>
  return
}

// -----

func.func @f(%x: tensor<2x8x5x5xi32>, %c: tensor<8xf32>) {
  // expected-error @+1 {{'fluid.batch_norm' op input must be a statically shaped floating-point tensor whose size fits in 64 bits, got 'tensor<2x8x5x5xi32>'}}
  %y:5 = fluid.batch_norm %x, %c, %c, %c, %c : tensor<2x8x5x5xi32>, tensor<8xf32>
  return
}

// -----

func.func @f(%x: tensor<2x8xf32>, %c: tensor<4xf32>) {
  // expected-error @+1 {{'fluid.batch_norm_inference' op per-channel operands must have shape [8]}}
  %y = fluid.batch_norm_inference %x, %c, %c, %c, %c : tensor<2x8xf32>, tensor<4xf32>
  return
}

// -----

func.func @f(%x: tensor<2x8x5xf32>, %c: tensor<8xf32>) {
  // expected-error @+1 {{'fluid.batch_norm_apply' op input must have rank 2 or 4 (NC or NCHW), got 'tensor<2x8x5xf32>'}}
  %y = fluid.batch_norm_apply %x, %c, %c, %c, %c : tensor<2x8x5xf32>, tensor<8xf32>
  return
}

// -----

func.func @f(%x: tensor<8xf32>, %c: tensor<8xf32>) {
  // expected-error @+1 {{'fluid.batch_norm_apply' op input must have rank 2 or 4 (NC or NCHW), got 'tensor<8xf32>'}}
  %y = fluid.batch_norm_apply %x, %c, %c, %c, %c : tensor<8xf32>, tensor<8xf32>
  return
}

// -----

func.func @f(%x: tensor<2x8x5x5xf32>, %c: tensor<4xf32>) {
  // expected-error @+1 {{'fluid.batch_norm_apply' op per-channel operands must have shape [8] (the input's channels), got 'tensor<4xf32>'}}
  %y = fluid.batch_norm_apply %x, %c, %c, %c, %c : tensor<2x8x5x5xf32>, tensor<4xf32>
  return
}

// -----

func.func @f(%x: tensor<2x8xf32>, %c: tensor<1x8xf32>) {
  // expected-error @+1 {{'fluid.batch_norm_apply' op per-channel operands must have shape [8] (the input's channels), got 'tensor<1x8xf32>'}}
  %y = fluid.batch_norm_apply %x, %c, %c, %c, %c : tensor<2x8xf32>, tensor<1x8xf32>
  return
}

// -----

func.func @f(%x: tensor<2x8x5x5xf32>, %c: tensor<8xf64>) {
  // expected-error @+1 {{'fluid.batch_norm_apply' op input and per-channel operands must have the same element type, got 'f32' and 'f64'}}
  %y = fluid.batch_norm_apply %x, %c, %c, %c, %c : tensor<2x8x5x5xf32>, tensor<8xf64>
  return
}

// -----

func.func @f(%x: tensor<2x8x5x5xi32>, %c: tensor<8xf32>) {
  // expected-error @+1 {{'fluid.batch_norm_apply' op input must be a statically shaped floating-point tensor whose size fits in 64 bits, got 'tensor<2x8x5x5xi32>'}}
  %y = fluid.batch_norm_apply %x, %c, %c, %c, %c : tensor<2x8x5x5xi32>, tensor<8xf32>
  return
}

// -----

// The per-channel operands have one type (only the generic form can say
// otherwise).
func.func @f(%x: tensor<2x8xf32>, %c: tensor<8xf32>, %d: tensor<8xf64>) {
  // expected-error @+1 {{'fluid.batch_norm_apply' op failed to verify that all of {scale, shift, mean, inv_std} have same type}}
  %y = "fluid.batch_norm_apply"(%x, %c, %c, %c, %d) : (tensor<2x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf64>) -> tensor<2x8xf32>
  return
}

// -----

func.func @f(%x: tensor<2x8xf32>, %c: tensor<8xf32>) {
  // expected-error @+2 {{'fluid.batch_norm_apply' op inferred type(s) 'tensor<2x8xf32>' are incompatible with return type(s) of operation 'tensor<2x4xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %y = "fluid.batch_norm_apply"(%x, %c, %c, %c, %c) : (tensor<2x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x4xf32>
  return
}

// -----

func.func @f(%a: tensor<2x3xf32>, %b: tensor<4xf32>) -> tensor<2x3xf32> {
  // expected-error @+2 {{operands are not broadcast-compatible: 'tensor<2x3xf32>' and 'tensor<4xf32>' differ in dimension -1 (3 vs 4)}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = fluid.add %a, %b : tensor<2x3xf32>, tensor<4xf32> -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

func.func @f(%a: tensor<2x3x4xf32>, %b: tensor<5x1x4xf32>) -> tensor<2x3x4xf32> {
  // expected-error @+2 {{operands are not broadcast-compatible: 'tensor<2x3x4xf32>' and 'tensor<5x1x4xf32>' differ in dimension -3 (2 vs 5)}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = fluid.mul %a, %b : tensor<2x3x4xf32>, tensor<5x1x4xf32> -> tensor<2x3x4xf32>
  return %0 : tensor<2x3x4xf32>
}

// -----

func.func @f(%a: tensor<2x3xf32>, %b: tensor<2x3xbf16>) -> tensor<2x3xf32> {
  // expected-error @+2 {{lhs and rhs must have the same element type, got 'f32' and 'bf16'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = fluid.sub %a, %b : tensor<2x3xf32>, tensor<2x3xbf16> -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

func.func @f(%x: tensor<3x10x11xf32>) -> tensor<3x9x10xf32> {
  // expected-error @+2 {{input must have rank 4 (NCHW), got 'tensor<3x10x11xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = fluid.max_pool2d %x {kernel_size = array<i64: 2, 2>} : tensor<3x10x11xf32> -> tensor<3x9x10xf32>
  return %0 : tensor<3x9x10xf32>
}

// -----

func.func @f(%x: tensor<1x3x10x11xf32>) -> tensor<1x3x9x10xf32> {
  // expected-error @+2 {{'kernel_size' must have 2 values, got 1}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = fluid.avg_pool2d %x {kernel_size = array<i64: 2>} : tensor<1x3x10x11xf32> -> tensor<1x3x9x10xf32>
  return %0 : tensor<1x3x9x10xf32>
}

// -----

func.func @f(%x: tensor<1x3x10x11xf32>) -> tensor<1x3x9x10xf32> {
  // expected-error @+2 {{'kernel_size' values must be >= 1, got 0}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = fluid.max_pool2d %x {kernel_size = array<i64: 0, 2>} : tensor<1x3x10x11xf32> -> tensor<1x3x9x10xf32>
  return %0 : tensor<1x3x9x10xf32>
}

// -----

func.func @f(%x: tensor<1x3x10x11xf32>) -> tensor<1x3x9x1xf32> {
  // expected-error @+2 {{window extent 12 along width exceeds the padded input size 11}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = fluid.max_pool2d %x {kernel_size = array<i64: 2, 12>} : tensor<1x3x10x11xf32> -> tensor<1x3x9x1xf32>
  return %0 : tensor<1x3x9x1xf32>
}

// -----

func.func @f(%x: tensor<1x3x10x11xf32>) -> tensor<1x3x9x10xf32> {
  // expected-error @+1 {{requires attribute 'kernel_size'}}
  %0 = fluid.max_pool2d %x : tensor<1x3x10x11xf32> -> tensor<1x3x9x10xf32>
  return %0 : tensor<1x3x9x10xf32>
}

// -----

func.func @f(%x: tensor<3x10xf32>) -> tensor<3x10x1x1xf32> {
  // expected-error @+2 {{input must have rank 4 (NCHW), got 'tensor<3x10xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = fluid.global_avg_pool %x : tensor<3x10xf32> -> tensor<3x10x1x1xf32>
  return %0 : tensor<3x10x1x1xf32>
}

// -----

func.func @f(%x: tensor<1x3x0x4xf32>) -> tensor<1x3x1x1xf32> {
  // expected-error @+2 {{input must have a non-empty image, got 'tensor<1x3x0x4xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = fluid.global_avg_pool %x : tensor<1x3x0x4xf32> -> tensor<1x3x1x1xf32>
  return %0 : tensor<1x3x1x1xf32>
}

// -----

func.func @f(%a: tensor<4xf32>, %b: tensor<4x5xf32>) -> tensor<5xf32> {
  // expected-error @+2 {{lhs must have rank 2 or 3, got 'tensor<4xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = fluid.matmul %a, %b : tensor<4xf32>, tensor<4x5xf32> -> tensor<5xf32>
  return %0 : tensor<5xf32>
}

// -----

func.func @f(%a: tensor<4x8xf32>, %b: tensor<2x8x5xf32>) -> tensor<4x5xf32> {
  // expected-error @+2 {{lhs and rhs must have the same rank, got 'tensor<4x8xf32>' and 'tensor<2x8x5xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = fluid.matmul %a, %b : tensor<4x8xf32>, tensor<2x8x5xf32> -> tensor<4x5xf32>
  return %0 : tensor<4x5xf32>
}

// -----

func.func @f(%a: tensor<4x8xf32>, %b: tensor<8x5xf32>) -> tensor<4x8xf32> {
  // expected-error @+2 {{contraction dimensions differ: lhs has 8, rhs has 5}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = fluid.matmul %a, %b {transpose_rhs} : tensor<4x8xf32>, tensor<8x5xf32> -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @f(%a: tensor<3x4x8xf32>, %b: tensor<2x8x5xf32>) -> tensor<3x4x5xf32> {
  // expected-error @+2 {{batch dimensions differ: 3 vs 2}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = fluid.matmul %a, %b : tensor<3x4x8xf32>, tensor<2x8x5xf32> -> tensor<3x4x5xf32>
  return %0 : tensor<3x4x5xf32>
}

// -----

func.func @f(%x: tensor<4x8xf32>, %w: tensor<5x6xf32>) -> tensor<4x5xf32> {
  // expected-error @+2 {{input has 8 features but the weight expects 6}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = fluid.linear %x, %w : tensor<4x8xf32>, tensor<5x6xf32> -> tensor<4x5xf32>
  return %0 : tensor<4x5xf32>
}

// -----

func.func @f(%x: tensor<4x8xf32>, %w: tensor<8xf32>) -> tensor<4x8xf32> {
  // expected-error @+2 {{weight must have rank 2 ([out, in])}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = fluid.linear %x, %w : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @f(%x: tensor<4x8xf32>, %w: tensor<5x8xf32>, %b: tensor<1x5xf32>) -> tensor<4x5xf32> {
  // expected-error @+2 {{bias must have shape [5] (the output features), got 'tensor<1x5xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = fluid.linear %x, %w, %b : tensor<4x8xf32>, tensor<5x8xf32>, tensor<1x5xf32> -> tensor<4x5xf32>
  return %0 : tensor<4x5xf32>
}

// -----

func.func @f(%x: tensor<2x3xf32>) -> tensor<7xf32> {
  // expected-error @+1 {{cannot reshape 'tensor<2x3xf32>' (6 elements) to 'tensor<7xf32>' (7 elements)}}
  %0 = fluid.reshape %x : tensor<2x3xf32> -> tensor<7xf32>
  return %0 : tensor<7xf32>
}

// -----

func.func @f(%x: tensor<2x3xf32>) -> tensor<6xf64> {
  // expected-error @+1 {{cannot change the element type ('f32' to 'f64')}}
  %0 = fluid.reshape %x : tensor<2x3xf32> -> tensor<6xf64>
  return %0 : tensor<6xf64>
}

// -----

func.func @f(%x: tensor<2x3x4x5xf32>) -> tensor<120x1xf32> {
  // expected-error @+2 {{'axis' 5 is out of range for rank 4 (expected -4 to 4)}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = fluid.flatten %x {axis = 5 : i64} : tensor<2x3x4x5xf32> -> tensor<120x1xf32>
  return %0 : tensor<120x1xf32>
}

// -----

func.func @f() -> tensor<1xf32> {
  // expected-error @+2 {{needs at least one input}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = "fluid.concat"() {axis = 0 : i64} : () -> tensor<1xf32>
  return %0 : tensor<1xf32>
}

// -----

func.func @f(%a: tensor<2x3x4xf32>, %b: tensor<2x3x5xf32>) -> tensor<2x6x4xf32> {
  // expected-error @+2 {{input #1 differs from input #0 in dimension 2 (5 vs 4), which is not the axis}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = fluid.concat %a, %b {axis = 1 : i64} : (tensor<2x3x4xf32>, tensor<2x3x5xf32>) -> tensor<2x6x4xf32>
  return %0 : tensor<2x6x4xf32>
}

// -----

func.func @f(%a: tensor<2x3x4xf32>, %b: tensor<2x3xf32>) -> tensor<2x6x4xf32> {
  // expected-error @+2 {{input #1 has rank 2 but input #0 has rank 3}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = fluid.concat %a, %b {axis = 1 : i64} : (tensor<2x3x4xf32>, tensor<2x3xf32>) -> tensor<2x6x4xf32>
  return %0 : tensor<2x6x4xf32>
}

// -----

func.func @f(%a: tensor<2xf32>, %b: tensor<2xi64>) -> tensor<4xf32> {
  // expected-error @+2 {{input #1 has element type 'i64' but input #0 has 'f32'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = fluid.concat %a, %b {axis = 0 : i64} : (tensor<2xf32>, tensor<2xi64>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @f(%a: tensor<2x3x4xf32>) -> tensor<2x6x4xf32> {
  // expected-error @+2 {{'axis' -4 is out of range for rank 3 (expected -3 to 2)}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = fluid.concat %a, %a {axis = -4 : i64} : (tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> tensor<2x6x4xf32>
  return %0 : tensor<2x6x4xf32>
}

// -----

func.func @f(%x: tensor<f32>, %i: tensor<2xi64>) {
  // expected-error @+2 {{input must have rank >= 1, got 'tensor<f32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = fluid.gather %x, %i {axis = 0 : i64} : (tensor<f32>, tensor<2xi64>) -> tensor<2xf32>
  return
}

// -----

func.func @f(%x: tensor<5x3xf32>, %i: tensor<2x2xi64>) {
  // expected-error @+2 {{indices must be a 1-D tensor of i32 or i64, got 'tensor<2x2xi64>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = fluid.gather %x, %i {axis = 0 : i64} : (tensor<5x3xf32>, tensor<2x2xi64>) -> tensor<4x3xf32>
  return
}

// -----

func.func @f(%x: tensor<5x3xf32>, %i: tensor<2xf32>) {
  // expected-error @+1 {{'fluid.gather' op operand #1 must be statically shaped tensor of i32 or i64}}
  %0 = "fluid.gather"(%x, %i) {axis = 0 : i64} : (tensor<5x3xf32>, tensor<2xf32>) -> tensor<2x3xf32>
  return
}

// -----

func.func @f(%x: tensor<5x3xf32>, %i: tensor<2xi64>) {
  // expected-error @+2 {{'axis' 2 is out of range for rank 2 (expected -2 to 1)}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = fluid.gather %x, %i {axis = 2 : i64} : (tensor<5x3xf32>, tensor<2xi64>) -> tensor<5x2xf32>
  return
}

// -----

func.func @f(%x: tensor<5x3xf32>, %i: tensor<2xi64>) {
  // expected-error @+2 {{'fluid.gather' op inferred type(s) 'tensor<2x3xf32>' are incompatible with return type(s) of operation 'tensor<3x3xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = fluid.gather %x, %i {axis = 0 : i64} : (tensor<5x3xf32>, tensor<2xi64>) -> tensor<3x3xf32>
  return
}

// -----

// Constant indices are checked against the dimension they index.
func.func @f(%x: tensor<5x3xf32>) {
  %i = fluid.constant dense<[0, 3, 4]> : tensor<3xi64>
  // expected-error @+1 {{'fluid.gather' op index 3 (element 1 of the indices) is outside [0, 3), the size of axis 1}}
  %0 = fluid.gather %x, %i {axis = -1 : i64} : (tensor<5x3xf32>, tensor<3xi64>) -> tensor<5x3xf32>
  return
}

// -----

func.func @f(%x: tensor<5x3xf32>) {
  %i = fluid.constant dense<[-1]> : tensor<1xi32>
  // expected-error @+1 {{'fluid.gather' op index -1 (element 0 of the indices) is outside [0, 5), the size of axis 0}}
  %0 = fluid.gather %x, %i {axis = 0 : i64} : (tensor<5x3xf32>, tensor<1xi32>) -> tensor<1x3xf32>
  return
}

// -----

// Every input fits in 64 bits, but their sizes along the axis do not add up.
func.func @f(%a: tensor<2305843009213693951xi32>) -> tensor<2xi32> {
  // expected-error @+2 {{the concatenated dimension overflows 64 bits}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = fluid.concat %a, %a, %a, %a, %a {axis = 0 : i64} : (tensor<2305843009213693951xi32>, tensor<2305843009213693951xi32>, tensor<2305843009213693951xi32>, tensor<2305843009213693951xi32>, tensor<2305843009213693951xi32>) -> tensor<2xi32>
  return %0 : tensor<2xi32>
}

// -----

func.func @f(%a: tensor<1152921504606846976xi32>) -> tensor<2xi32> {
  // expected-error @+2 {{the result 'tensor<2305843009213693952xi32>' is too large}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = fluid.concat %a, %a {axis = 0 : i64} : (tensor<1152921504606846976xi32>, tensor<1152921504606846976xi32>) -> tensor<2xi32>
  return %0 : tensor<2xi32>
}

// -----

func.func @f(%x: tensor<4x10xf32>) -> tensor<4x10xf32> {
  // expected-error @+1 {{'fluid.softmax' op 'axis' 2 is out of range for rank 2 (expected -2 to 1)}}
  %0 = fluid.softmax %x {axis = 2 : i64} : tensor<4x10xf32>
  return %0 : tensor<4x10xf32>
}

// -----

func.func @f(%x: tensor<4x10xf32>) -> tensor<4x10xf32> {
  // expected-error @+1 {{'fluid.log_softmax' op 'axis' -3 is out of range for rank 2}}
  %0 = fluid.log_softmax %x {axis = -3 : i64} : tensor<4x10xf32>
  return %0 : tensor<4x10xf32>
}

// -----

func.func @f(%x: tensor<4x10xf32>, %l: tensor<3xi64>) -> tensor<f32> {
  // expected-error @+2 {{labels have batch size 3 but logits have batch size 4}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = fluid.softmax_cross_entropy %x, %l : tensor<4x10xf32>, tensor<3xi64> -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

func.func @f(%x: tensor<4x10x2xf32>, %l: tensor<4xi64>) -> tensor<f32> {
  // expected-error @+2 {{logits must have rank 2 ([batch, classes])}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = fluid.softmax_cross_entropy %x, %l : tensor<4x10x2xf32>, tensor<4xi64> -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

func.func @f(%x: tensor<4x10xf32>, %l: tensor<4x1xi64>) -> tensor<f32> {
  // expected-error @+2 {{labels must have rank 1 ([batch])}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = fluid.softmax_cross_entropy %x, %l : tensor<4x10xf32>, tensor<4x1xi64> -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

func.func @f(%x: tensor<4x0xf32>, %l: tensor<4xi64>) -> tensor<f32> {
  // expected-error @+2 {{logits must have at least one class}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = fluid.softmax_cross_entropy %x, %l : tensor<4x0xf32>, tensor<4xi64> -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

func.func @f(%x: tensor<4x10xf32>, %l: tensor<4xf32>) -> tensor<f32> {
  // expected-error @+1 {{operand #1 must be statically shaped tensor of i32 or i64}}
  %0 = fluid.softmax_cross_entropy %x, %l : tensor<4x10xf32>, tensor<4xf32> -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

func.func @f(%x: tensor<4x10xf32>, %l: tensor<4xi64>) -> tensor<f32> {
  // expected-error @+2 {{expected ::mlir::fluid::Reduction to be one of: mean, sum, none}}
  // expected-error @+1 {{failed to parse Fluid_ReductionAttr parameter 'value'}}
  %0 = fluid.softmax_cross_entropy %x, %l {reduction = #fluid<reduction max>} : tensor<4x10xf32>, tensor<4xi64> -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

// A sum widens only a 16-bit input, only to f32.
func.func @f(%x: tensor<2x3xbf16>) -> tensor<2xf64> {
  // expected-error @+2 {{inferred type(s) 'tensor<2xbf16>' are incompatible with return type(s) of operation 'tensor<2xf64>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = fluid.mean %x {axes = array<i64: 1>} : tensor<2x3xbf16> -> tensor<2xf64>
  return %0 : tensor<2xf64>
}

// -----

func.func @f(%x: tensor<2x3xf32>) -> tensor<2xf64> {
  // expected-error @+2 {{inferred type(s) 'tensor<2xf32>' are incompatible with return type(s) of operation 'tensor<2xf64>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = fluid.reduce_sum %x {axes = array<i64: 1>} : tensor<2x3xf32> -> tensor<2xf64>
  return %0 : tensor<2xf64>
}

// -----

func.func @f(%x: tensor<2x3xbf16>) -> tensor<3xf32> {
  // expected-error @+2 {{inferred type(s) 'tensor<2xbf16>' are incompatible with return type(s) of operation 'tensor<3xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = fluid.mean %x {axes = array<i64: 1>} : tensor<2x3xbf16> -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

func.func @f(%x: tensor<2x3x4x5xf32>) -> tensor<2x3x4xf32> {
  // expected-error @+2 {{'axes' 4 is out of range for rank 4}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = fluid.mean %x {axes = array<i64: 4>} : tensor<2x3x4x5xf32> -> tensor<2x3x4xf32>
  return %0 : tensor<2x3x4xf32>
}

// -----

func.func @f(%x: tensor<2x3x4x5xf32>) -> tensor<2x3x4xf32> {
  // expected-error @+2 {{'axes' names dimension 3 twice}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = fluid.reduce_sum %x {axes = array<i64: 3, -1>} : tensor<2x3x4x5xf32> -> tensor<2x3x4xf32>
  return %0 : tensor<2x3x4xf32>
}

// -----

func.func @f() -> tensor<2xi8> {
  // expected-error @+1 {{value must be a statically shaped tensor of f16, bf16, f32, f64, i32 or i64 whose size fits in 64 bits, got 'tensor<2xi8>'}}
  %0 = fluid.constant dense<[1, 2]> : tensor<2xi8>
  return %0 : tensor<2xi8>
}

// -----

// expected-error @+1 {{'fluid.param' op kaiming_normal needs a tensor of rank >= 2 to compute its fans, got 'tensor<8xf32>'}}
fluid.param @b : tensor<8xf32> init kaiming_normal(fan_in, gain = 1.0)

// -----

// expected-error @+1 {{integer parameters can only be initialized with zeros, ones or constant, not normal}}
fluid.param @step : tensor<i64> init normal(std = 1.0)

// -----

// expected-error @+1 {{'lr_mult' must be finite and >= 0, got -1}}
fluid.param @w : tensor<4xf32> init zeros {lr_mult = -1.0 : f64}

// -----

// expected-error @+1 {{'decay_mult' must be finite and >= 0}}
fluid.param @w : tensor<4xf32> init zeros {decay_mult = 0x7FF0000000000000 : f64}

// -----

// expected-error @+1 {{normal initializer needs std > 0, got 0}}
fluid.param @w : tensor<4x4xf32> init normal(std = 0.0)

// -----

// expected-error @+1 {{uniform initializer needs low <= high, got (1.000000e+00, -1.000000e+00)}}
fluid.param @w : tensor<4x4xf32> init uniform(1.0, -1.0)

// -----

// expected-error @+1 {{xavier_uniform initializer needs gain > 0, got -2}}
fluid.param @w : tensor<4x4xf32> init xavier_uniform(gain = -2.0)

// -----

// expected-error @+1 {{initializer parameters must be finite}}
fluid.param @w : tensor<4x4xf32> init constant(0x7FF8000000000000)

// -----

// expected-error @+1 {{unknown initializer 'gaussian'; expected zeros, ones, constant, normal, uniform, kaiming_normal, kaiming_uniform or xavier_uniform}}
fluid.param @w : tensor<4x4xf32> init gaussian(std = 1.0)

// -----

// expected-error @+1 {{expected fan_in or fan_out, got 'fan_avg'}}
fluid.param @w : tensor<4x4xf32> init kaiming_uniform(fan_avg, gain = 1.0)

// -----

// expected-error @+1 {{'fluid.param' op attribute 'type' failed to satisfy constraint: type attribute of statically shaped tensor}}
fluid.param @w : tensor<?x4xf32> init zeros

// -----

func.func @f() {
  // expected-error @+1 {{'fluid.param' op expects parent op 'builtin.module'}}
  fluid.param @w : tensor<4xf32> init zeros
  return
}

// -----

// expected-note @+1 {{see existing symbol definition here}}
fluid.param @w : tensor<4xf32> init zeros
// expected-error @+1 {{redefinition of symbol named 'w'}}
fluid.param @w : tensor<4xf32> init ones

// -----

func.func @f() -> tensor<4xf32> {
  // expected-error @+1 {{'fluid.get_param' op refers to unknown parameter @missing}}
  %0 = fluid.get_param @missing : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

fluid.param @w : tensor<4xf32> init zeros
func.func @f() -> tensor<5xf32> {
  // expected-error @+1 {{'fluid.get_param' op type 'tensor<5xf32>' does not match parameter @w of type 'tensor<4xf32>'}}
  %0 = fluid.get_param @w : tensor<5xf32>
  return %0 : tensor<5xf32>
}

// -----

func.func @g() {
  return
}
func.func @f() -> tensor<4xf32> {
  // expected-error @+1 {{'fluid.get_param' op @g is a 'func.func', not a 'fluid.param'}}
  %0 = fluid.get_param @g : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

fluid.param @w : tensor<4xf32> init zeros
func.func @f(%v: tensor<4xf64>) {
  // expected-error @+1 {{'fluid.set_param' op type 'tensor<4xf64>' does not match parameter @w of type 'tensor<4xf32>'}}
  fluid.set_param @w, %v : tensor<4xf64>
  return
}

// -----

func.func @f(%v: tensor<4xf32>) {
  // expected-error @+1 {{'fluid.set_param' op refers to unknown parameter @nothing}}
  fluid.set_param @nothing, %v : tensor<4xf32>
  return
}

// -----

// A step writes each parameter once; other parameters may be written in
// between.
fluid.param @w : tensor<4xf32> init zeros
fluid.param @v : tensor<4xf32> init zeros
func.func @f(%x: tensor<4xf32>) {
  // expected-note @+1 {{first written here}}
  fluid.set_param @w, %x : tensor<4xf32>
  fluid.set_param @v, %x : tensor<4xf32>
  %r = fluid.relu %x : tensor<4xf32>
  // expected-error @+1 {{'fluid.set_param' op writes the parameter @w a second time in one function: a step writes each parameter at most once}}
  fluid.set_param @w, %r : tensor<4xf32>
  return
}

// -----

func.func @f(%x: tensor<1x1x4x4xf32>, %w: tensor<1x1x0x3xf32>) -> tensor<1x1x4x2xf32> {
  // expected-error @+2 {{window height must be >= 1, got 0}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = fluid.conv2d %x, %w : (tensor<1x1x4x4xf32>, tensor<1x1x0x3xf32>) -> tensor<1x1x4x2xf32>
  return %0 : tensor<1x1x4x2xf32>
}

// -----

func.func @f(%x: tensor<1x1x4x0xf32>) -> tensor<1x1x2x1xf32> {
  // expected-error @+2 {{input width must be >= 1, got 0}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = fluid.max_pool2d %x {kernel_size = array<i64: 2, 2>, padding = array<i64: 0, 1, 0, 1>} : tensor<1x1x4x0xf32> -> tensor<1x1x2x1xf32>
  return %0 : tensor<1x1x2x1xf32>
}

// -----

// Attributes an op does not declare are errors, with the nearest name.
func.func @misspelled_attribute(%x: tensor<1x1x4x4xf32>, %w: tensor<1x1x3x3xf32>) -> tensor<1x1x2x2xf32> {
  // expected-error @+1 {{'fluid.conv2d' op has unknown attribute 'dilations'; did you mean 'dilation'?}}
  %y = fluid.conv2d %x, %w {dilations = array<i64: 1, 1>} : (tensor<1x1x4x4xf32>, tensor<1x1x3x3xf32>) -> tensor<1x1x2x2xf32>
  return %y : tensor<1x1x2x2xf32>
}

// -----

func.func @unknown_attribute(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'fluid.relu' op has unknown attribute 'inplace'; it takes none}}
  %y = fluid.relu %x {inplace} : tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// expected-error @+1 {{'fluid.param' op has unknown attribute 'lr_multi'; did you mean 'lr_mult'?}}
fluid.param @w : tensor<4xf32> init zeros {lr_multi = 2.0 : f64}

// -----

// Attributes of the fluid dialect on other ops are checked by the dialect.
// expected-error @+1 {{'func.func' op has unknown attribute 'fluid.entyr'; the fluid dialect's operation attributes are 'fluid.entry' and 'fluid.optimizer_state'}}
func.func @f() attributes {fluid.entyr} {
  return
}

// -----

// expected-error @+1 {{'func.func' op 'fluid.entry' must be a unit attribute, got 1 : i64}}
func.func @f() attributes {fluid.entry = 1} {
  return
}

// -----

// expected-error @+1 {{'func.func' op argument 0: 'fluid.name' must be a string, got 3 : i64}}
func.func @f(%x: tensor<4xf32> {fluid.name = 3}) {
  return
}

// -----

// expected-error @+1 {{'func.func' op argument 0: unknown attribute 'fluid.nam'; the fluid dialect's argument attributes are 'fluid.name' and 'fluid.storage_order'}}
func.func @f(%x: tensor<4xf32> {fluid.nam = "x"}) {
  return
}

// -----

// expected-error @+1 {{'func.func' op argument 0: 'fluid.storage_order' must be an array<i64> permutation of the argument's dimensions, got array<i64: 0, 2, 2, 1>}}
func.func @f(%x: tensor<2x4x4x3xf32> {fluid.storage_order = array<i64: 0, 2, 2, 1>}) {
  return
}

// -----

// expected-error @+1 {{'fluid.param' op 'storage_order' must be a permutation of the 4 dimensions of its type}}
fluid.param @w : tensor<8x3x3x4xf32> init zeros {storage_order = array<i64: 0, 2, 3>}

// -----

// expected-error @+1 {{'func.func' op result 0: unknown attribute 'fluid.los'}}
func.func @f(%x: tensor<f32>) -> (tensor<f32> {fluid.los}) {
  return %x : tensor<f32>
}

// -----

// expected-error @+1 {{'fluid.param' op 'fluid.optimizer_state' must be a unit attribute}}
fluid.param @w : tensor<4xf32> init zeros {fluid.optimizer_state = "yes"}

// -----

func.func @f(%x: tensor<1x1x20x20xf32>) {
  // expected-error @+2 {{the kernel 17x16 has more than 256 cells, too many for ui8 indices}}
  // expected-error @+1 {{failed to infer returned types}}
  %y, %i = fluid.max_pool2d_with_indices %x {kernel_size = array<i64: 17, 16>} : tensor<1x1x20x20xf32> -> tensor<1x1x4x5xf32>, tensor<1x1x4x5xui8>
  return
}

// -----

func.func @f(%x: tensor<1x3x10x11xf32>) {
  // expected-error @+1 {{result #1 must be statically shaped tensor of ui8, of rank at most 8, whose size fits in 64 bits, but got 'tensor<1x3x5x6xi8>'}}
  %y, %i = fluid.max_pool2d_with_indices %x {kernel_size = array<i64: 3, 3>, strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>} : tensor<1x3x10x11xf32> -> tensor<1x3x5x6xf32>, tensor<1x3x5x6xi8>
  return
}

// -----

func.func @f(%x: tensor<1x3x10x11xf32>) {
  // expected-error @+2 {{'fluid.max_pool2d_with_indices' op inferred type(s) 'tensor<1x3x5x6xf32>', 'tensor<1x3x5x6xui8>' are incompatible with return type(s) of operation 'tensor<1x3x5x6xf32>', 'tensor<1x3x6x5xui8>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %y, %i = fluid.max_pool2d_with_indices %x {kernel_size = array<i64: 3, 3>, strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>} : tensor<1x3x10x11xf32> -> tensor<1x3x5x6xf32>, tensor<1x3x6x5xui8>
  return
}

// -----

func.func @f(%x: tensor<10x11x3xf32>) -> tensor<5x6x3xf32> {
  // expected-error @+2 {{input must have rank 4 (NHWC), got 'tensor<10x11x3xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = fluid.max_pool2d %x {channels_last, kernel_size = array<i64: 2, 2>} : tensor<10x11x3xf32> -> tensor<5x6x3xf32>
  return %0 : tensor<5x6x3xf32>
}

// -----

// A channels-last pool pools H and W of [N, H, W, C], not the last two
// dimensions.
func.func @f(%x: tensor<1x10x11x3xf32>) -> tensor<1x10x5x1xf32> {
  // expected-error @+2 {{'fluid.max_pool2d' op inferred type(s) 'tensor<1x5x5x3xf32>' are incompatible with return type(s) of operation 'tensor<1x10x5x1xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = fluid.max_pool2d %x {channels_last, kernel_size = array<i64: 2, 2>, strides = array<i64: 2, 2>} : tensor<1x10x11x3xf32> -> tensor<1x10x5x1xf32>
  return %0 : tensor<1x10x5x1xf32>
}

// -----

func.func @f(%x: tensor<1x10x11x3xf32>) {
  // expected-error @+2 {{'fluid.max_pool2d_with_indices' op inferred type(s) 'tensor<1x5x6x3xf32>', 'tensor<1x5x6x3xui8>' are incompatible with return type(s) of operation 'tensor<1x5x6x3xf32>', 'tensor<1x3x5x6xui8>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %y, %i = fluid.max_pool2d_with_indices %x {channels_last, kernel_size = array<i64: 3, 3>, strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>} : tensor<1x10x11x3xf32> -> tensor<1x5x6x3xf32>, tensor<1x3x5x6xui8>
  return
}
