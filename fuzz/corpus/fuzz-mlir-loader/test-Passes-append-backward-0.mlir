// The structure of the backward pass of a small CNN: gradient rules in
// reverse order of the forward ops, gradients summed where a value has two
// uses, no gradient code for the images, the labels or the running
// statistics, and one result per trainable parameter, in declaration order.

fluid.param @conv.weight : tensor<4x3x3x3xf32> init kaiming_normal(fan_out, gain = 1.4142135623730951)
fluid.param @bn.weight : tensor<4xf32> init ones
fluid.param @bn.bias : tensor<4xf32> init zeros
fluid.param @bn.running_mean : tensor<4xf32> init zeros {trainable = false}
fluid.param @bn.running_var : tensor<4xf32> init ones {trainable = false}
fluid.param @fc.weight : tensor<5x4xf32> init zeros
fluid.param @fc.bias : tensor<5xf32> init zeros
fluid.param @unused : tensor<3xf32> init ones

func.func @loss(%x: tensor<2x3x8x8xf32>, %labels: tensor<2xi64>) -> tensor<f32> attributes {fluid.entry} {
  %w = fluid.get_param @conv.weight : tensor<4x3x3x3xf32>
  %c = fluid.conv2d %x, %w {padding = array<i64: 1, 1, 1, 1>} : (tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<2x4x8x8xf32>
  %g = fluid.get_param @bn.weight : tensor<4xf32>
  %b = fluid.get_param @bn.bias : tensor<4xf32>
  %rm = fluid.get_param @bn.running_mean : tensor<4xf32>
  %rv = fluid.get_param @bn.running_var : tensor<4xf32>
  %y, %mean, %inv, %nm, %nv = fluid.batch_norm %c, %g, %b, %rm, %rv : tensor<2x4x8x8xf32>, tensor<4xf32>
  fluid.set_param @bn.running_mean, %nm : tensor<4xf32>
  fluid.set_param @bn.running_var, %nv : tensor<4xf32>
  %r = fluid.relu %y : tensor<2x4x8x8xf32>
  // The convolution's output is used twice: by batch norm and here.
  %sum = fluid.add %r, %c : tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32> -> tensor<2x4x8x8xf32>
  %p = fluid.global_avg_pool %sum : tensor<2x4x8x8xf32> -> tensor<2x4x1x1xf32>
  %f = fluid.flatten %p : tensor<2x4x1x1xf32> -> tensor<2x4xf32>
  %fw = fluid.get_param @fc.weight : tensor<5x4xf32>
  %fb = fluid.get_param @fc.bias : tensor<5xf32>
  %logits = fluid.linear %f, %fw, %fb : tensor<2x4xf32>, tensor<5x4xf32>, tensor<5xf32> -> tensor<2x5xf32>
  %loss = fluid.softmax_cross_entropy %logits, %labels : tensor<2x5xf32>, tensor<2xi64> -> tensor<f32>

  // The backward pass, last op first.
  // The two uses of the convolution's output add up.
  // Only the filter gets a gradient: the images need none.
  // A trainable parameter the loss does not read gets zeros.
  return %loss : tensor<f32>
}
