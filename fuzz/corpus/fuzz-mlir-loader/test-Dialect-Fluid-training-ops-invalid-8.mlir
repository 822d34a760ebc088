func.func @f(%x: tensor<4x3xf32>) {
  %0 = fluid.broadcast_to %x : tensor<4x3xf32> -> tensor<4x5xf32>
  return
}
