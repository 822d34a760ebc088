// The model of softmax-regression.cpp as a fluid program, for fluid-train:
// the same parameters, initializers, loss and predict function.
module {
  fluid.param @fc.weight : tensor<10x784xf32> init kaiming_uniform(fan_in, gain = 0.57735026918962573)
  fluid.param @fc.bias : tensor<10xf32> init zeros
  func.func @loss(%images: tensor<16x1x28x28xf32> {fluid.name = "images"}, %labels: tensor<16xi64> {fluid.name = "labels"}) -> tensor<f32> attributes {fluid.entry} {
    %0 = fluid.flatten %images : tensor<16x1x28x28xf32> -> tensor<16x784xf32>
    %1 = fluid.get_param @fc.weight : tensor<10x784xf32>
    %2 = fluid.get_param @fc.bias : tensor<10xf32>
    %3 = fluid.linear %0, %1, %2 : tensor<16x784xf32>, tensor<10x784xf32>, tensor<10xf32> -> tensor<16x10xf32>
    %4 = fluid.softmax_cross_entropy %3, %labels : tensor<16x10xf32>, tensor<16xi64> -> tensor<f32>
    return %4 : tensor<f32>
  }
  func.func @predict(%images: tensor<16x1x28x28xf32> {fluid.name = "images"}) -> tensor<16x10xf32> {
    %0 = fluid.flatten %images : tensor<16x1x28x28xf32> -> tensor<16x784xf32>
    %1 = fluid.get_param @fc.weight : tensor<10x784xf32>
    %2 = fluid.get_param @fc.bias : tensor<10xf32>
    %3 = fluid.linear %0, %1, %2 : tensor<16x784xf32>, tensor<10x784xf32>, tensor<10xf32> -> tensor<16x10xf32>
    return %3 : tensor<16x10xf32>
  }
}
