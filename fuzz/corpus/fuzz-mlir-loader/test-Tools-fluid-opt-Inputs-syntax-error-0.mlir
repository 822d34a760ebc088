// A comma is missing between the operands.
func.func @f(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %0 = fluid.add %a, %b : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  %1 = fluid.add %0 %b : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  return %1 : tensor<4xf32>
}
