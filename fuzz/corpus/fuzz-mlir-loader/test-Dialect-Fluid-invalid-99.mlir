// Attributes of the fluid dialect on other ops are checked by the dialect.
func.func @f() attributes {fluid.entyr} {
  return
}
