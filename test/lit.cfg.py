# -*- Python -*-
# The lit configuration of Fluid's regression tests.

import os
import shutil
import subprocess

import lit.formats
from lit.llvm import llvm_config

config.name = "Fluid"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".py", ".test"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.fluid_obj_root, "test")

# Helper modules and inputs that are not tests themselves.
config.excludes = ["lit.cfg.py", "lit.site.cfg.py", "lib", "Inputs", "CMakeLists.txt",
                   "compiled-gpu.py"]

config.substitutions.append(("%PATH%", config.environment["PATH"]))
config.substitutions.append(("%python", config.python_executable))
# Python tests that start Python again use this one (under
# scripts/test-sanitized.sh a wrapper that preloads ASan).
config.environment["FLUID_TEST_PYTHON"] = config.python_executable
config.substitutions.append(
    ("%fluid_runtime_lib", os.path.join(config.fluid_lib_dir, "libfluid_runtime.so")))
config.substitutions.append(("%fluid_src_root", config.fluid_src_root))

llvm_config.use_default_substitutions()
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
llvm_config.with_environment("PATH", config.fluid_tools_dir, append_path=True)

tools = ["fluid-opt", "fluid-run", "fluid-models", "fluid-train", "fluid-import-onnx",
         "fluid-compile"]
if config.fluid_have_cuda:
    tools.append("fluid-gpu-info")
llvm_config.add_tool_substitutions(tools, [config.fluid_tools_dir])

# "cuda-build": the cuda backend was compiled. "gpu": a GPU is visible, so
# CUDA code can run (never on CI).
if config.fluid_have_cuda:
    config.available_features.add("cuda-build")
if os.path.exists("/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz"):
    config.available_features.add("fashion-mnist")
if shutil.which("nvidia-smi") and subprocess.run(
        ["nvidia-smi", "-L"], capture_output=True).returncode == 0:
    config.available_features.add("gpu")
