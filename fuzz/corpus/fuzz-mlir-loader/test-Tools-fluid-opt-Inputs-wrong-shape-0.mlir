// The weight has 512 input features, the input 784.
func.func @f(%x: tensor<32x784xf32>, %w: tensor<10x512xf32>) -> tensor<32x10xf32> {
  %0 = fluid.linear %x, %w : tensor<32x784xf32>, tensor<10x512xf32> -> tensor<32x10xf32>
  return %0 : tensor<32x10xf32>
}
