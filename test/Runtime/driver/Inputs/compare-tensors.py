"""Compares tensors of safetensors files and prints "ok", or exits with the
first difference.

usage: compare-tensors.py FILE [--same NAME=OTHER_FILE]...
                               [--differ NAME=OTHER_FILE]...
                               [--value NAME=NUMBER]... [--zero NAME]...
                               [--only NAME,NAME,...]

--same: tensor NAME of FILE equals tensor NAME of OTHER_FILE, bit for bit
(NAME '*': every tensor of OTHER_FILE); --differ: it does not; --value:
every element of NAME is NUMBER; --zero: every element is 0; --only:
FILE holds exactly these tensors.
"""
import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "..", "lib"))
import safetensors_io  # noqa: E402

parser = argparse.ArgumentParser()
parser.add_argument("file")
parser.add_argument("--same", action="append", default=[])
parser.add_argument("--differ", action="append", default=[])
parser.add_argument("--value", action="append", default=[])
parser.add_argument("--zero", action="append", default=[])
parser.add_argument("--only")
args = parser.parse_args()

tensors = safetensors_io.load(args.file)


def tensor(name):
    if name not in tensors:
        sys.exit(f"{args.file} has no tensor '{name}' (it has "
                 f"{', '.join(sorted(tensors))})")
    return tensors[name]


def identical(a, b):
    return a.dtype == b.dtype and a.shape == b.shape and \
        a.tobytes() == b.tobytes()


for spec in args.same + args.differ:
    name, other_path = spec.split("=", 1)
    other = safetensors_io.load(other_path)
    names = sorted(other) if name == "*" else [name]
    for n in names:
        same = identical(tensor(n), other[n])
        if spec in args.same and not same:
            sys.exit(f"'{n}' differs from {other_path}'s")
        if spec in args.differ and same:
            sys.exit(f"'{n}' equals {other_path}'s")
for spec in args.value:
    name, number = spec.split("=", 1)
    if not (tensor(name) == float(number)).all():
        sys.exit(f"'{name}' is {tensor(name)}, not {number}")
for name in args.zero:
    if np.any(tensor(name) != 0):
        sys.exit(f"'{name}' is not all zero")
if args.only is not None and sorted(tensors) != sorted(args.only.split(",")):
    sys.exit(f"{args.file} holds {', '.join(sorted(tensors))}")
print("ok")
