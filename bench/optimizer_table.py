"""The ablation table of bench/optimizer.sh: one row per configuration
and variant from the runs' --stats-json files (step time with the CUDA
graph; launches per step and optimizer time per step from --profile),
then PyTorch's optimizer step. Usage: optimizer_table.py OUT-DIR."""

import glob
import json
import os
import sys

VARIANTS = [("both", "both passes"), ("nofold", "--no-fold-lr-math"),
            ("nogroup", "--no-group-optimizer"), ("neither", "neither")]


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def spread(s):
    return f"{s['median']:.2f} ({s['min']:.2f}-{s['max']:.2f})"


def main():
    out = sys.argv[1]
    names = sorted({os.path.basename(p).rsplit("-", 1)[0]
                    for p in glob.glob(os.path.join(out, "*-both.json"))})
    print("| config | variant | step ms median (min-max) | images/s median "
          "| launches/step | optimizer launches | optimizer ms/step "
          "| elementwise launches |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for name in names:
        for key, label in VARIANTS:
            run = load(os.path.join(out, f"{name}-{key}.json"))
            profile = load(os.path.join(out, f"{name}-{key}-profile.json"))
            if not run:
                print(f"| {name} | {label} | (no result) | | | | | |")
                continue
            classes = {c["class"]: c for c in (profile or {}).get("profile", [])}
            launches = sum(c["launches"] for c in classes.values())
            opt = classes.get("optimizer", {"launches": 0, "ms_per_step": 0})
            elem = classes.get("elementwise", {"launches": 0})
            print(f"| {name} | {label} | {spread(run['step_ms'])} "
                  f"| {run['images_per_s']['median']:.1f} "
                  f"| {launches if profile else '-'} | {opt['launches']} "
                  f"| {opt['ms_per_step']:.3f} | {elem['launches']} |")
    print()
    print("| config | PyTorch optimizer step | parameters | ms median (min-max) |")
    print("| --- | --- | --- | --- |")
    for name in names:
        torch = load(os.path.join(out, f"{name}-torch-optimizer.json"))
        for row in (torch or {}).get("rows", []):
            print(f"| {name} | SGD foreach={row['foreach']} "
                  f"| {torch['parameters']} | {row['median_ms']:.3f} "
                  f"({row['min_ms']:.3f}-{row['max_ms']:.3f}) |")


if __name__ == "__main__":
    main()
