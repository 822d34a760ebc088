func.func @f(%x: tensor<1x3x0x4xf32>) -> tensor<1x3x1x1xf32> {
  %0 = fluid.global_avg_pool %x : tensor<1x3x0x4xf32> -> tensor<1x3x1x1xf32>
  return %0 : tensor<1x3x1x1xf32>
}
