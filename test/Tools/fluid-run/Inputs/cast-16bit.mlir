// f32 -> f16 / bf16 -> f32 round trips (fluid-run, test/Tools/fluid-run/run.test).
func.func @f(%x: tensor<5xf32>) -> (tensor<5xf32>, tensor<5xf32>) {
  %h = fluid.cast %x : tensor<5xf32> -> tensor<5xf16>
  %b = fluid.cast %x : tensor<5xf32> -> tensor<5xbf16>
  %hf = fluid.cast %h : tensor<5xf16> -> tensor<5xf32>
  %bf = fluid.cast %b : tensor<5xbf16> -> tensor<5xf32>
  return %hf, %bf : tensor<5xf32>, tensor<5xf32>
}
