// The first block of timm's SE-ResNeXt-50 (32x4d), layer1.0: a bottleneck
// whose 3x3 convolution has 32 groups of 4 channels, followed by a
// squeeze-and-excitation gate (global pooling, two 1x1 convolutions with
// reduction 16, a sigmoid, and a broadcast multiply). Batch 2, 56x56 images.
// Parameter names match timm's state dict.
//
//   fluid-opt examples/se-resnext-block.mlir

fluid.param @layer1.0.conv1.weight : tensor<128x64x1x1xf32> init kaiming_normal(fan_out, gain = 1.4142135623730951)
fluid.param @layer1.0.bn1.weight : tensor<128xf32> init ones
fluid.param @layer1.0.bn1.bias : tensor<128xf32> init zeros
fluid.param @layer1.0.bn1.running_mean : tensor<128xf32> init zeros {trainable = false}
fluid.param @layer1.0.bn1.running_var : tensor<128xf32> init ones {trainable = false}
fluid.param @layer1.0.conv2.weight : tensor<128x4x3x3xf32> init kaiming_normal(fan_out, gain = 1.4142135623730951)
fluid.param @layer1.0.bn2.weight : tensor<128xf32> init ones
fluid.param @layer1.0.bn2.bias : tensor<128xf32> init zeros
fluid.param @layer1.0.bn2.running_mean : tensor<128xf32> init zeros {trainable = false}
fluid.param @layer1.0.bn2.running_var : tensor<128xf32> init ones {trainable = false}
fluid.param @layer1.0.conv3.weight : tensor<256x128x1x1xf32> init kaiming_normal(fan_out, gain = 1.4142135623730951)
fluid.param @layer1.0.bn3.weight : tensor<256xf32> init ones
fluid.param @layer1.0.bn3.bias : tensor<256xf32> init zeros
fluid.param @layer1.0.bn3.running_mean : tensor<256xf32> init zeros {trainable = false}
fluid.param @layer1.0.bn3.running_var : tensor<256xf32> init ones {trainable = false}
fluid.param @layer1.0.se.fc1.weight : tensor<16x256x1x1xf32> init kaiming_normal(fan_out, gain = 1.4142135623730951)
fluid.param @layer1.0.se.fc1.bias : tensor<16xf32> init zeros
fluid.param @layer1.0.se.fc2.weight : tensor<256x16x1x1xf32> init kaiming_normal(fan_out, gain = 1.4142135623730951)
fluid.param @layer1.0.se.fc2.bias : tensor<256xf32> init zeros
fluid.param @layer1.0.downsample.0.weight : tensor<256x64x1x1xf32> init kaiming_normal(fan_out, gain = 1.4142135623730951)
fluid.param @layer1.0.downsample.1.weight : tensor<256xf32> init ones
fluid.param @layer1.0.downsample.1.bias : tensor<256xf32> init zeros
fluid.param @layer1.0.downsample.1.running_mean : tensor<256xf32> init zeros {trainable = false}
fluid.param @layer1.0.downsample.1.running_var : tensor<256xf32> init ones {trainable = false}

func.func @se_resnext_block(%x: tensor<2x64x56x56xf32>) -> tensor<2x256x56x56xf32> {
  %c1_w = fluid.get_param @layer1.0.conv1.weight : tensor<128x64x1x1xf32>
  %c1_conv = fluid.conv2d %x, %c1_w : (tensor<2x64x56x56xf32>, tensor<128x64x1x1xf32>) -> tensor<2x128x56x56xf32>
  %c1_weight = fluid.get_param @layer1.0.bn1.weight : tensor<128xf32>
  %c1_bias = fluid.get_param @layer1.0.bn1.bias : tensor<128xf32>
  %c1_running_mean = fluid.get_param @layer1.0.bn1.running_mean : tensor<128xf32>
  %c1_running_var = fluid.get_param @layer1.0.bn1.running_var : tensor<128xf32>
  %c1_bn, %c1_mean, %c1_inv_std, %c1_new_mean, %c1_new_var = fluid.batch_norm %c1_conv, %c1_weight, %c1_bias, %c1_running_mean, %c1_running_var : tensor<2x128x56x56xf32>, tensor<128xf32>
  fluid.set_param @layer1.0.bn1.running_mean, %c1_new_mean : tensor<128xf32>
  fluid.set_param @layer1.0.bn1.running_var, %c1_new_var : tensor<128xf32>
  %c1_relu = fluid.relu %c1_bn : tensor<2x128x56x56xf32>
  %c2_w = fluid.get_param @layer1.0.conv2.weight : tensor<128x4x3x3xf32>
  %c2_conv = fluid.conv2d %c1_relu, %c2_w {padding = array<i64: 1, 1, 1, 1>, groups = 32 : i64} : (tensor<2x128x56x56xf32>, tensor<128x4x3x3xf32>) -> tensor<2x128x56x56xf32>
  %c2_weight = fluid.get_param @layer1.0.bn2.weight : tensor<128xf32>
  %c2_bias = fluid.get_param @layer1.0.bn2.bias : tensor<128xf32>
  %c2_running_mean = fluid.get_param @layer1.0.bn2.running_mean : tensor<128xf32>
  %c2_running_var = fluid.get_param @layer1.0.bn2.running_var : tensor<128xf32>
  %c2_bn, %c2_mean, %c2_inv_std, %c2_new_mean, %c2_new_var = fluid.batch_norm %c2_conv, %c2_weight, %c2_bias, %c2_running_mean, %c2_running_var : tensor<2x128x56x56xf32>, tensor<128xf32>
  fluid.set_param @layer1.0.bn2.running_mean, %c2_new_mean : tensor<128xf32>
  fluid.set_param @layer1.0.bn2.running_var, %c2_new_var : tensor<128xf32>
  %c2_relu = fluid.relu %c2_bn : tensor<2x128x56x56xf32>
  %c3_w = fluid.get_param @layer1.0.conv3.weight : tensor<256x128x1x1xf32>
  %c3_conv = fluid.conv2d %c2_relu, %c3_w : (tensor<2x128x56x56xf32>, tensor<256x128x1x1xf32>) -> tensor<2x256x56x56xf32>
  %c3_weight = fluid.get_param @layer1.0.bn3.weight : tensor<256xf32>
  %c3_bias = fluid.get_param @layer1.0.bn3.bias : tensor<256xf32>
  %c3_running_mean = fluid.get_param @layer1.0.bn3.running_mean : tensor<256xf32>
  %c3_running_var = fluid.get_param @layer1.0.bn3.running_var : tensor<256xf32>
  %c3_bn, %c3_mean, %c3_inv_std, %c3_new_mean, %c3_new_var = fluid.batch_norm %c3_conv, %c3_weight, %c3_bias, %c3_running_mean, %c3_running_var : tensor<2x256x56x56xf32>, tensor<256xf32>
  fluid.set_param @layer1.0.bn3.running_mean, %c3_new_mean : tensor<256xf32>
  fluid.set_param @layer1.0.bn3.running_var, %c3_new_var : tensor<256xf32>
  // Squeeze-and-excitation: channel weights from the pooled features.
  %se_pool = fluid.global_avg_pool %c3_bn : tensor<2x256x56x56xf32> -> tensor<2x256x1x1xf32>
  %se_w1 = fluid.get_param @layer1.0.se.fc1.weight : tensor<16x256x1x1xf32>
  %se_b1 = fluid.get_param @layer1.0.se.fc1.bias : tensor<16xf32>
  %se_w2 = fluid.get_param @layer1.0.se.fc2.weight : tensor<256x16x1x1xf32>
  %se_b2 = fluid.get_param @layer1.0.se.fc2.bias : tensor<256xf32>
  %se_fc1 = fluid.conv2d %se_pool, %se_w1, %se_b1 : (tensor<2x256x1x1xf32>, tensor<16x256x1x1xf32>, tensor<16xf32>) -> tensor<2x16x1x1xf32>
  %se_relu = fluid.relu %se_fc1 : tensor<2x16x1x1xf32>
  %se_fc2 = fluid.conv2d %se_relu, %se_w2, %se_b2 : (tensor<2x16x1x1xf32>, tensor<256x16x1x1xf32>, tensor<256xf32>) -> tensor<2x256x1x1xf32>
  %se_gate = fluid.sigmoid %se_fc2 : tensor<2x256x1x1xf32>
  %se_out = fluid.mul %c3_bn, %se_gate : tensor<2x256x56x56xf32>, tensor<2x256x1x1xf32> -> tensor<2x256x56x56xf32>
  // The shortcut projects the input to the block's output channels.
  %ds_w = fluid.get_param @layer1.0.downsample.0.weight : tensor<256x64x1x1xf32>
  %ds_conv = fluid.conv2d %x, %ds_w : (tensor<2x64x56x56xf32>, tensor<256x64x1x1xf32>) -> tensor<2x256x56x56xf32>
  %ds_weight = fluid.get_param @layer1.0.downsample.1.weight : tensor<256xf32>
  %ds_bias = fluid.get_param @layer1.0.downsample.1.bias : tensor<256xf32>
  %ds_running_mean = fluid.get_param @layer1.0.downsample.1.running_mean : tensor<256xf32>
  %ds_running_var = fluid.get_param @layer1.0.downsample.1.running_var : tensor<256xf32>
  %ds_bn, %ds_mean, %ds_inv_std, %ds_new_mean, %ds_new_var = fluid.batch_norm %ds_conv, %ds_weight, %ds_bias, %ds_running_mean, %ds_running_var : tensor<2x256x56x56xf32>, tensor<256xf32>
  fluid.set_param @layer1.0.downsample.1.running_mean, %ds_new_mean : tensor<256xf32>
  fluid.set_param @layer1.0.downsample.1.running_var, %ds_new_var : tensor<256xf32>
  %sum = fluid.add %se_out, %ds_bn : tensor<2x256x56x56xf32>, tensor<2x256x56x56xf32> -> tensor<2x256x56x56xf32>
  %out = fluid.relu %sum : tensor<2x256x56x56xf32>
  return %out : tensor<2x256x56x56xf32>
}
