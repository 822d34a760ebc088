func.func @blocks() {
  return
^unreachable:
  return
}
