// --fluid-recompute-elementwise: the backward pass's uses of
// relu(batch_norm(x)) read a copy computed right before the first of them,
// when the batch norm's input and statistics are read there anyway and the
// value is at least min-bytes; the forward value keeps its forward uses.

fluid.param @g : tensor<4xf32> init ones
fluid.param @b : tensor<4xf32> init zeros
fluid.param @rm : tensor<4xf32> init zeros {trainable = false}
fluid.param @rv : tensor<4xf32> init ones {trainable = false}

// 2x4x8x8 f32: 2048 bytes, below min-bytes=2049.
// LARGE-NOT: batch_norm_apply
func.func @step(%x: tensor<2x4x8x8xf32>, %dr: tensor<2x4x8x8xf32>) -> (tensor<f32> {fluid.loss}, tensor<f64> {fluid.learning_rate}) attributes {fluid.entry} {
  %g = fluid.get_param @g : tensor<4xf32>
  %b = fluid.get_param @b : tensor<4xf32>
  %rm = fluid.get_param @rm : tensor<4xf32>
  %rv = fluid.get_param @rv : tensor<4xf32>
  %y, %mean, %inv, %nrm, %nrv = fluid.batch_norm %x, %g, %b, %rm, %rv : tensor<2x4x8x8xf32>, tensor<4xf32>
  %r = fluid.relu %y : tensor<2x4x8x8xf32>
  %loss = fluid.mean %r : tensor<2x4x8x8xf32> -> tensor<f32>
  // The backward pass: the copy comes right before its first use, and
  // every backward use reads it.
  %s = fluid.add %x, %x : tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32> -> tensor<2x4x8x8xf32>
  %dy = fluid.relu_grad %dr, %r : tensor<2x4x8x8xf32>
  %t = fluid.mul %r, %s : tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32> -> tensor<2x4x8x8xf32>
  %dx, %dg, %db = fluid.batch_norm_grad %dy, %x, %g, %mean, %inv : tensor<2x4x8x8xf32>, tensor<4xf32>
  %lr = fluid.constant dense<1.0e-01> : tensor<f64>
  return %loss, %lr : tensor<f32>, tensor<f64>
}
