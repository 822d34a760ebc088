func.func @unknown() attributes {fluid_rt.arena = 0 : i64} {
  return
}
