func.func @f(%x: tensor<4xi64>) {
  %0 = fluid.cast %x : tensor<4xi64> -> tensor<2x2xf32>
  return
}
