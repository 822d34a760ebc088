func.func @not_integer() attributes {fluid_rt.arena_lower_bound = "many"} {
  return
}
