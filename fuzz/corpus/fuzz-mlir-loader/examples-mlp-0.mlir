// A two-layer perceptron for 28x28 images (Fashion-MNIST) with its loss: the
// smallest complete forward program. Initializers are PyTorch's defaults for
// nn.Linear: kaiming_uniform with gain sqrt(1/3), i.e. weights in
// +-1/sqrt(fan_in), and biases in the same range.
//
//   fluid-opt examples/mlp.mlir
//   fluid-opt examples/mlp.mlir --fluid-param-summary -o /dev/null

fluid.param @fc1.weight : tensor<128x784xf32> init kaiming_uniform(fan_in, gain = 0.57735026918962584)
fluid.param @fc1.bias : tensor<128xf32> init uniform(-0.035714285714285712, 0.035714285714285712)
fluid.param @fc2.weight : tensor<10x128xf32> init kaiming_uniform(fan_in, gain = 0.57735026918962584)
fluid.param @fc2.bias : tensor<10xf32> init uniform(-0.088388347648318447, 0.088388347648318447)

// Returns the mean cross-entropy of a batch of 32 images against their labels.
func.func @loss(%images: tensor<32x1x28x28xf32>, %labels: tensor<32xi64>) -> tensor<f32> {
  %x = fluid.flatten %images : tensor<32x1x28x28xf32> -> tensor<32x784xf32>
  %w1 = fluid.get_param @fc1.weight : tensor<128x784xf32>
  %b1 = fluid.get_param @fc1.bias : tensor<128xf32>
  %h = fluid.linear %x, %w1, %b1 : tensor<32x784xf32>, tensor<128x784xf32>, tensor<128xf32> -> tensor<32x128xf32>
  %a = fluid.relu %h : tensor<32x128xf32>
  %w2 = fluid.get_param @fc2.weight : tensor<10x128xf32>
  %b2 = fluid.get_param @fc2.bias : tensor<10xf32>
  %logits = fluid.linear %a, %w2, %b2 : tensor<32x128xf32>, tensor<10x128xf32>, tensor<10xf32> -> tensor<32x10xf32>
  %loss = fluid.softmax_cross_entropy %logits, %labels : tensor<32x10xf32>, tensor<32xi64> -> tensor<f32>
  return %loss : tensor<f32>
}
