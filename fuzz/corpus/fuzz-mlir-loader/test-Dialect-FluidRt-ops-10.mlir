func.func @misplaced() attributes {fluid_rt.workspace_limit = 0 : i64} {
  return
}
