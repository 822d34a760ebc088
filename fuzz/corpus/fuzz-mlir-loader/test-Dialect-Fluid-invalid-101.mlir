func.func @f(%x: tensor<4xf32> {fluid.name = 3}) {
  return
}
