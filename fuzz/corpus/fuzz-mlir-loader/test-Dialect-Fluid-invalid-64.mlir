func.func @f(%a: tensor<1152921504606846976xi32>) -> tensor<2xi32> {
  %0 = fluid.concat %a, %a {axis = 0 : i64} : (tensor<1152921504606846976xi32>, tensor<1152921504606846976xi32>) -> tensor<2xi32>
  return %0 : tensor<2xi32>
}
