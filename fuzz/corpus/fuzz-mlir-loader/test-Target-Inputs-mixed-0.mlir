// A small classifier that uses the ops LeNet and ResNet do not: a
// convolution without bias, concatenation (whose gradient slices), average
// pooling, sigmoid and tanh, a non-splat constant, batch norm with running
// statistics. Images [4,1,8,8], 5 classes.
fluid.param @conv.weight : tensor<3x1x3x3xf32> init kaiming_uniform(fan_in, gain = 1.0)
fluid.param @bn.weight : tensor<6xf32> init ones
fluid.param @bn.bias : tensor<6xf32> init zeros
fluid.param @bn.running_mean : tensor<6xf32> init zeros {trainable = false}
fluid.param @bn.running_var : tensor<6xf32> init ones {trainable = false}
fluid.param @fc.weight : tensor<5x36xf32> init kaiming_uniform(fan_in, gain = 1.0)
fluid.param @fc.bias : tensor<5xf32> init zeros

func.func @loss(%images: tensor<4x1x8x8xf32> {fluid.name = "images"}, %labels: tensor<4xi64> {fluid.name = "labels"}) -> tensor<f32> attributes {fluid.entry} {
  %w = fluid.get_param @conv.weight : tensor<3x1x3x3xf32>
  %c = fluid.conv2d %images, %w {padding = array<i64: 1, 1, 1, 1>} : (tensor<4x1x8x8xf32>, tensor<3x1x3x3xf32>) -> tensor<4x3x8x8xf32>
  %s = fluid.sigmoid %c : tensor<4x3x8x8xf32>
  %t = fluid.tanh %c : tensor<4x3x8x8xf32>
  %scale = fluid.constant dense<[[[[0.5]], [[1.0]], [[2.0]]]]> : tensor<1x3x1x1xf32>
  %ts = fluid.mul %t, %scale : tensor<4x3x8x8xf32>, tensor<1x3x1x1xf32> -> tensor<4x3x8x8xf32>
  %cat = fluid.concat %s, %ts {axis = 1 : i64} : (tensor<4x3x8x8xf32>, tensor<4x3x8x8xf32>) -> tensor<4x6x8x8xf32>
  %g = fluid.get_param @bn.weight : tensor<6xf32>
  %b = fluid.get_param @bn.bias : tensor<6xf32>
  %m = fluid.get_param @bn.running_mean : tensor<6xf32>
  %v = fluid.get_param @bn.running_var : tensor<6xf32>
  %y, %mean, %inv_std, %rm, %rv = fluid.batch_norm %cat, %g, %b, %m, %v {epsilon = 1.0e-5 : f64, momentum = 0.1 : f64} : tensor<4x6x8x8xf32>, tensor<6xf32>
  fluid.set_param @bn.running_mean, %rm : tensor<6xf32>
  fluid.set_param @bn.running_var, %rv : tensor<6xf32>
  %p = fluid.avg_pool2d %y {kernel_size = array<i64: 4, 4>, strides = array<i64: 4, 3>, padding = array<i64: 0, 1, 0, 1>} : tensor<4x6x8x8xf32> -> tensor<4x6x2x3xf32>
  %f = fluid.flatten %p : tensor<4x6x2x3xf32> -> tensor<4x36xf32>
  %fw = fluid.get_param @fc.weight : tensor<5x36xf32>
  %fb = fluid.get_param @fc.bias : tensor<5xf32>
  %logits = fluid.linear %f, %fw, %fb : tensor<4x36xf32>, tensor<5x36xf32>, tensor<5xf32> -> tensor<4x5xf32>
  %l = fluid.softmax_cross_entropy %logits, %labels : tensor<4x5xf32>, tensor<4xi64> -> tensor<f32>
  return %l : tensor<f32>
}
