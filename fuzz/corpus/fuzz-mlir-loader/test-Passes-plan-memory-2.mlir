// The workspace limit is recorded on the module, in bytes.
// LIMIT: module attributes {fluid_rt.workspace_limit = 67108864 : i64}
func.func @nothing() {
  return
}
