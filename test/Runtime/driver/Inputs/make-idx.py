"""Writes a small learnable dataset as IDX files PREFIX-images.idx and
PREFIX-labels.idx: image i of label k (0 <= k < classes) is noise with a
bright horizontal band at rows 4 + 2k and 5 + 2k, so a linear classifier
separates the classes after a few steps.

usage: make-idx.py PREFIX COUNT SEED [--size S] [--classes K] [--max-label L]
--max-label writes L as the first label (more classes than the program has).
"""
import argparse
import struct

import numpy as np

parser = argparse.ArgumentParser()
parser.add_argument("prefix")
parser.add_argument("count", type=int)
parser.add_argument("seed", type=int)
parser.add_argument("--size", type=int, default=28)
parser.add_argument("--classes", type=int, default=10)
parser.add_argument("--max-label", type=int)
args = parser.parse_args()

rng = np.random.default_rng(args.seed)
labels = rng.integers(0, args.classes, size=args.count).astype(np.uint8)
if args.max_label is not None:
    labels[0] = args.max_label
images = rng.integers(0, 64, size=(args.count, args.size, args.size))
for i, label in enumerate(labels):
    row = min(4 + 2 * int(label), args.size - 2)
    images[i, row:row + 2, :] = 255
images = images.astype(np.uint8)

with open(args.prefix + "-images.idx", "wb") as f:
    f.write(struct.pack(">IIII", 0x803, args.count, args.size, args.size))
    f.write(images.tobytes())
with open(args.prefix + "-labels.idx", "wb") as f:
    f.write(struct.pack(">II", 0x801, args.count))
    f.write(labels.tobytes())
