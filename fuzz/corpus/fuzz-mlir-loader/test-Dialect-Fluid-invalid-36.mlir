// The per-channel operands have one type (only the generic form can say
// otherwise).
func.func @f(%x: tensor<2x8xf32>, %c: tensor<8xf32>, %d: tensor<8xf64>) {
  %y = "fluid.batch_norm_apply"(%x, %c, %c, %c, %d) : (tensor<2x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf64>) -> tensor<2x8xf32>
  return
}
