// Every input fits in 64 bits, but their sizes along the axis do not add up.
func.func @f(%a: tensor<2305843009213693951xi32>) -> tensor<2xi32> {
  %0 = fluid.concat %a, %a, %a, %a, %a {axis = 0 : i64} : (tensor<2305843009213693951xi32>, tensor<2305843009213693951xi32>, tensor<2305843009213693951xi32>, tensor<2305843009213693951xi32>, tensor<2305843009213693951xi32>) -> tensor<2xi32>
  return %0 : tensor<2xi32>
}
