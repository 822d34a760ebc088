#!/usr/bin/env bash
# Installs what Fluid needs on Debian 12 (run as root, or with sudo present):
# the build tools, MLIR/LLVM 22, ONNX with its backend test data (for
# fluid-import-onnx), libjpeg-turbo's TurboJPEG and libpng (the runtime decodes
# image datasets with them), OpenMPI (data-parallel runs are started by
# mpirun; libfluid_mpi links it), and Debian's PyTorch, torchvision and PIL
# (the tests' oracles).
# Quiet and idempotent: when everything is installed it runs apt not at all.
# CUDA is optional: when /usr/local/cuda exists the cuda backend is built.
set -euo pipefail

packages=(
  build-essential cmake ninja-build ccache git python3 python3-numpy
  llvm-22-dev llvm-22-tools libmlir-22-dev mlir-22-tools
  python3-torch python3-torchvision python3-pil zlib1g-dev dataset-fashion-mnist
  libturbojpeg0-dev libpng-dev openmpi-bin libopenmpi-dev
  libonnx-dev libprotobuf-dev protobuf-compiler libonnx-testdata python3-onnx
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
    missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

sudo=""
if [ "$(id -u)" -ne 0 ]; then
  sudo="sudo"
fi
echo "setup: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "setup: done"
