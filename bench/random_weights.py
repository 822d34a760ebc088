#!/usr/bin/env python3
"""Stand-in weights for benchmarks on a machine the real ones cannot reach.

An imported model's weights (330 MB for vit_b_16) do not fit what travels
to the GPU machine; their statistics do. Two commands:

  random_weights.py manifest WEIGHTS.safetensors MANIFEST.json
      writes each tensor's name, dtype, shape, mean and standard deviation;
  random_weights.py make MANIFEST.json OUT.safetensors [--seed N]
      writes, for each float tensor, values drawn from a normal
      distribution of that mean and deviation (a constant where the
      deviation is 0; running variances made non-negative), and integer
      tensors as their rounded mean. Deterministic for a seed.

The loss then starts where a model of that initialization's scale starts,
not at the degenerate value of all-zero weights. Needs numpy only.
"""

import argparse
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "test", "lib"))
import safetensors_io  # noqa: E402


def manifest(args):
    tensors = safetensors_io.load(args.weights)
    entries = []
    for name, value in tensors.items():
        data = value.astype(np.float64)
        entries.append({"name": name, "dtype": str(value.dtype),
                        "shape": list(value.shape),
                        "mean": float(data.mean()) if data.size else 0.0,
                        "std": float(data.std()) if data.size else 0.0})
    with open(args.manifest, "w") as f:
        json.dump(entries, f, indent=0)
    print(f"{args.manifest}: {len(entries)} tensors, "
          f"{sum(int(np.prod(e['shape'])) for e in entries):,} values")


def make(args):
    try:
        with open(args.manifest) as f:
            entries = json.load(f)
    except (OSError, ValueError) as e:
        sys.exit(f"random_weights.py: cannot read {args.manifest}: {e}")
    rng = np.random.default_rng(args.seed)
    tensors = {}
    for e in entries:
        dtype = np.dtype(e["dtype"])
        shape = tuple(e["shape"])
        if dtype.kind != "f":
            tensors[e["name"]] = np.full(shape, round(e["mean"]), dtype)
            continue
        values = rng.normal(e["mean"], e["std"], shape) if e["std"] > 0 \
            else np.full(shape, e["mean"])
        if e["name"].endswith("running_var"):
            values = np.abs(values)
        tensors[e["name"]] = values.astype(dtype)
    safetensors_io.save(args.out, tensors)
    print(f"{args.out}: {len(tensors)} tensors drawn from {args.manifest} "
          f"(seed {args.seed})")


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="command", required=True)
    m = sub.add_parser("manifest", help="tensor statistics of a checkpoint")
    m.add_argument("weights")
    m.add_argument("manifest")
    m.set_defaults(run=manifest)
    k = sub.add_parser("make", help="random tensors from a manifest")
    k.add_argument("manifest")
    k.add_argument("out")
    k.add_argument("--seed", type=int, default=0)
    k.set_defaults(run=make)
    args = p.parse_args()
    args.run(args)


if __name__ == "__main__":
    main()
