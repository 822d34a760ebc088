func.func @f(%x: tensor<4x10xf32>) -> tensor<4x10xf32> {
  %0 = fluid.softmax %x {axis = 2 : i64} : tensor<4x10xf32>
  return %0 : tensor<4x10xf32>
}
