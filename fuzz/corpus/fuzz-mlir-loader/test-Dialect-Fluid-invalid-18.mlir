func.func @f(%x: tensor<2x4x9x7xi32>) -> tensor<2x4x9x7xi32> {
  %0 = fluid.relu %x : tensor<2x4x9x7xi32>
  return %0 : tensor<2x4x9x7xi32>
}
