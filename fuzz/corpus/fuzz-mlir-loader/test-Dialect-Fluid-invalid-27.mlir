func.func @f(%x: tensor<2x8x5x5xf32>, %c: tensor<8xf32>) {
  %y:5 = fluid.batch_norm %x, %c, %c, %c, %c {momentum = 1.5 : f64} : tensor<2x8x5x5xf32>, tensor<8xf32>
  return
}
