func.func @integers(%x: tensor<4xi64>) -> tensor<4xi64> {
  %r = fluid.fusion ins(%x : tensor<4xi64>) -> (tensor<4xi64>) {
  ^bb0(%a: tensor<4xi64>):
    %c = fluid.add %a, %a : tensor<4xi64>, tensor<4xi64> -> tensor<4xi64>
    fluid.yield %c : tensor<4xi64>
  }
  return %r : tensor<4xi64>
}
