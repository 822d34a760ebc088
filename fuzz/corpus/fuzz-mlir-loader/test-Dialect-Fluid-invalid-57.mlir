func.func @f(%x: tensor<2x3x4x5xf32>) -> tensor<120x1xf32> {
  %0 = fluid.flatten %x {axis = 5 : i64} : tensor<2x3x4x5xf32> -> tensor<120x1xf32>
  return %0 : tensor<120x1xf32>
}
