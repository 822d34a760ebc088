// A small classifier whose hidden layer runs every elementwise op that has
// a gradient rule (relu, sigmoid, tanh, neg, exp, log, sqrt, add, sub, mul,
// div, with a broadcast scalar), so that its training step fuses them and
// their gradients into generated kernels; its learning-rate schedule
// (cosine with warm-up, built by fluid-compile) adds the scalar ops (cos,
// floor, minimum, maximum, greater_equal, select, cast). Images [8,1,4,4],
// 4 classes. Used by test/Runtime/compiled-gpu.py.
fluid.param @fc1.weight : tensor<32x16xf32> init kaiming_uniform(fan_in, gain = 1.0)
fluid.param @fc1.bias : tensor<32xf32> init zeros
fluid.param @fc2.weight : tensor<4x32xf32> init kaiming_uniform(fan_in, gain = 1.0)
fluid.param @fc2.bias : tensor<4xf32> init zeros

func.func @loss(%images: tensor<8x1x4x4xf32> {fluid.name = "images"}, %labels: tensor<8xi64> {fluid.name = "labels"}) -> tensor<f32> attributes {fluid.entry} {
  %x = fluid.flatten %images : tensor<8x1x4x4xf32> -> tensor<8x16xf32>
  %w1 = fluid.get_param @fc1.weight : tensor<32x16xf32>
  %b1 = fluid.get_param @fc1.bias : tensor<32xf32>
  %h = fluid.linear %x, %w1, %b1 : tensor<8x16xf32>, tensor<32x16xf32>, tensor<32xf32> -> tensor<8x32xf32>
  %a = fluid.sigmoid %h : tensor<8x32xf32>
  %t = fluid.tanh %h : tensor<8x32xf32>
  %r = fluid.relu %h : tensor<8x32xf32>
  %sq = fluid.mul %h, %h : tensor<8x32xf32>, tensor<8x32xf32> -> tensor<8x32xf32>
  %one = fluid.constant dense<1.0> : tensor<f32>
  %sq1 = fluid.add %sq, %one : tensor<8x32xf32>, tensor<f32> -> tensor<8x32xf32>
  %s = fluid.sqrt %sq1 : tensor<8x32xf32>
  %l = fluid.log %s : tensor<8x32xf32>
  %n = fluid.neg %sq : tensor<8x32xf32>
  %e = fluid.exp %n : tensor<8x32xf32>
  %d = fluid.div %a, %s : tensor<8x32xf32>, tensor<8x32xf32> -> tensor<8x32xf32>
  %u = fluid.sub %t, %e : tensor<8x32xf32>, tensor<8x32xf32> -> tensor<8x32xf32>
  %v = fluid.add %r, %l : tensor<8x32xf32>, tensor<8x32xf32> -> tensor<8x32xf32>
  %w = fluid.mul %u, %d : tensor<8x32xf32>, tensor<8x32xf32> -> tensor<8x32xf32>
  %z = fluid.add %v, %w : tensor<8x32xf32>, tensor<8x32xf32> -> tensor<8x32xf32>
  %w2 = fluid.get_param @fc2.weight : tensor<4x32xf32>
  %b2 = fluid.get_param @fc2.bias : tensor<4xf32>
  %logits = fluid.linear %z, %w2, %b2 : tensor<8x32xf32>, tensor<4x32xf32>, tensor<4xf32> -> tensor<8x4xf32>
  %loss = fluid.softmax_cross_entropy %logits, %labels : tensor<8x4xf32>, tensor<8xi64> -> tensor<f32>
  return %loss : tensor<f32>
}
