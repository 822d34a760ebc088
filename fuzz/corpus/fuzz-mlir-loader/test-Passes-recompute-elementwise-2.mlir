// The pass works on the tensor level.
// BUFFERS: error: --fluid-recompute-elementwise works on the tensor level of a single-block training step (run it before --fluid-bufferize)
func.func @buffers(%x: tensor<4xf32>) -> (tensor<f32> {fluid.loss}, tensor<f64> {fluid.learning_rate}) attributes {fluid.entry} {
  %loss = fluid.mean %x : tensor<4xf32> -> tensor<f32>
  %lr = fluid.constant dense<1.0e-01> : tensor<f64>
  return %loss, %lr : tensor<f32>, tensor<f64>
}
