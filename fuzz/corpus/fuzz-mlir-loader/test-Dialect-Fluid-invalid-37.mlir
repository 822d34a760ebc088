func.func @f(%x: tensor<2x8xf32>, %c: tensor<8xf32>) {
  %y = "fluid.batch_norm_apply"(%x, %c, %c, %c, %c) : (tensor<2x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x4xf32>
  return
}
