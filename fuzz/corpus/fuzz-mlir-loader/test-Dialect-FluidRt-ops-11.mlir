module attributes {fluid_rt.arena_bytes = 0 : i64} {
}
