func.func @f() -> tensor<1xf32> {
  %0 = "fluid.concat"() {axis = 0 : i64} : () -> tensor<1xf32>
  return %0 : tensor<1xf32>
}
