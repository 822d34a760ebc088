#!/usr/bin/env bash
# The main job: installs what is needed, builds, then has fluid-opt parse,
# verify and print an example training program (an MLP with its loss) and
# summarize its parameters. Later milestones make this compile and train a
# model.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${FLUID_BUILD_DIR:-$root/build}"

"$root/scripts/setup.sh"
"$root/scripts/build.sh"
echo
echo "== fluid-opt examples/mlp.mlir --fluid-param-summary"
"$build/bin/fluid-opt" "$root/examples/mlp.mlir" --fluid-param-summary
