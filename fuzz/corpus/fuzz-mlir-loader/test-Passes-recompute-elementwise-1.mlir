fluid.param @g : tensor<4xf32> init ones
fluid.param @b : tensor<4xf32> init zeros
fluid.param @rm : tensor<4xf32> init zeros {trainable = false}
fluid.param @rv : tensor<4xf32> init ones {trainable = false}

// Not recomputed: the normalized value has a use besides the ReLU (%r1);
// the batch norm's input is not read by the backward pass (%r2: the copy
// would keep it alive); the ReLU's output is not read by the backward pass
// (%r3).
func.func @kept(%x: tensor<2x4xf32>, %z: tensor<2x4xf32>, %w: tensor<2x4xf32>, %dr: tensor<2x4xf32>) -> (tensor<f32> {fluid.loss}, tensor<f64> {fluid.learning_rate}) attributes {fluid.entry} {
  %g = fluid.get_param @g : tensor<4xf32>
  %b = fluid.get_param @b : tensor<4xf32>
  %rm = fluid.get_param @rm : tensor<4xf32>
  %rv = fluid.get_param @rv : tensor<4xf32>
  %y1, %m1, %i1, %a1, %v1 = fluid.batch_norm %x, %g, %b, %rm, %rv : tensor<2x4xf32>, tensor<4xf32>
  %r1 = fluid.relu %y1 : tensor<2x4xf32>
  %y2, %m2, %i2, %a2, %v2 = fluid.batch_norm %z, %g, %b, %rm, %rv : tensor<2x4xf32>, tensor<4xf32>
  %r2 = fluid.relu %y2 : tensor<2x4xf32>
  %y3, %m3, %i3, %a3, %v3 = fluid.batch_norm %w, %g, %b, %rm, %rv : tensor<2x4xf32>, tensor<4xf32>
  %r3 = fluid.relu %y3 : tensor<2x4xf32>
  %s12 = fluid.add %r1, %r2 : tensor<2x4xf32>, tensor<2x4xf32> -> tensor<2x4xf32>
  %s = fluid.add %s12, %r3 : tensor<2x4xf32>, tensor<2x4xf32> -> tensor<2x4xf32>
  %loss = fluid.mean %s : tensor<2x4xf32> -> tensor<f32>
  %e1 = fluid.relu_grad %y1, %r1 : tensor<2x4xf32>
  %d1, %g1, %b1 = fluid.batch_norm_grad %e1, %x, %g, %m1, %i1 : tensor<2x4xf32>, tensor<4xf32>
  %e2 = fluid.relu_grad %dr, %r2 : tensor<2x4xf32>
  %d2, %g2, %b2 = fluid.batch_norm_grad %e2, %dr, %g, %m2, %i2 : tensor<2x4xf32>, tensor<4xf32>
  %d3, %g3, %b3 = fluid.batch_norm_grad %dr, %w, %g, %m3, %i3 : tensor<2x4xf32>, tensor<4xf32>
  %lr = fluid.constant dense<1.0e-01> : tensor<f64>
  return %loss, %lr : tensor<f32>, tensor<f64>
}
