"""Compiles and runs the executables of ../optimizer-passes-vs-cpu.test and
compares their checkpoints byte for byte. Arguments: MODEL.mlir, WORKDIR.
fluid-compile is found on PATH (lit's tools directory)."""

import filecmp
import os
import subprocess
import sys

SCHEDULE = "schedule=cosine total-steps=4 warmup-steps=2 warmup-start-factor=0.2"
OPTIMIZERS = {
    "sgd": "optimizer=sgd lr=0.05 weight-decay=1e-3",
    "momentum": "optimizer=momentum lr=0.05 momentum=0.9 weight-decay=1e-3",
    "nesterov": "optimizer=momentum lr=0.05 momentum=0.9 nesterov=true "
                "weight-decay=1e-3",
    "adamw": "optimizer=adamw lr=0.01 weight-decay=0.05",
}
VARIANTS = {
    "both": [],
    "no-fold": ["--no-fold-lr-math"],
    "no-group": ["--no-group-optimizer"],
}


def run(model, workdir, name, training, flags):
    exe = os.path.join(workdir, name)
    subprocess.run(["fluid-compile", model, "--backend", "cpu", "--quiet",
                    "--training", training + " " + SCHEDULE, "-o", exe]
                   + flags, check=True)
    checkpoint = exe + ".safetensors"
    subprocess.run([exe, "--synthetic-size", "32", "--steps", "5",
                    "--test-data", "none", "--save", checkpoint],
                   check=True, stdout=subprocess.DEVNULL)
    return checkpoint


def main():
    model, workdir = sys.argv[1], sys.argv[2]
    failures = 0
    for optimizer, training in OPTIMIZERS.items():
        variants = dict(VARIANTS)
        if optimizer == "sgd":
            variants["neither"] = ["--no-fold-lr-math", "--no-group-optimizer"]
        checkpoints = {v: run(model, workdir, f"{optimizer}-{v}", training, f)
                       for v, f in variants.items()}
        for variant, checkpoint in checkpoints.items():
            if variant == "both":
                continue
            same = filecmp.cmp(checkpoints["both"], checkpoint, shallow=False)
            print(f"{'PASS' if same else 'FAIL'}: {optimizer}: {variant} "
                  f"{'equals' if same else 'differs from'} both passes")
            failures += not same
    print(f"{failures} failed")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
