"""Shared by the passes' differential tests on the cpu backend
(test/Passes/*-vs-cpu.py): a tool run whose failure ends the test, and the
bitwise comparison of the same steps run with and without a pass."""

import subprocess
import sys

import safetensors_io


def run(*args):
    """Runs a tool; exits with its error output if it fails. Returns what
    it printed, standard output then standard error."""
    done = subprocess.run(args, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit("%s failed (%d):\n%s" % (" ".join(args), done.returncode,
                                          done.stderr))
    return done.stdout + done.stderr


def compare_bitwise(label, out, saved, problems):
    """Compares two runs of fluid-run, "on" and "off" (with and without the
    pass): `out` holds what each printed, `saved` the safetensors file each
    wrote with --save-params. Every difference in the printed text or in
    any tensor's dtype or bytes is appended to `problems`, prefixed with
    `label`. Returns the number of tensors compared."""
    if out["on"] != out["off"]:
        problems.append(f"{label}: outputs differ:\n{out['on']}\n"
                        f"{out['off']}")
    after = {v: safetensors_io.load(saved[v]) for v in ("on", "off")}
    for name, value in after["off"].items():
        got = after["on"].get(name)
        if got is None or got.dtype != value.dtype or \
                got.tobytes() != value.tobytes():
            problems.append(f"{label}: {name} differs after the step")
    for name in after["on"].keys() - after["off"].keys():
        problems.append(f"{label}: {name} only with the pass")
    return len(after["off"])


def with_and_without(model, passes, flag, base):
    """Builds BASE-off.mlir (fluid-opt `passes` on `model`) and BASE-on.mlir
    (the pass `flag` on that); returns their text, {"on": ..., "off": ...}."""
    run("fluid-opt", model, *passes, "-o", base + "-off.mlir")
    run("fluid-opt", base + "-off.mlir", flag, "-o", base + "-on.mlir")
    ir = {}
    for variant in ("on", "off"):
        with open(f"{base}-{variant}.mlir") as f:
            ir[variant] = f.read()
    return ir


def run_with_and_without(base, *args):
    """fluid-run of BASE-on.mlir and BASE-off.mlir with `args`, each saving
    its parameters to BASE-on/off.safetensors: (what each printed, the
    files), as compare_bitwise takes them."""
    out, saved = {}, {}
    for variant in ("on", "off"):
        saved[variant] = f"{base}-{variant}.safetensors"
        out[variant] = run("fluid-run", f"{base}-{variant}.mlir", *args,
                           "--save-params", saved[variant])
    return out, saved
