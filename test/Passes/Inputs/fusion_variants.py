"""Compiles and runs the executables of ../fuse-elementwise-vs-cpu.test on
the cpu backend and compares their checkpoints. Arguments: WORKDIR.
fluid-models and fluid-compile are found on PATH (lit's tools directory).

Per model (LeNet-5 at batch 4; ResNet-18 and SE-ResNeXt-50 at batch 4 and
64x64 images), three executables, the same seed and synthetic data:
- default: batch norm expanded (--fluid-expand-batch-norm) and fused;
- no-fuse: expanded, not fused (--no-fuse-elementwise);
- library: neither (--no-expand-batch-norm --no-fuse-elementwise).
Fusion must not change a bit: default and no-fuse, 2 steps, byte-equal
checkpoints (the cpu loops compute each element as the unfused kernels
do, and sum per channel in the reduce kernel's order, in double).
The expansion reorders batch norm's sums and computes the statistics in
the program's float type (one-pass shifted sums instead of the kernel's
two passes in double): default against library after 1 step within 1e-4
of each tensor's largest magnitude (2e-6 seen), and the first loss within
1e-5 relative. (Not at 32x32 and batch 2: layer4's batch norms would
normalize 2 values per channel, an ill-conditioned problem in which any
float32 rounding, of either method, moves layer1's gradients by percent.)
ResNet-18 in bf16 and in fp16 (--precision; fp16 with its dynamic loss
scaling), fused and unfused, 2 steps: byte-equal checkpoints too, where the
regions read the convolutions' 16-bit outputs through widening casts
(views) and round their 16-bit results once, as the cast kernel does; and
with every batch norm + ReLU output recomputed (--recompute-min-bytes 0)
against none recomputed and unfused, byte-equal as well (and SE-ResNeXt-50
in bf16 the same way).
"""

import filecmp
import os
import re
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "lib"))
import safetensors_io  # noqa: E402

MODELS = {
    "lenet5": ["lenet5", "--batch", "4"],
    "resnet18": ["resnet18", "--batch", "4", "--image-size", "64",
                 "--classes", "10"],
    "se_resnext50": ["se_resnext50_32x4d", "--batch", "4", "--image-size",
                     "64", "--classes", "10"],
}
VARIANTS = {
    "default": [],
    "no-fuse": ["--no-fuse-elementwise"],
    "library": ["--no-expand-batch-norm", "--no-fuse-elementwise"],
}
TRAINING = "optimizer=momentum lr=0.05 momentum=0.9 weight-decay=1e-4"


def run(exe, steps, checkpoint):
    out = subprocess.run([exe, "--synthetic-size", "4", "--steps", str(steps),
                          "--test-data", "none", "--log-every", "1",
                          "--save", checkpoint], check=True,
                         capture_output=True, text=True).stdout
    return [float(m) for m in re.findall(r"^step \d+ +epoch \d+ +loss (\S+)",
                                         out, re.M)]


def main():
    work = sys.argv[1]
    failures = 0

    def report(ok, text):
        nonlocal failures
        print(("PASS" if ok else "FAIL") + ": " + text)
        failures += not ok

    for model, args in MODELS.items():
        mlir = os.path.join(work, model + ".mlir")
        subprocess.run(["fluid-models", *args, "-o", mlir], check=True)
        exes = {}
        for variant, flags in VARIANTS.items():
            exes[variant] = os.path.join(work, f"{model}-{variant}")
            subprocess.run(["fluid-compile", mlir, "--backend", "cpu",
                            "--quiet", "--training", TRAINING, "-o",
                            exes[variant], *flags], check=True)
        # Fusion: bitwise.
        ck = {v: os.path.join(work, f"{model}-{v}-2.safetensors")
              for v in ("default", "no-fuse")}
        for v in ck:
            run(exes[v], 2, ck[v])
        report(filecmp.cmp(ck["default"], ck["no-fuse"], shallow=False),
               f"{model}: fused and unfused regions give byte-equal "
               "checkpoints after 2 steps")
        # Expansion: within tolerance.
        ones = {}
        losses = {}
        for v in ("default", "library"):
            ones[v] = os.path.join(work, f"{model}-{v}-1.safetensors")
            losses[v] = run(exes[v], 1, ones[v])
        a = safetensors_io.load(ones["library"])
        b = safetensors_io.load(ones["default"])
        worst, where = 0.0, ""
        for key in sorted(a):
            x = np.asarray(a[key], np.float64)
            y = np.asarray(b[key], np.float64)
            scale = max(float(np.abs(x).max()) if x.size else 0.0, 1e-30)
            error = float(np.abs(x - y).max()) / scale if x.size else 0.0
            if error > worst:
                worst, where = error, key
        report(sorted(a) == sorted(b) and worst <= 1e-4,
               f"{model}: expanded batch norm vs the library kernel after 1 "
               f"step: worst {worst:.3g} of a tensor's max ({where}), "
               "tolerance 1e-4")
        la, lb = losses["library"][0], losses["default"][0]
        report(abs(la - lb) <= 1e-5 * abs(la),
               f"{model}: first loss {lb} vs {la}, tolerance 1e-5 relative")
    # Mixed precision: 16-bit values at the regions' edges, still bitwise;
    # and with every batch norm + ReLU output recomputed in the backward
    # pass (the batch norm's sums kernel rounds it to 16 bits and widens it
    # again itself), against none recomputed and unfused.
    mlir = os.path.join(work, "resnet18.mlir")
    variants = dict(VARIANTS)
    variants["recompute"] = ["--recompute-min-bytes", "0"]
    variants["no-recompute"] = ["--no-recompute-elementwise",
                                "--no-fuse-elementwise"]
    for precision in ("bf16", "fp16"):
        ck = {}
        for variant in ("default", "no-fuse", "recompute", "no-recompute"):
            exe = os.path.join(work, f"resnet18-{precision}-{variant}")
            subprocess.run(["fluid-compile", mlir, "--backend", "cpu",
                            "--quiet", "--training", TRAINING, "--precision",
                            precision, "-o", exe, *variants[variant]],
                           check=True)
            ck[variant] = exe + "-2.safetensors"
            run(exe, 2, ck[variant])
        report(filecmp.cmp(ck["default"], ck["no-fuse"], shallow=False),
               f"resnet18 {precision}: fused and unfused regions give "
               "byte-equal checkpoints after 2 steps")
        report(filecmp.cmp(ck["recompute"], ck["no-recompute"],
                           shallow=False),
               f"resnet18 {precision}: every activation recomputed (fused) "
               "and none (unfused) give byte-equal checkpoints after 2 steps")
    # SE-ResNeXt-50 in bf16: its blocks' batch norm outputs (the
    # squeeze-and-excitation product reads them back) are recomputed too.
    mlir = os.path.join(work, "se_resnext50.mlir")
    ck = {}
    for variant in ("recompute", "no-recompute"):
        exe = os.path.join(work, f"se_resnext50-bf16-{variant}")
        subprocess.run(["fluid-compile", mlir, "--backend", "cpu", "--quiet",
                        "--training", TRAINING, "--precision", "bf16", "-o",
                        exe, *variants[variant]], check=True)
        ck[variant] = exe + "-2.safetensors"
        run(exe, 2, ck[variant])
    report(filecmp.cmp(ck["recompute"], ck["no-recompute"], shallow=False),
           "se_resnext50 bf16: every activation recomputed (fused) and none "
           "(unfused) give byte-equal checkpoints after 2 steps")
    print(f"{failures} failed")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
