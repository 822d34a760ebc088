// --fluid-pool-indices: a fluid.max_pool2d whose gradient is taken saves
// its picks (fluid.max_pool2d_with_indices), and its gradients read them
// (fluid.max_pool2d_grad_indices) instead of the pool's input; pools that
// cannot (a kernel of more than 256 cells, a max_pool2d_grad of the input
// that is not theirs) or need not (no gradient) stay as they are.
// RUN: fluid-opt %s -split-input-file --fluid-pool-indices | FileCheck %s --enable-var-scope

// The pool and both of its gradients (two, to be robust), attributes kept;
// the forward's other uses read the new output.
// CHECK-LABEL: func.func @stem(
// CHECK-SAME: %[[X:[^:]+]]: tensor<2x4x16x16xf32>, %[[DY:[^:]+]]: tensor<2x4x8x8xf32>
// CHECK: %[[Y:[^,]+]], %[[IDX:[^ ]+]] = fluid.max_pool2d_with_indices %[[X]] {kernel_size = array<i64: 3, 3>, padding = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : tensor<2x4x16x16xf32> -> tensor<2x4x8x8xf32>, tensor<2x4x8x8xui8>
// CHECK-NEXT: %[[R:.+]] = fluid.relu %[[Y]]
// CHECK-NEXT: %[[DX:.+]] = fluid.max_pool2d_grad_indices %[[DY]], %[[IDX]] {kernel_size = array<i64: 3, 3>, padding = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : tensor<2x4x8x8xf32>, tensor<2x4x8x8xui8> -> tensor<2x4x16x16xf32>
// CHECK-NEXT: %[[DX2:.+]] = fluid.max_pool2d_grad_indices %[[R]], %[[IDX]] {{.*}} -> tensor<2x4x16x16xf32>
// CHECK-NEXT: %[[SUM:.+]] = fluid.add %[[DX]], %[[DX2]]
// CHECK-NEXT: return %[[R]], %[[SUM]]
// CHECK-NOT: max_pool2d_grad %
func.func @stem(%x: tensor<2x4x16x16xf32>, %dy: tensor<2x4x8x8xf32>) -> (tensor<2x4x8x8xf32>, tensor<2x4x16x16xf32>) {
  %y = fluid.max_pool2d %x {kernel_size = array<i64: 3, 3>, strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>} : tensor<2x4x16x16xf32> -> tensor<2x4x8x8xf32>
  %r = fluid.relu %y : tensor<2x4x8x8xf32>
  %dx = fluid.max_pool2d_grad %dy, %x {kernel_size = array<i64: 3, 3>, strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>} : tensor<2x4x8x8xf32>, tensor<2x4x16x16xf32>
  %dx2 = fluid.max_pool2d_grad %r, %x {kernel_size = array<i64: 3, 3>, strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>} : tensor<2x4x8x8xf32>, tensor<2x4x16x16xf32>
  %sum = fluid.add %dx, %dx2 : tensor<2x4x16x16xf32>, tensor<2x4x16x16xf32> -> tensor<2x4x16x16xf32>
  return %r, %sum : tensor<2x4x8x8xf32>, tensor<2x4x16x16xf32>
}

// -----

// Dilation and ceil_mode carry over; the largest kernel whose picks fit in
// a byte (16x16) is rewritten.
// CHECK-LABEL: func.func @general(
// CHECK: %{{[^,]+}}, %[[IDX:[^ ]+]] = fluid.max_pool2d_with_indices %{{.*}} {ceil_mode, dilation = array<i64: 2, 1>, kernel_size = array<i64: 2, 3>, padding = array<i64: 1, 0, 0, 1>, strides = array<i64: 2, 2>}
// CHECK: fluid.max_pool2d_grad_indices %{{.*}}, %[[IDX]] {ceil_mode, dilation = array<i64: 2, 1>, kernel_size = array<i64: 2, 3>, padding = array<i64: 1, 0, 0, 1>, strides = array<i64: 2, 2>}
// CHECK: %{{[^,]+}}, %[[IDX16:[^ ]+]] = fluid.max_pool2d_with_indices %{{.*}} {kernel_size = array<i64: 16, 16>}
// CHECK: fluid.max_pool2d_grad_indices %{{.*}}, %[[IDX16]]
func.func @general(%x: tensor<1x2x9x10xf32>, %dy: tensor<1x2x5x5xf32>, %w: tensor<1x1x16x16xf32>, %dw: tensor<1x1x1x1xf32>) -> (tensor<1x2x9x10xf32>, tensor<1x1x16x16xf32>) {
  %y = fluid.max_pool2d %x {kernel_size = array<i64: 2, 3>, strides = array<i64: 2, 2>, padding = array<i64: 1, 0, 0, 1>, dilation = array<i64: 2, 1>, ceil_mode} : tensor<1x2x9x10xf32> -> tensor<1x2x5x5xf32>
  %dx = fluid.max_pool2d_grad %dy, %x {kernel_size = array<i64: 2, 3>, strides = array<i64: 2, 2>, padding = array<i64: 1, 0, 0, 1>, dilation = array<i64: 2, 1>, ceil_mode} : tensor<1x2x5x5xf32>, tensor<1x2x9x10xf32>
  %v = fluid.max_pool2d %w {kernel_size = array<i64: 16, 16>} : tensor<1x1x16x16xf32> -> tensor<1x1x1x1xf32>
  %dv = fluid.max_pool2d_grad %dw, %w {kernel_size = array<i64: 16, 16>} : tensor<1x1x1x1xf32>, tensor<1x1x16x16xf32>
  return %dx, %dv : tensor<1x2x9x10xf32>, tensor<1x1x16x16xf32>
}

// -----

// Left alone: a kernel of 17x16 = 272 cells (too many for ui8 picks).
// CHECK-LABEL: func.func @large_kernel(
// CHECK: fluid.max_pool2d %
// CHECK: fluid.max_pool2d_grad %
// CHECK-NOT: indices
func.func @large_kernel(%x: tensor<1x1x17x16xf32>, %dy: tensor<1x1x1x1xf32>) -> (tensor<1x1x1x1xf32>, tensor<1x1x17x16xf32>) {
  %y = fluid.max_pool2d %x {kernel_size = array<i64: 17, 16>} : tensor<1x1x17x16xf32> -> tensor<1x1x1x1xf32>
  %dx = fluid.max_pool2d_grad %dy, %x {kernel_size = array<i64: 17, 16>} : tensor<1x1x1x1xf32>, tensor<1x1x17x16xf32>
  return %y, %dx : tensor<1x1x1x1xf32>, tensor<1x1x17x16xf32>
}

// -----

// Left alone: a pool whose gradient is not taken (inference).
// CHECK-LABEL: func.func @no_gradient(
// CHECK: fluid.max_pool2d %
// CHECK-NOT: indices
func.func @no_gradient(%x: tensor<2x4x16x16xf32>) -> tensor<2x4x8x8xf32> {
  %y = fluid.max_pool2d %x {kernel_size = array<i64: 2, 2>, strides = array<i64: 2, 2>} : tensor<2x4x16x16xf32> -> tensor<2x4x8x8xf32>
  return %y : tensor<2x4x8x8xf32>
}

// -----

// Left alone: a max_pool2d_grad of the pool's input with other attributes
// (3x3 pad 1, not 2x2) is not its gradient; every gradient or none is
// rewritten, so neither pool is (each sees the other's gradient).
// CHECK-LABEL: func.func @other_attributes(
// CHECK: fluid.max_pool2d %{{.*}} {kernel_size = array<i64: 2, 2>
// CHECK: fluid.max_pool2d %{{.*}} {kernel_size = array<i64: 3, 3>
// CHECK: fluid.max_pool2d_grad %{{.*}} {kernel_size = array<i64: 3, 3>
// CHECK: fluid.max_pool2d_grad %{{.*}} {kernel_size = array<i64: 2, 2>
// CHECK-NOT: indices
func.func @other_attributes(%x: tensor<2x4x8x8xf32>, %dy: tensor<2x4x4x4xf32>) -> (tensor<2x4x4x4xf32>, tensor<2x4x4x4xf32>, tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>) {
  %y = fluid.max_pool2d %x {kernel_size = array<i64: 2, 2>, strides = array<i64: 2, 2>} : tensor<2x4x8x8xf32> -> tensor<2x4x4x4xf32>
  %z = fluid.max_pool2d %x {kernel_size = array<i64: 3, 3>, strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>} : tensor<2x4x8x8xf32> -> tensor<2x4x4x4xf32>
  %dz = fluid.max_pool2d_grad %dy, %x {kernel_size = array<i64: 3, 3>, strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>} : tensor<2x4x4x4xf32>, tensor<2x4x8x8xf32>
  %dx = fluid.max_pool2d_grad %dy, %x {kernel_size = array<i64: 2, 2>, strides = array<i64: 2, 2>} : tensor<2x4x4x4xf32>, tensor<2x4x8x8xf32>
  return %y, %z, %dx, %dz : tensor<2x4x4x4xf32>, tensor<2x4x4x4xf32>, tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>
}

// -----

// Left alone: a gradient before the pool (the picks would not exist yet).
// CHECK-LABEL: func.func @gradient_first(
// CHECK: fluid.max_pool2d_grad %
// CHECK: fluid.max_pool2d %
// CHECK-NOT: indices
func.func @gradient_first(%x: tensor<2x4x8x8xf32>, %dy: tensor<2x4x4x4xf32>) -> (tensor<2x4x8x8xf32>, tensor<2x4x4x4xf32>) {
  %dx = fluid.max_pool2d_grad %dy, %x {kernel_size = array<i64: 2, 2>, strides = array<i64: 2, 2>} : tensor<2x4x4x4xf32>, tensor<2x4x8x8xf32>
  %y = fluid.max_pool2d %x {kernel_size = array<i64: 2, 2>, strides = array<i64: 2, 2>} : tensor<2x4x8x8xf32> -> tensor<2x4x4x4xf32>
  return %dx, %y : tensor<2x4x8x8xf32>, tensor<2x4x4x4xf32>
}
