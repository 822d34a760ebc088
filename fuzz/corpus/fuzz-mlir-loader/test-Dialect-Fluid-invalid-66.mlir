func.func @f(%x: tensor<4x10xf32>) -> tensor<4x10xf32> {
  %0 = fluid.log_softmax %x {axis = -3 : i64} : tensor<4x10xf32>
  return %0 : tensor<4x10xf32>
}
