func.func @f(%x: tensor<4x10xf32>) {
  %0 = fluid.softmax_grad %x, %x {axis = 2 : i64} : tensor<4x10xf32>
  return
}
