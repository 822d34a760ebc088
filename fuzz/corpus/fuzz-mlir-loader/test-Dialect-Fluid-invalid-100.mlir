func.func @f() attributes {fluid.entry = 1} {
  return
}
