// The element counts are worked out by hand: 8*4*3*3 = 288, 10*288 = 2880
// (f64, 8 bytes each), and a scalar counts as one element.
fluid.param @conv.weight : tensor<8x4x3x3xf32> init kaiming_normal(fan_out, gain = 1.4142135623730951)
fluid.param @conv.bias : tensor<8xf32> init zeros
fluid.param @bn.running_mean : tensor<8xf32> init zeros {trainable = false}
fluid.param @big : tensor<10x288xf64> init uniform(-1.0, 1.0)
fluid.param @step : tensor<i64> init zeros {trainable = false}

func.func @f() -> tensor<8xf32> {
 %0 = fluid.get_param @conv.bias : tensor<8xf32>
 return %0 : tensor<8xf32>
}


// The pass is an analysis: the IR comes out unchanged.
// IR: fluid.param @conv.weight
// IR: fluid.param @step
// IR: func.func @f()
// IR-NEXT: fluid.get_param @conv.bias

// BADPATH: error: cannot open '{{.*}}table.txt' for the parameter summary
