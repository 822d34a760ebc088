"""Writes a small, learnable image dataset with PIL.

usage: make-images.py ROOT [--classes K] [--per-class N] [--seed S]
                      [--list FILE] [--npy PREFIX --size S]

ROOT/class<k>/img<i>.{jpg,png}: N images per class of random sizes (16 to
80 pixels a side) and aspect ratios, JPEG and PNG alternately, some gray;
class k is a noisy image of one hue, so a small network learns the classes
in a few steps. --list also writes FILE, a list file naming the same images
("PATH LABEL", paths relative to FILE's folder). --npy writes PREFIX-images.npy
(u8 [K * N, 3, S, S]: each image resized to S x S with PIL's bilinear filter)
and PREFIX-labels.npy (int64).
"""

import argparse
import os

import numpy as np
from PIL import Image

parser = argparse.ArgumentParser()
parser.add_argument("root")
parser.add_argument("--classes", type=int, default=4)
parser.add_argument("--per-class", type=int, default=16)
parser.add_argument("--seed", type=int, default=0)
parser.add_argument("--list")
parser.add_argument("--npy")
parser.add_argument("--size", type=int, default=32)
args = parser.parse_args()

rng = np.random.default_rng(args.seed)
hues = np.array([[230, 40, 40], [40, 200, 40], [40, 60, 230], [220, 220, 40],
                 [200, 40, 200], [40, 210, 210], [120, 120, 120],
                 [250, 150, 60]])
entries = []
for k in range(args.classes):
    folder = os.path.join(args.root, f"class{k}")
    os.makedirs(folder, exist_ok=True)
    for i in range(args.per_class):
        height, width = rng.integers(16, 81, 2)
        pixels = hues[k % len(hues)] + rng.normal(0, 30, (height, width, 3))
        image = Image.fromarray(np.clip(pixels, 0, 255).astype(np.uint8))
        if i % 5 == 4:
            image = image.convert("L")
        name = f"img{i}." + ("jpg" if i % 2 == 0 else "png")
        image.save(os.path.join(folder, name))
        entries.append((os.path.join(folder, name), k))

if args.list:
    base = os.path.dirname(os.path.abspath(args.list))
    with open(args.list, "w") as f:
        for path, label in entries:
            f.write(f"{os.path.relpath(os.path.abspath(path), base)} "
                    f"{label}\n")

if args.npy:
    images = np.stack([
        np.asarray(Image.open(path).convert("RGB").resize(
            (args.size, args.size), Image.BILINEAR)).transpose(2, 0, 1)
        for path, _ in entries])
    np.save(args.npy + "-images.npy", images)
    np.save(args.npy + "-labels.npy",
            np.array([label for _, label in entries], np.int64))
