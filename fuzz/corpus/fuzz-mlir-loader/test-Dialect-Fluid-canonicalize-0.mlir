// Folders: constants fold and deduplicate, a reshape to the same type
// disappears, and nothing with a parameter effect is removed or merged.

func.func @identity_reshape(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = fluid.reshape %x : tensor<2x3xf32> -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}
