func.func @argument_types(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = fluid.fusion ins(%x : tensor<4xf32>) -> (tensor<4xf32>) {
  ^bb0(%a: tensor<4xf64>):
    %c = fluid.cast %a : tensor<4xf64> -> tensor<4xf32>
    fluid.yield %c : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}
