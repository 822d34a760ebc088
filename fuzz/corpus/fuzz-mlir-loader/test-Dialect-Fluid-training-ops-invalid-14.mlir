func.func @f(%x: tensor<4x6xf32>) {
  %0 = fluid.slice %x {axis = 1 : i64, offset = 0 : i64} : tensor<4x6xf32> -> tensor<3x3xf32>
  return
}
