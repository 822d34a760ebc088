// A small classifier that gathers: a run-time activation's columns at
// constant indices (repeated and unused ones; i64) and a parameter's rows
// (a table of per-row biases, as swin's relative position bias; i32).
// Images [4,1,8,8], 5 classes.
fluid.param @fc1.weight : tensor<12x64xf32> init kaiming_uniform(fan_in, gain = 1.0)
fluid.param @fc1.bias : tensor<12xf32> init zeros
fluid.param @fc2.weight : tensor<5x8xf32> init kaiming_uniform(fan_in, gain = 1.0)
fluid.param @fc2.bias : tensor<5xf32> init zeros
fluid.param @table : tensor<3x5xf32> init kaiming_uniform(fan_in, gain = 1.0)

func.func @loss(%images: tensor<4x1x8x8xf32> {fluid.name = "images"}, %labels: tensor<4xi64> {fluid.name = "labels"}) -> tensor<f32> attributes {fluid.entry} {
  %f = fluid.flatten %images : tensor<4x1x8x8xf32> -> tensor<4x64xf32>
  %w1 = fluid.get_param @fc1.weight : tensor<12x64xf32>
  %b1 = fluid.get_param @fc1.bias : tensor<12xf32>
  %h = fluid.linear %f, %w1, %b1 : tensor<4x64xf32>, tensor<12x64xf32>, tensor<12xf32> -> tensor<4x12xf32>
  %t = fluid.tanh %h : tensor<4x12xf32>
  %columns = fluid.constant dense<[11, 0, 3, 3, 7, 0, 5, 9]> : tensor<8xi64>
  %g = fluid.gather %t, %columns {axis = 1 : i64} : (tensor<4x12xf32>, tensor<8xi64>) -> tensor<4x8xf32>
  %w2 = fluid.get_param @fc2.weight : tensor<5x8xf32>
  %b2 = fluid.get_param @fc2.bias : tensor<5xf32>
  %logits = fluid.linear %g, %w2, %b2 : tensor<4x8xf32>, tensor<5x8xf32>, tensor<5xf32> -> tensor<4x5xf32>
  %rows = fluid.constant dense<[2, 0, 2, 1]> : tensor<4xi32>
  %table = fluid.get_param @table : tensor<3x5xf32>
  %bias = fluid.gather %table, %rows {axis = 0 : i64} : (tensor<3x5xf32>, tensor<4xi32>) -> tensor<4x5xf32>
  %z = fluid.add %logits, %bias : tensor<4x5xf32>, tensor<4x5xf32> -> tensor<4x5xf32>
  %l = fluid.softmax_cross_entropy %z, %labels : tensor<4x5xf32>, tensor<4xi64> -> tensor<f32>
  return %l : tensor<f32>
}
