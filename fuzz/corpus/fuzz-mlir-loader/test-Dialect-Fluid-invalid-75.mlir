func.func @f() -> tensor<2xi8> {
  %0 = fluid.constant dense<[1, 2]> : tensor<2xi8>
  return %0 : tensor<2xi8>
}
