//===- Version.cpp - The runtime library's identity -----------------------===//

#include "fluid/runtime/Tensor.h"

extern "C" const char *fluid_runtime_version(void) {
  return "fluid-runtime 0.1";
}
