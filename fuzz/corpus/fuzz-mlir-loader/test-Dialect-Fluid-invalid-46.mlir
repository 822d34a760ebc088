func.func @f(%x: tensor<3x10xf32>) -> tensor<3x10x1x1xf32> {
  %0 = fluid.global_avg_pool %x : tensor<3x10xf32> -> tensor<3x10x1x1xf32>
  return %0 : tensor<3x10x1x1xf32>
}
