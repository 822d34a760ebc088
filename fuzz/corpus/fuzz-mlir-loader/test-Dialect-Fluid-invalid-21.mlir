// The element count fits, but the size in bytes does not.
func.func @f(%x: tensor<2305843009213693952xf64>) -> tensor<2305843009213693952xf64> {
  %0 = fluid.tanh %x : tensor<2305843009213693952xf64>
  return %0 : tensor<2305843009213693952xf64>
}
