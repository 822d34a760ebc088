// RUN: fluid-opt %s --fluid-fuse-elementwise --split-input-file | FileCheck %s

// A chain of elementwise ops with a broadcast per-channel operand is one
// region; the intermediate values stay inside it.
// CHECK-LABEL: func.func @chain
// CHECK: %[[R:.*]] = fluid.fusion ins(%arg0, %arg1 : tensor<2x3x4x4xf32>, tensor<1x3x1x1xf32>) -> (tensor<2x3x4x4xf32>) {
// CHECK-NEXT: ^bb0(%[[X:.*]]: tensor<2x3x4x4xf32>, %[[S:.*]]: tensor<1x3x1x1xf32>):
// CHECK-NEXT: %[[M:.*]] = fluid.mul %[[X]], %[[S]]
// CHECK-NEXT: %[[A:.*]] = fluid.add %[[M]], %[[X]]
// CHECK-NEXT: %[[Y:.*]] = fluid.relu %[[A]]
// CHECK-NEXT: fluid.yield %[[Y]] : tensor<2x3x4x4xf32>
// CHECK: return %[[R]]
func.func @chain(%x: tensor<2x3x4x4xf32>, %s: tensor<1x3x1x1xf32>) -> tensor<2x3x4x4xf32> {
  %m = fluid.mul %x, %s : tensor<2x3x4x4xf32>, tensor<1x3x1x1xf32> -> tensor<2x3x4x4xf32>
  %a = fluid.add %m, %x : tensor<2x3x4x4xf32>, tensor<2x3x4x4xf32> -> tensor<2x3x4x4xf32>
  %y = fluid.relu %a : tensor<2x3x4x4xf32>
  return %y : tensor<2x3x4x4xf32>
}

// -----

// No fusion across a library call: the convolution splits the ops into two
// regions; and a value read after the region (by the convolution, and
// returned) is one more result of it.
// CHECK-LABEL: func.func @library_call
// CHECK: %[[R1:.*]]:2 = fluid.fusion ins(%arg0
// CHECK: fluid.relu
// CHECK: fluid.neg
// CHECK: fluid.yield
// CHECK: %[[C:.*]] = fluid.conv2d %[[R1]]#0
// CHECK: fluid.fusion ins(%[[C]], %[[R1]]#1
// CHECK: fluid.sigmoid
// CHECK: fluid.add
// CHECK: return
func.func @library_call(%x: tensor<1x2x4x4xf32>, %w: tensor<2x2x1x1xf32>) -> (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) {
  %r = fluid.relu %x : tensor<1x2x4x4xf32>
  %n = fluid.neg %r : tensor<1x2x4x4xf32>
  %c = fluid.conv2d %r, %w : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %s = fluid.sigmoid %c : tensor<1x2x4x4xf32>
  %a = fluid.add %s, %n : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32> -> tensor<1x2x4x4xf32>
  return %a, %r : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>
}

// -----

// A value of another shape is not computed inside a region (it would be
// recomputed per element of the larger one): the per-channel sigmoid stays
// out, and a region of one op is left as it is.
// CHECK-LABEL: func.func @no_recompute
// CHECK: %[[G:.*]] = fluid.sigmoid %arg1 : tensor<1x3x1x1xf32>
// CHECK-NOT: fluid.fusion
// CHECK: fluid.mul %arg0, %[[G]]
// CHECK-NOT: fluid.fusion
func.func @no_recompute(%x: tensor<2x3x4x4xf32>, %s: tensor<1x3x1x1xf32>) -> tensor<2x3x4x4xf32> {
  %g = fluid.sigmoid %s : tensor<1x3x1x1xf32>
  %m = fluid.mul %x, %g : tensor<2x3x4x4xf32>, tensor<1x3x1x1xf32> -> tensor<2x3x4x4xf32>
  return %m : tensor<2x3x4x4xf32>
}

// -----

// A value used before the region's last op by an op outside it cannot be
// fused with that later op (the region would run after its use): the
// relu's group stops there.
// CHECK-LABEL: func.func @use_in_between
// CHECK: %[[T:[0-9]+]]:2 = fluid.fusion ins(%arg0
// CHECK: fluid.relu
// CHECK: fluid.tanh
// CHECK: fluid.yield
// CHECK: %[[P:.*]] = fluid.global_avg_pool %[[T]]#0
// CHECK: fluid.neg %[[T]]#1
func.func @use_in_between(%x: tensor<1x2x4x4xf32>) -> (tensor<1x2x1x1xf32>, tensor<1x2x4x4xf32>) {
  %r = fluid.relu %x : tensor<1x2x4x4xf32>
  %t = fluid.tanh %r : tensor<1x2x4x4xf32>
  %p = fluid.global_avg_pool %r : tensor<1x2x4x4xf32> -> tensor<1x2x1x1xf32>
  %n = fluid.neg %t : tensor<1x2x4x4xf32>
  return %p, %n : tensor<1x2x1x1xf32>, tensor<1x2x4x4xf32>
}

// -----

// Per-channel sums join their producers and siblings (relu_grad and the
// two sums of batch norm's gradient read dy once); a sum is only yielded,
// and the op that reads it is outside the region.
// CHECK-LABEL: func.func @sums
// CHECK: %[[R:.*]]:3 = fluid.fusion ins(%arg0, %arg1, %arg2
// CHECK: %[[D:.*]] = fluid.relu_grad
// CHECK: %[[S1:.*]] = fluid.reduce_sum %[[D]] {axes = array<i64: 0, 2, 3>}
// CHECK: %[[P:.*]] = fluid.mul %[[D]], %{{.*}}
// CHECK: %[[S2:.*]] = fluid.reduce_sum %[[P]]
// CHECK: fluid.yield %[[D]], %[[S1]], %[[S2]]
// CHECK: fluid.mul %[[R]]#1, %[[R]]#2 : tensor<3xf32>
func.func @sums(%g: tensor<2x3x4x4xf32>, %y: tensor<2x3x4x4xf32>, %xhat: tensor<2x3x4x4xf32>) -> (tensor<2x3x4x4xf32>, tensor<3xf32>) {
  %d = fluid.relu_grad %g, %y : tensor<2x3x4x4xf32>
  %s1 = fluid.reduce_sum %d {axes = array<i64: 0, 2, 3>} : tensor<2x3x4x4xf32> -> tensor<3xf32>
  %p = fluid.mul %d, %xhat : tensor<2x3x4x4xf32>, tensor<2x3x4x4xf32> -> tensor<2x3x4x4xf32>
  %s2 = fluid.reduce_sum %p {axes = array<i64: 0, 2, 3>} : tensor<2x3x4x4xf32> -> tensor<3xf32>
  %q = fluid.mul %s1, %s2 : tensor<3xf32>, tensor<3xf32> -> tensor<3xf32>
  return %d, %q : tensor<2x3x4x4xf32>, tensor<3xf32>
}

// -----

// A reduction that is not per channel is a library call; integer step
// arithmetic is not fused either.
// CHECK-LABEL: func.func @not_fusible
// CHECK-NOT: fluid.fusion
func.func @not_fusible(%x: tensor<2x3xf32>, %i: tensor<i64>) -> (tensor<2xf32>, tensor<i64>) {
  %r = fluid.relu %x : tensor<2x3xf32>
  %s = fluid.reduce_sum %r {axes = array<i64: 1>} : tensor<2x3xf32> -> tensor<2xf32>
  %a = fluid.add %i, %i : tensor<i64>, tensor<i64> -> tensor<i64>
  %b = fluid.mul %a, %i : tensor<i64>, tensor<i64> -> tensor<i64>
  return %s, %b : tensor<2xf32>, tensor<i64>
}

// -----

// Ops nothing reads are left alone: a region needs a result.
// CHECK-LABEL: func.func @dead
// CHECK-NOT: fluid.fusion
// CHECK: fluid.exp
// CHECK: fluid.neg
func.func @dead(%x: tensor<4xf32>) {
  %e = fluid.exp %x : tensor<4xf32>
  %n = fluid.neg %e : tensor<4xf32>
  return
}

// -----

// Views of an input join the region instead of running as copies: batch
// norm's shift x[0, c, 0, 0] (three slices at offset 0) read by the
// statistics' sub, and by a per-channel region through a reshape of unit
// dimensions. Each region applies the views to its own argument; the
// copies outside are gone, but for the slice at offset 1 (not a view) and
// the one the convolution reads as well.
// CHECK-LABEL: func.func @views
// CHECK-NOT: fluid.slice
// CHECK: %[[OFF:.*]] = fluid.slice %arg0 {axis = 0 : i64, offset = 1 : i64}
// CHECK-NOT: fluid.slice
// CHECK: %[[SUMS:.*]] = fluid.fusion ins(%arg0, %[[OFF]] : tensor<2x3x4x4xf32>, tensor<1x3x4x4xf32>) -> (tensor<3xf32>) {
// CHECK-NEXT: ^bb0(%[[X:.*]]: tensor<2x3x4x4xf32>, %{{.*}}: tensor<1x3x4x4xf32>):
// CHECK-NEXT: %[[N:.*]] = fluid.slice %[[X]] {axis = 0 : i64, offset = 0 : i64} : tensor<2x3x4x4xf32> -> tensor<1x3x4x4xf32>
// CHECK-NEXT: %[[H:.*]] = fluid.slice %[[N]] {axis = 2 : i64, offset = 0 : i64} : tensor<1x3x4x4xf32> -> tensor<1x3x1x4xf32>
// CHECK-NEXT: %[[K:.*]] = fluid.slice %[[H]] {axis = 3 : i64, offset = 0 : i64} : tensor<1x3x1x4xf32> -> tensor<1x3x1x1xf32>
// CHECK-NEXT: fluid.sub %[[X]], %[[K]]
// CHECK: fluid.fusion ins(%[[SUMS]], %arg0 : tensor<3xf32>, tensor<2x3x4x4xf32>) -> (tensor<3xf32>) {
// CHECK: fluid.slice
// CHECK: fluid.slice
// CHECK: %[[K2:.*]] = fluid.slice
// CHECK-NEXT: %[[V:.*]] = fluid.reshape %[[K2]] : tensor<1x3x1x1xf32> -> tensor<3xf32>
// CHECK: fluid.add %[[V]]
// CHECK: %[[KEPT:.*]] = fluid.slice %arg0 {axis = 1 : i64, offset = 0 : i64} : tensor<2x3x4x4xf32> -> tensor<2x1x4x4xf32>
// CHECK: fluid.conv2d %[[KEPT]]
// CHECK: fluid.fusion ins(%arg0
// CHECK: fluid.slice
// CHECK: return
func.func @views(%x: tensor<2x3x4x4xf32>, %w: tensor<1x1x1x1xf32>) -> (tensor<3xf32>, tensor<2x1x4x4xf32>, tensor<2x3x4x4xf32>) {
  %n = fluid.slice %x {axis = 0 : i64, offset = 0 : i64} : tensor<2x3x4x4xf32> -> tensor<1x3x4x4xf32>
  %h = fluid.slice %n {axis = 2 : i64, offset = 0 : i64} : tensor<1x3x4x4xf32> -> tensor<1x3x1x4xf32>
  %k = fluid.slice %h {axis = 3 : i64, offset = 0 : i64} : tensor<1x3x1x4xf32> -> tensor<1x3x1x1xf32>
  %off = fluid.slice %x {axis = 0 : i64, offset = 1 : i64} : tensor<2x3x4x4xf32> -> tensor<1x3x4x4xf32>
  %d = fluid.sub %x, %k : tensor<2x3x4x4xf32>, tensor<1x3x1x1xf32> -> tensor<2x3x4x4xf32>
  %e = fluid.add %d, %off : tensor<2x3x4x4xf32>, tensor<1x3x4x4xf32> -> tensor<2x3x4x4xf32>
  %s = fluid.reduce_sum %e {axes = array<i64: 0, 2, 3>} : tensor<2x3x4x4xf32> -> tensor<3xf32>
  %v = fluid.reshape %k : tensor<1x3x1x1xf32> -> tensor<3xf32>
  %m = fluid.mul %s, %s : tensor<3xf32>, tensor<3xf32> -> tensor<3xf32>
  %a = fluid.add %v, %m : tensor<3xf32>, tensor<3xf32> -> tensor<3xf32>
  %c = fluid.slice %x {axis = 1 : i64, offset = 0 : i64} : tensor<2x3x4x4xf32> -> tensor<2x1x4x4xf32>
  %y = fluid.conv2d %c, %w : (tensor<2x1x4x4xf32>, tensor<1x1x1x1xf32>) -> tensor<2x1x4x4xf32>
  %q = fluid.mul %x, %c : tensor<2x3x4x4xf32>, tensor<2x1x4x4xf32> -> tensor<2x3x4x4xf32>
  %r = fluid.relu %q : tensor<2x3x4x4xf32>
  return %a, %y, %r : tensor<3xf32>, tensor<2x1x4x4xf32>, tensor<2x3x4x4xf32>
}

// RUN: not fluid-opt %s --fluid-fuse-elementwise=max-buffers=1 -split-input-file -o /dev/null 2>&1 | FileCheck %s --check-prefix=BAD
// BAD: error: --fluid-fuse-elementwise: max-buffers must be at least 2, got 1

// -----

// Mixed precision: a widening cast of a 16-bit value (a convolution's
// output) is a view, so both regions that read the wide value read the
// bf16 one and widen it themselves (no f32 copy is ever written); the cast
// back to bf16 (the next convolution's input) is the producer region's
// last op, which rounds once.
// CHECK-LABEL: func.func @widening_cast
// CHECK-NOT: fluid.cast {{.*}}bf16> -> tensor<2x4x3x3xf32>
// CHECK: %[[SUMS:.+]] = fluid.fusion ins(%arg0 : tensor<2x4x3x3xbf16>) -> (tensor<4xf32>)
// CHECK: fluid.cast %{{.+}} : tensor<2x4x3x3xbf16> -> tensor<2x4x3x3xf32>
// CHECK: fluid.reduce_sum
// CHECK: %[[OUT:.+]] = fluid.fusion ins(%arg0, %[[SUMS]] : tensor<2x4x3x3xbf16>, tensor<4xf32>) -> (tensor<2x4x3x3xbf16>)
// CHECK: fluid.cast %{{.+}} : tensor<2x4x3x3xbf16> -> tensor<2x4x3x3xf32>
// CHECK: fluid.relu
// CHECK: fluid.cast %{{.+}} : tensor<2x4x3x3xf32> -> tensor<2x4x3x3xbf16>
// CHECK: return %[[OUT]]
func.func @widening_cast(%y: tensor<2x4x3x3xbf16>) -> tensor<2x4x3x3xbf16> {
  %x = fluid.cast %y : tensor<2x4x3x3xbf16> -> tensor<2x4x3x3xf32>
  %m = fluid.mul %x, %x : tensor<2x4x3x3xf32>, tensor<2x4x3x3xf32> -> tensor<2x4x3x3xf32>
  %s = fluid.reduce_sum %m {axes = array<i64: 0, 2, 3>} : tensor<2x4x3x3xf32> -> tensor<4xf32>
  %r = fluid.reshape %s : tensor<4xf32> -> tensor<1x4x1x1xf32>
  %a = fluid.sub %x, %r : tensor<2x4x3x3xf32>, tensor<1x4x1x1xf32> -> tensor<2x4x3x3xf32>
  %z = fluid.relu %a : tensor<2x4x3x3xf32>
  %b = fluid.cast %z : tensor<2x4x3x3xf32> -> tensor<2x4x3x3xbf16>
  return %b : tensor<2x4x3x3xbf16>
}

// -----

// One op that reads 16-bit values through widening casts (the f32 sum of
// two bf16 gradients) is a region of its own: it reads the bf16 buffers,
// and no f32 copy is written. Without such a view it stays an op.
// CHECK-LABEL: func.func @one_op_widening
// CHECK: %[[SUM:.+]] = fluid.fusion ins(%arg0, %arg1 : tensor<2x4x3x3xbf16>, tensor<2x4x3x3xbf16>) -> (tensor<2x4x3x3xf32>)
// CHECK: fluid.cast %{{.+}} : tensor<2x4x3x3xbf16> -> tensor<2x4x3x3xf32>
// CHECK: fluid.cast %{{.+}} : tensor<2x4x3x3xbf16> -> tensor<2x4x3x3xf32>
// CHECK: fluid.add
// CHECK: fluid.yield
// CHECK-NOT: fluid.fusion
// CHECK: %[[PLAIN:.+]] = fluid.add %arg2, %arg2 : tensor<2x4x3x3xf32>
// CHECK: return %[[SUM]], %[[PLAIN]]
func.func @one_op_widening(%a: tensor<2x4x3x3xbf16>, %b: tensor<2x4x3x3xbf16>, %c: tensor<2x4x3x3xf32>) -> (tensor<2x4x3x3xf32>, tensor<2x4x3x3xf32>) {
  %x = fluid.cast %a : tensor<2x4x3x3xbf16> -> tensor<2x4x3x3xf32>
  %y = fluid.cast %b : tensor<2x4x3x3xbf16> -> tensor<2x4x3x3xf32>
  %s = fluid.add %x, %y : tensor<2x4x3x3xf32>, tensor<2x4x3x3xf32> -> tensor<2x4x3x3xf32>
  %p = fluid.add %c, %c : tensor<2x4x3x3xf32>, tensor<2x4x3x3xf32> -> tensor<2x4x3x3xf32>
  return %s, %p : tensor<2x4x3x3xf32>, tensor<2x4x3x3xf32>
}

// -----

// Channels-last sums (over every axis but the last) fuse like per-channel
// ones, with their producers; a sum that keeps another axis stays out of
// their region (one kernel walks the space one way) and reads the product
// the region yields.
// CHECK-LABEL: func.func @sum_axes
// CHECK: %[[R:.*]]:4 = fluid.fusion
// CHECK: fluid.exp
// CHECK: fluid.reduce_sum %{{.*}} {axes = array<i64: 0, 1, 2>}
// CHECK: fluid.mul
// CHECK: fluid.reduce_sum %{{.*}} {axes = array<i64: 0, 1, 2>}
// CHECK-NOT: fluid.reduce_sum
// CHECK: fluid.yield
// CHECK: %[[U:.*]] = fluid.reduce_sum %[[R]]#2 {axes = array<i64: 0, 2, 3>}
// CHECK: return %[[R]]#0, %[[R]]#1, %[[R]]#3, %[[U]]
func.func @sum_axes(%x: tensor<2x4x4x4xf32>) -> (tensor<2x4x4x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %e = fluid.exp %x : tensor<2x4x4x4xf32>
  %s = fluid.reduce_sum %e {axes = array<i64: 0, 1, 2>} : tensor<2x4x4x4xf32> -> tensor<4xf32>
  %m = fluid.mul %e, %x : tensor<2x4x4x4xf32>, tensor<2x4x4x4xf32> -> tensor<2x4x4x4xf32>
  %t = fluid.reduce_sum %m {axes = array<i64: 0, 1, 2>} : tensor<2x4x4x4xf32> -> tensor<4xf32>
  %u = fluid.reduce_sum %m {axes = array<i64: 0, 2, 3>} : tensor<2x4x4x4xf32> -> tensor<4xf32>
  return %e, %s, %t, %u : tensor<2x4x4x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// A 16-bit batch norm's backward: relu_grad of two bf16 values (read
// through widening casts) feeds the sums' region and, after them, the dx
// region. Recomputing it there reads 2 + 2 bytes per element, storing its
// f32 result and reading it back 4 + 4: the dx region gets a copy and the
// sums' region yields no full-size f32 value.
// CHECK-LABEL: func.func @recompute_widening
// CHECK: %[[S:.*]] = fluid.fusion ins(%arg0, %arg1 : tensor<2x4x4x8xbf16>, tensor<2x4x4x8xbf16>) -> (tensor<8xf32>)
// CHECK: fluid.relu_grad
// CHECK: fluid.reduce_sum
// CHECK: %[[D:.*]] = fluid.fusion ins(%arg0, %arg1, %[[S]] : tensor<2x4x4x8xbf16>, tensor<2x4x4x8xbf16>, tensor<8xf32>) -> (tensor<2x4x4x8xf32>)
// CHECK: fluid.relu_grad
// CHECK: fluid.sub
// CHECK: return %[[S]], %[[D]]
func.func @recompute_widening(%dy: tensor<2x4x4x8xbf16>, %x: tensor<2x4x4x8xbf16>) -> (tensor<8xf32>, tensor<2x4x4x8xf32>) {
  %a = fluid.cast %dy : tensor<2x4x4x8xbf16> -> tensor<2x4x4x8xf32>
  %b = fluid.cast %x : tensor<2x4x4x8xbf16> -> tensor<2x4x4x8xf32>
  %g = fluid.relu_grad %a, %b : tensor<2x4x4x8xf32>
  %s = fluid.reduce_sum %g {axes = array<i64: 0, 1, 2>} : tensor<2x4x4x8xf32> -> tensor<8xf32>
  %r = fluid.reshape %s : tensor<8xf32> -> tensor<1x1x1x8xf32>
  %d = fluid.sub %g, %r : tensor<2x4x4x8xf32>, tensor<1x1x1x8xf32> -> tensor<2x4x4x8xf32>
  return %s, %d : tensor<8xf32>, tensor<2x4x4x8xf32>
}

// -----

// In f32 recomputing reads as much as storing costs: the value is stored,
// the second region (one op) stays that op.
// CHECK-LABEL: func.func @no_recompute_f32
// CHECK: %[[R:.*]]:2 = fluid.fusion
// CHECK: fluid.yield %{{.*}}, %{{.*}} : tensor<2x4x4x8xf32>, tensor<8xf32>
// CHECK: fluid.sub %[[R]]#0
func.func @no_recompute_f32(%a: tensor<2x4x4x8xf32>, %b: tensor<2x4x4x8xf32>) -> (tensor<8xf32>, tensor<2x4x4x8xf32>) {
  %g = fluid.relu_grad %a, %b : tensor<2x4x4x8xf32>
  %s = fluid.reduce_sum %g {axes = array<i64: 0, 1, 2>} : tensor<2x4x4x8xf32> -> tensor<8xf32>
  %r = fluid.reshape %s : tensor<8xf32> -> tensor<1x1x1x8xf32>
  %d = fluid.sub %g, %r : tensor<2x4x4x8xf32>, tensor<1x1x1x8xf32> -> tensor<2x4x4x8xf32>
  return %s, %d : tensor<8xf32>, tensor<2x4x4x8xf32>
}

// -----

// A library call between the two regions: a copy would keep the 16-bit
// inputs alive across it; the value is stored instead.
// CHECK-LABEL: func.func @no_recompute_far
// CHECK: %[[R:.*]]:2 = fluid.fusion
// CHECK: fluid.yield %{{.*}}, %{{.*}} : tensor<2x4x4x8xf32>, tensor<8xf32>
// CHECK: fluid.conv2d
// CHECK: fluid.sub %[[R]]#0
func.func @no_recompute_far(%dy: tensor<2x4x4x8xbf16>, %x: tensor<2x4x4x8xbf16>, %w: tensor<8x3x3x8xf32>) -> (tensor<8xf32>, tensor<2x4x4x8xf32>, tensor<2x4x4x8xf32>) {
  %a = fluid.cast %dy : tensor<2x4x4x8xbf16> -> tensor<2x4x4x8xf32>
  %b = fluid.cast %x : tensor<2x4x4x8xbf16> -> tensor<2x4x4x8xf32>
  %g = fluid.relu_grad %a, %b : tensor<2x4x4x8xf32>
  %s = fluid.reduce_sum %g {axes = array<i64: 0, 1, 2>} : tensor<2x4x4x8xf32> -> tensor<8xf32>
  %c = fluid.conv2d %b, %w {channels_last, padding = array<i64: 1, 1, 1, 1>} : (tensor<2x4x4x8xf32>, tensor<8x3x3x8xf32>) -> tensor<2x4x4x8xf32>
  %r = fluid.reshape %s : tensor<8xf32> -> tensor<1x1x1x8xf32>
  %d = fluid.sub %g, %r : tensor<2x4x4x8xf32>, tensor<1x1x1x8xf32> -> tensor<2x4x4x8xf32>
  return %s, %d, %c : tensor<8xf32>, tensor<2x4x4x8xf32>, tensor<2x4x4x8xf32>
}

// -----

// A batch norm's backward sums where the 16-bit activation is recomputed
// (--fluid-recompute-elementwise): relu_grad reads the bf16 value widened
// again, and joins the group that rounds it (looking through the widening
// cast); the region widens its own copy. The bf16 value is a result (a
// library call reads it after the region), and the cast stays, after the
// region, for the reader outside (%late).
// CHECK-LABEL: func.func @widen_computed
// CHECK: %[[R:.+]]:3 = fluid.fusion ins(%arg0, %arg1 : tensor<2x3x3x4xf32>, tensor<2x3x3x4xf32>) -> (tensor<2x3x3x4xbf16>, tensor<2x3x3x4xf32>, tensor<4xf32>)
// CHECK: %[[N:.+]] = fluid.cast %{{.+}} : tensor<2x3x3x4xf32> -> tensor<2x3x3x4xbf16>
// CHECK-NEXT: %[[W:.+]] = fluid.cast %[[N]] : tensor<2x3x3x4xbf16> -> tensor<2x3x3x4xf32>
// CHECK-NEXT: %[[G:.+]] = fluid.relu_grad %{{.+}}, %[[W]]
// CHECK-NEXT: %[[S:.+]] = fluid.reduce_sum %[[G]]
// CHECK-NEXT: fluid.yield %[[N]], %[[G]], %[[S]]
// CHECK-NEXT: }
// CHECK-NEXT: %[[LATE:.+]] = fluid.cast %[[R]]#0 : tensor<2x3x3x4xbf16> -> tensor<2x3x3x4xf32>
// CHECK-NEXT: fluid.conv2d_grad_filter %arg2, %[[R]]#0
// CHECK-NEXT: fluid.softmax %[[LATE]]
func.func @widen_computed(%x: tensor<2x3x3x4xf32>, %dy: tensor<2x3x3x4xf32>, %dyn: tensor<2x3x3x4xbf16>) -> (tensor<4xf32>, tensor<2x3x3x4xf32>, tensor<4x1x1x4xbf16>, tensor<2x3x3x4xf32>) {
  %r = fluid.relu %x : tensor<2x3x3x4xf32>
  %n = fluid.cast %r : tensor<2x3x3x4xf32> -> tensor<2x3x3x4xbf16>
  %wide = fluid.cast %n : tensor<2x3x3x4xbf16> -> tensor<2x3x3x4xf32>
  %g = fluid.relu_grad %dy, %wide : tensor<2x3x3x4xf32>
  %s = fluid.reduce_sum %g {axes = array<i64: 0, 1, 2>} : tensor<2x3x3x4xf32> -> tensor<4xf32>
  %dw = fluid.conv2d_grad_filter %dyn, %n {channels_last} : (tensor<2x3x3x4xbf16>, tensor<2x3x3x4xbf16>) -> tensor<4x1x1x4xbf16>
  %late = fluid.softmax %wide {axis = 3 : i64} : tensor<2x3x3x4xf32>
  return %s, %g, %dw, %late : tensor<4xf32>, tensor<2x3x3x4xf32>, tensor<4x1x1x4xbf16>, tensor<2x3x3x4xf32>
}
