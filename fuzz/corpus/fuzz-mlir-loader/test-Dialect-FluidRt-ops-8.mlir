func.func @negative() attributes {fluid_rt.arena_bytes = -1 : i64} {
  return
}
