// The workspace limit may be negative (no limit).
module attributes {fluid_rt.workspace_limit = -1 : i64} {
}
