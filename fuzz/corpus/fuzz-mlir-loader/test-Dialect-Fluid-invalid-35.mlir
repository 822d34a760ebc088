func.func @f(%x: tensor<2x8x5x5xi32>, %c: tensor<8xf32>) {
  %y = fluid.batch_norm_apply %x, %c, %c, %c, %c : tensor<2x8x5x5xi32>, tensor<8xf32>
  return
}
