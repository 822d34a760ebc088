// The memory plan's attributes: on functions, non-negative i64s.
func.func @planned() attributes {fluid_rt.arena_bytes = 512 : i64, fluid_rt.arena_lower_bound = 256 : i64} {
  return
}
