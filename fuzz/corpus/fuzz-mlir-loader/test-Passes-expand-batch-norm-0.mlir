// Training batch norm: shifted one-pass sums with each channel's first
// element as the shift, the statistics and PyTorch's running statistics
// per channel, then batch_norm_apply, after every per-channel op.
// EXPAND-LABEL: func.func @forward
// EXPAND-NOT: fluid.batch_norm %
// EXPAND: %[[N:.*]] = fluid.slice %arg0 {axis = 0 : i64, offset = 0 : i64}
// EXPAND: %[[H:.*]] = fluid.slice %[[N]] {axis = 2 : i64, offset = 0 : i64}
// EXPAND: %[[K:.*]] = fluid.slice %[[H]] {axis = 3 : i64, offset = 0 : i64} : tensor<1x8x1x5xf32> -> tensor<1x8x1x1xf32>
// EXPAND: %[[D:.*]] = fluid.sub %arg0, %[[K]]
// EXPAND: fluid.reduce_sum %[[D]] {axes = array<i64: 0, 2, 3>}
// EXPAND: fluid.mul %[[D]], %[[D]]
// EXPAND: fluid.sqrt
// EXPAND: fluid.constant dense<0.10204082>
// EXPAND: fluid.batch_norm_apply
// EXPAND-NOT: fluid.mul
// EXPAND: fluid.relu
// Fused: one region of the sums (the shift a view in it), one of every
// per-channel op (statistics and running statistics, four results), one
// of the normalization and the ReLU; no slice runs outside.
// FUSED-LABEL: func.func @forward
// FUSED-NOT: fluid.slice
// FUSED: %[[S:.*]]:2 = fluid.fusion ins(%arg0 : tensor<2x8x5x5xf32>) -> (tensor<8xf32>, tensor<8xf32>)
// FUSED: fluid.slice
// FUSED: fluid.reduce_sum
// FUSED: fluid.reduce_sum
// FUSED: fluid.yield
// FUSED-NOT: fluid.slice
// FUSED: %[[C:.*]]:4 = fluid.fusion ins(%[[S]]#0, {{.*}}) -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>)
// FUSED: fluid.sqrt
// FUSED: fluid.yield
// FUSED-NOT: fluid.slice
// FUSED: %[[Y:.*]] = fluid.fusion ins(%arg0, %arg1, %arg2, %[[C]]#0, %[[C]]#1
// FUSED-NEXT: ^bb0
// FUSED-NEXT: fluid.batch_norm_apply
// FUSED-NEXT: fluid.relu
// FUSED: return %[[Y]], %[[C]]#2, %[[C]]#3
func.func @forward(%x: tensor<2x8x5x5xf32>, %g: tensor<8xf32>, %b: tensor<8xf32>,
                   %m: tensor<8xf32>, %v: tensor<8xf32>)
    -> (tensor<2x8x5x5xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) {
  %y, %mean, %inv_std, %rm, %rv = fluid.batch_norm %x, %g, %b, %m, %v : tensor<2x8x5x5xf32>, tensor<8xf32>
  %r = fluid.relu %y : tensor<2x8x5x5xf32>
  return %r, %rm, %rv, %mean, %inv_std : tensor<2x8x5x5xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
}

// The gradient: two sums, then dx with the per-channel factors written on
// broadcast values, so that after fusion the sums are one kernel and dx
// another, with no per-channel kernel between them.
// EXPAND-LABEL: func.func @backward
// EXPAND-NOT: fluid.batch_norm_grad
// EXPAND: %[[DB:.*]] = fluid.reduce_sum %arg0 {axes = array<i64: 0, 2, 3>}
// EXPAND: %[[DG:.*]] = fluid.reduce_sum
// EXPAND: fluid.broadcast_to {{.*}} : tensor<1x8x1x1xf32> -> tensor<2x8x5x5xf32>
// FUSED-LABEL: func.func @backward
// FUSED: %[[SUMS:.*]]:2 = fluid.fusion ins(%arg0, %arg1, %arg3, %arg4 : {{.*}}) -> (tensor<8xf32>, tensor<8xf32>)
// FUSED-NOT: fluid.mul {{.*}} : tensor<8xf32>
// FUSED: %[[DX:.*]] = fluid.fusion ins(%[[SUMS]]#0, {{.*}}) -> (tensor<2x8x5x5xf32>)
// FUSED: fluid.broadcast_to
// FUSED: fluid.yield
// FUSED-NEXT: }
// FUSED-NEXT: return %[[DX]], %[[SUMS]]#1, %[[SUMS]]#0
func.func @backward(%dy: tensor<2x8x5x5xf32>, %x: tensor<2x8x5x5xf32>, %g: tensor<8xf32>,
                    %mean: tensor<8xf32>, %inv_std: tensor<8xf32>)
    -> (tensor<2x8x5x5xf32>, tensor<8xf32>, tensor<8xf32>) {
  %dx, %dg, %db = fluid.batch_norm_grad %dy, %x, %g, %mean, %inv_std : tensor<2x8x5x5xf32>, tensor<8xf32>
  return %dx, %dg, %db : tensor<2x8x5x5xf32>, tensor<8xf32>, tensor<8xf32>
}
