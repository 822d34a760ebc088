# The differential test of --fluid-widening-reductions on the cpu backend.
# SE-ResNeXt-50 (batch 4, 64x64, 10 classes: its squeezes are means of
# activations, their gradients sums of them) builds a bf16 training step
# (--fluid-mixed-precision, momentum SGD, --fluid-narrow-gradients), in
# NCHW and in channels-last (--fluid-layout=layout=nhwc, where the squeeze
# is a fluid.mean), and runs one step from the same parameters and data
# (fluid-run --seed 1) with and without the pass.
#
# Oracle: the step without the pass. Widening a 16-bit value to f32 is
# exact and both reductions sum the same f32 values in double in the same
# order, so the loss and every tensor after the step must be bitwise equal.
# Checked as well: the pass changed something (reductions that read bf16
# values, fewer casts), and `fluid-compile --precision bf16` runs it unless
# `--no-widening-reductions` (fewer cast launches in the buffers it emits).
#
# RUN: rm -rf %t && mkdir -p %t
# RUN: %python %s %t

import os
import re
import sys


sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
from pass_differential import (compare_bitwise, run,  # noqa: E402
                               run_with_and_without, with_and_without)

work = sys.argv[1]
TRAINING = "--fluid-build-training=optimizer=momentum lr=0.05 momentum=0.9"
problems = []


model = os.path.join(work, "se.mlir")
run("fluid-models", "se_resnext50_32x4d", "--batch", "4", "--image-size",
    "64", "--classes", "10", "-o", model)
init = os.path.join(work, "init.safetensors")
run("fluid-run", model, "--seed", "1", "--save-params", init)
for layout in ("nchw", "nhwc"):
    base = os.path.join(work, layout)
    passes = ["--fluid-mixed-precision=precision=bf16", TRAINING,
              "--fluid-narrow-gradients"]
    if layout == "nhwc":
        passes.append("--fluid-layout=layout=nhwc")
    ir = with_and_without(model, passes, "--fluid-widening-reductions",
                          base)
    widened = len(re.findall(
        r"fluid\.(?:mean|reduce_sum|sum_to) %[\w.]+(?: \{[^}]*\})? : "
        r"tensor<[^>]*xbf16> -> tensor<[^>]*xf32>", ir["on"]))
    casts = {v: ir[v].count("fluid.cast") for v in ir}
    if widened == 0 or casts["on"] >= casts["off"]:
        problems.append(f"{layout}: {widened} widening reductions, casts "
                        f"{casts}: the pass changed nothing")
    out, saved = run_with_and_without(base, "--seed", "1", "--params", init)
    compared = compare_bitwise(layout, out, saved, problems)
    print(f"{layout}: {widened} reductions read bf16 values, casts "
          f"{casts['off']} -> {casts['on']}; {compared} tensors "
          "after one step compared bitwise")

# fluid-compile runs the pass for bf16 unless --no-widening-reductions.
counts = {}
for flags in ((), ("--no-widening-reductions",)):
    ir = run("fluid-compile", model, "--backend", "cpu", "--quiet",
             "--precision", "bf16", "--emit=buffers", "-o", "-", *flags)
    counts[flags] = ir.count('launch "cast"')
if not counts[()] < counts[("--no-widening-reductions",)]:
    problems.append(f"fluid-compile: cast launches with the pass and "
                    f"without: {counts}")
print(f"fluid-compile: cast launches {counts}")

for p in problems:
    print("FAIL:", p)
sys.exit(1 if problems else 0)
