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
