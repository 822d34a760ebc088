func.func @f(%x: tensor<4xf32> {fluid.nam = "x"}) {
  return
}
