func.func @f(%dy: tensor<2x8x5x5xf32>, %c: tensor<4xf32>) {
  %0:3 = fluid.batch_norm_grad %dy, %dy, %c, %c, %c : tensor<2x8x5x5xf32>, tensor<4xf32>
  return
}
