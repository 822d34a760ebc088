func.func @step() attributes {fluid.entry} {
  return
^unreachable:
  return
}
