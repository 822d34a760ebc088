#!/usr/bin/env python3
"""The memory table of bench/memory.sh, from the JSON files in DIR.

  usage: memory_table.py DIR

Files: NAME-fluid-VARIANT.json (the executable's --stats-json), NAME-
VARIANT.report.json (fluid-compile --memory-report, at compile time) and
NAME-torch-eager.json (bench/torch_resnet.py). Per configuration NAME, one
row per Fluid variant (base: no memory optimization; freed: freed at last
use; planned: one arena; recompute: the arena with activations recomputed
in the backward pass) and PyTorch eager: images/s median (min-max), peak
memory, the peak against PyTorch's, the speed against the base row, the
peak the compile-time report predicts (arena or temporaries, persistent
bytes, two batch slots, the cuDNN workspace the run held) and how far the
measured peak is from it, and the bytes each variant saved against the one
before it. Only the standard library is used.
"""

import glob
import json
import os
import re
import sys

GIB = float(2 ** 30)
VARIANTS = ["base", "freed", "planned", "recompute"]
LABELS = {
    "base": "fluid: no optimization",
    "freed": "fluid: free at last use",
    "planned": "fluid: planned arena",
    "recompute": "fluid: arena + recompute",
}


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def fmt(value, spec):
    return "—" if value is None else format(value, spec)


def predicted_peak(report, measured):
    """Bytes the report predicts the executable holds at its peak."""
    if not report or not measured:
        return None
    # The driver holds every parameter and optimizer state, the function's
    # buffers (arena or temporaries, results, constants), two batch slots
    # (arguments) and the workspace cuDNN was given.
    return (report["arena_bytes"] + report["persistent_bytes"] +
            2 * report.get("argument_bytes", 0) +
            measured.get("workspace_bytes", 0))


def main(directory):
    names = sorted({re.sub(r"-(fluid-.*|torch-eager)\.json$", "",
                           os.path.basename(p))
                    for p in glob.glob(os.path.join(directory, "*.json"))
                    if re.search(r"-(fluid-.*|torch-eager)\.json$", p)})
    out = ["# Memory: Fluid's policies against PyTorch eager", ""]
    out.append("| configuration | system | images/s median (min–max) | "
               "peak GiB | ÷ torch peak | speed ÷ base | predicted GiB | "
               "measured − predicted MiB | saved vs previous GiB |")
    out.append("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for name in names:
        torch = load(os.path.join(directory, name + "-torch-eager.json"))
        torch_peak = torch.get("peak_memory_bytes") if torch else None
        base_speed = None
        previous_peak = None
        rows = []
        for variant in VARIANTS:
            stats = load(os.path.join(directory,
                                      "%s-fluid-%s.json" % (name, variant)))
            report = load(os.path.join(directory,
                                       "%s-%s.report.json" % (name, variant)))
            if stats is None or "images_per_s" not in stats:
                rows.append("| %s | %s | failed or not run | | | | | | |"
                            % (name, LABELS[variant]))
                continue
            speed = stats["images_per_s"]
            peak = stats["peak_memory_bytes"]
            if variant == "base":
                base_speed = speed["median"]
            predicted = predicted_peak(report, stats)
            rows.append("| %s | %s | %s (%s–%s) | %s | %s | %s | %s | %s | %s |" % (
                name, LABELS[variant], fmt(speed["median"], ".1f"),
                fmt(speed["min"], ".1f"), fmt(speed["max"], ".1f"),
                fmt(peak / GIB, ".2f"),
                fmt(peak / torch_peak if torch_peak else None, ".2f") + "×",
                fmt(speed["median"] / base_speed if base_speed else None,
                    ".3f"),
                fmt(predicted / GIB if predicted else None, ".2f"),
                fmt((peak - predicted) / 2 ** 20 if predicted else None,
                    "+.1f"),
                fmt((previous_peak - peak) / GIB
                    if previous_peak is not None else None, ".2f")))
            previous_peak = peak
        if torch and "images_per_s" in torch:
            s = torch["images_per_s"]
            rows.append("| %s | torch eager | %s (%s–%s) | %s | 1.00× | | | | |" % (
                name, fmt(s["median"], ".1f"), fmt(s["min"], ".1f"),
                fmt(s["max"], ".1f"), fmt(torch_peak / GIB, ".2f")))
        else:
            rows.append("| %s | torch eager | failed or not run | | | | | | |"
                        % name)
        out.extend(rows)
    out.append("")
    out.append("Peak: Fluid's fluid_cuda_malloc/fluid_cuda_allocate peak plus "
               "the cuDNN workspace it held; PyTorch's "
               "torch.cuda.max_memory_allocated. Predicted: the compile-time "
               "report's arena (or peak of live temporaries, or all of them) "
               "plus persistent bytes, two batch slots and the workspace.")
    print("\n".join(out))


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
