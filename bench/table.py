#!/usr/bin/env python3
"""Markdown tables from the JSON files of bench/resnet.sh.

  usage: table.py DIR            (every *.json and *.log there)
         table.py FILE.json ...  (these files; a missing one is a failed row)

Files are named MODEL-VARIANT.json (resnet50-fluid.json,
resnet50-fluid-profile.json, resnet50-torch-nchw.json,
resnet50-torch-channels_last.json, resnet50-torch-compile-nchw.json, ...).
A run with a log but no JSON, a JSON with "error", or a missing file is
printed as "failed" (with the last line of its log when there is one).

Table 1: model, system, images/s median (min-max), step ms median, peak
memory, and Fluid's ratios against each PyTorch row of the same model and
precision (bf16 rows against Fluid's bf16 row).
Table 2 (one per Fluid run with a non-empty "profile" list): op class,
ms/step, share of the profiled time, launches.
Only the standard library is used.
"""

import glob
import json
import os
import re
import sys

GIB = float(2 ** 30)

# File-name variants -> the system label used when the JSON lacks "system".
VARIANTS = [
    ("fluid-nhwc-bf16-profile", "fluid cuda nhwc bf16 (profiled, no graph)"),
    ("fluid-nhwc-bf16", "fluid cuda nhwc bf16"),
    ("fluid-nhwc-profile", "fluid cuda nhwc (profiled, no graph)"),
    ("fluid-nhwc", "fluid cuda nhwc"),
    ("fluid-bf16-profile", "fluid cuda bf16 (profiled, no graph)"),
    ("fluid-bf16", "fluid cuda bf16"),
    ("fluid-bf16-nodm", "fluid cuda bf16 (no --fluid-narrow-data-movement)"),
    ("torch-compile-channels_last-bf16", "torch.compile channels_last bf16"),
    ("torch-compile-nchw-bf16", "torch.compile nchw bf16"),
    ("torch-nchw-bf16", "torch eager nchw bf16"),
    ("torch-channels_last-bf16", "torch eager channels_last bf16"),
    ("fluid-unfused-profile", "fluid cuda unfused (profiled, no graph)"),
    ("fluid-unfused", "fluid cuda unfused"),
    ("fluid-profile", "fluid cuda (profiled, no graph)"),
    ("fluid", "fluid cuda"),
    ("torch-compile-channels_last", "torch.compile channels_last"),
    ("torch-compile-nchw", "torch.compile nchw"),
    ("torch-compile", "torch.compile nchw"),
    ("torch-channels_last", "torch eager channels_last"),
    ("torch-nchw", "torch eager nchw"),
]
SYSTEM_ORDER = ["fluid cuda nhwc", "fluid cuda", "fluid cuda unfused", "torch eager nchw", "torch eager channels_last",
                "torch.compile nchw", "torch.compile channels_last",
                "fluid cuda nhwc bf16", "fluid cuda bf16",
                "fluid cuda bf16 (no --fluid-narrow-data-movement)",
                "torch eager nchw bf16", "torch eager channels_last bf16",
                "torch.compile nchw bf16", "torch.compile channels_last bf16"]


def split_name(path):
    """(model, variant) from MODEL-VARIANT.json|log, or (stem, None)."""
    stem = os.path.basename(path)
    stem = re.sub(r"\.(json|log)$", "", stem)
    for variant, _ in VARIANTS:
        if stem.endswith("-" + variant):
            return stem[: -len(variant) - 1], variant
    # Other fluid programs (precision.sh's FLUID_BENCH_EXTRA_VARIANTS).
    extra = re.match(r"^(.*?)-(fluid-.+)$", stem)
    if extra:
        return extra.group(1), extra.group(2)
    return stem, None


def last_log_line(path):
    try:
        with open(path, errors="replace") as f:
            lines = [l.strip() for l in f.read().splitlines() if l.strip()]
    except OSError:
        return None
    return lines[-1] if lines else None


def md(text):
    return str(text).replace("|", "\\|").replace("\n", " ")


def shorten(text, n=90):
    text = str(text)
    return text if len(text) <= n else text[: n - 1] + "…"


class Run:
    def __init__(self, json_path):
        self.json_path = json_path
        self.model, self.variant = split_name(json_path)
        self.data = None
        self.failure = None
        log_path = re.sub(r"\.json$", "", json_path) + ".log"
        try:
            with open(json_path) as f:
                self.data = json.load(f)
        except FileNotFoundError:
            self.failure = "no JSON"
        except (OSError, ValueError) as e:
            self.failure = "bad JSON (%s)" % type(e).__name__
        if self.data is not None and not isinstance(self.data, dict):
            self.data, self.failure = None, "bad JSON (not an object)"
        d = self.data or {}
        if self.data is not None:
            if d.get("error"):
                self.failure = str(d["error"])
            elif self.num(d.get("images_per_s"), "median") is None:
                self.failure = "no images_per_s in JSON"
        if self.failure and self.failure.startswith(("no JSON", "bad JSON")):
            line = last_log_line(log_path)
            if line and line.startswith("skipped"):
                self.failure = line
            elif line:
                self.failure += ": " + line
        if d.get("model"):
            self.model = str(d["model"])
        elif self.variant is None and d.get("program"):
            self.model = os.path.splitext(os.path.basename(
                str(d["program"]).split()[0]))[0]
        self.system = d.get("system") or self.default_system()

    def default_system(self):
        d = self.data or {}
        for variant, label in VARIANTS:
            if variant == self.variant:
                if variant == "fluid":
                    if d.get("graph") is False:
                        label += " (no graph)"
                    if d.get("tf32") is False:
                        label += " (no TF32)"
                return label
        if self.variant and self.variant.startswith("fluid-"):
            return "fluid cuda " + self.variant[len("fluid-"):].replace(
                "-", " ")
        if "backend" in d:
            label = "fluid " + str(d["backend"])
            if d.get("graph") is False:
                label += " (no graph)"
            return label
        return "unknown (%s)" % os.path.basename(self.json_path)

    @staticmethod
    def num(obj, key):
        if isinstance(obj, dict):
            v = obj.get(key)
            if isinstance(v, (int, float)) and not isinstance(v, bool):
                return float(v)
        return None

    @property
    def ok(self):
        return self.failure is None

    @property
    def is_profile_run(self):
        return self.variant == "fluid-profile"

    @property
    def is_fluid(self):
        return self.system.startswith("fluid")

    def ips(self, key="median"):
        return self.num((self.data or {}).get("images_per_s"), key)

    def step_ms(self, key="median"):
        return self.num((self.data or {}).get("step_ms"), key)

    def peak(self, key="peak_memory_bytes"):
        return self.num(self.data, key)

    def profile(self):
        p = (self.data or {}).get("profile")
        return p if isinstance(p, list) and p else None


def fmt(v, spec, missing="—"):
    return missing if v is None else format(v, spec)


def ratio(a, b):
    if a is None or b is None or b == 0:
        return "—"
    return "%.2f×" % (a / b)


def precision_of(system):
    """The 16-bit precision named in a system label, or "" for f32/TF32."""
    for token in ("bf16", "fp16"):
        if re.search(r"\b%s\b" % token, system):
            return token
    return ""


def system_rank(system):
    try:
        return SYSTEM_ORDER.index(system)
    except ValueError:
        return len(SYSTEM_ORDER)


def collect(args):
    """JSON paths to read (existing or expected)."""
    paths = []
    for arg in args:
        if os.path.isdir(arg):
            stems = set()
            for p in glob.glob(os.path.join(arg, "*.json")) + \
                    glob.glob(os.path.join(arg, "*.log")):
                model, variant = split_name(p)
                if variant is not None:  # a benchmark run, not e.g. env.log
                    stems.add(re.sub(r"\.(json|log)$", "", p))
            # Models in the order they ran (earliest file first).
            first = {}
            for s in stems:
                model = split_name(s)[0]
                t = min(os.path.getmtime(p) for p in (s + ".json", s + ".log")
                        if os.path.exists(p))
                first[model] = min(t, first.get(model, t))
            paths += sorted((s + ".json" for s in stems),
                            key=lambda p: (first[split_name(p)[0]], p))
        else:
            paths.append(arg)
    seen, unique = set(), []
    for p in paths:
        if p not in seen:
            seen.add(p)
            unique.append(p)
    return unique


def main_table(runs, out):
    models = []
    for r in runs:
        if r.model not in models:
            models.append(r.model)
    out.append("| model | system | images/s median (min–max) | step ms "
               "median | peak memory GiB | fluid ÷ this, images/s | "
               "fluid ÷ this, memory |")
    out.append("| --- | --- | --- | --- | --- | --- | --- |")
    for model in models:
        rows = [r for r in runs if r.model == model and not r.is_profile_run]
        rows.sort(key=lambda r: (system_rank(r.system), r.system))
        for r in rows:
            # Ratios compare Fluid and PyTorch at the same precision.
            fluid = next((f for f in rows if f.is_fluid and f.ok and
                          precision_of(f.system) == precision_of(r.system)),
                         None)
            if not r.ok:
                out.append("| %s | %s | failed: %s | — | — | — | — |" % (
                    md(model), md(r.system), md(shorten(r.failure))))
                continue
            ips = "%.1f (%s–%s)" % (r.ips(), fmt(r.ips("min"), ".1f"),
                                    fmt(r.ips("max"), ".1f"))
            peak = r.peak()
            mem = fmt(None if peak is None else peak / GIB, ".2f")
            reserved = r.peak("peak_reserved_bytes")
            if reserved is not None:
                mem += " (reserved %.2f)" % (reserved / GIB)
            if r.is_fluid or fluid is None:
                rel_ips = rel_mem = "—"
            else:
                rel_ips = ratio(fluid.ips(), r.ips())
                rel_mem = ratio(fluid.peak(), r.peak())
            out.append("| %s | %s | %s | %s | %s | %s | %s |" % (
                md(model), md(r.system), ips, fmt(r.step_ms(), ".2f"), mem,
                rel_ips, rel_mem))


def profile_tables(runs, out):
    by_model = {}
    for r in runs:
        if r.ok and r.is_fluid and not r.is_profile_run:
            by_model.setdefault(r.model, r)
    for r in runs:
        if not r.is_fluid:
            continue
        if r.is_profile_run and not r.profile():
            out.append("")
            out.append("### %s: where a fluid step's time goes — %s" % (
                md(r.model), "failed: " + md(shorten(r.failure))
                if r.failure else "no profile in the JSON"))
            continue
        prof = r.profile()
        if not prof:
            continue
        d = r.data
        entries = []
        for e in prof:
            if not isinstance(e, dict):
                continue
            ms = Run.num(e, "ms_per_step")
            entries.append((str(e.get("class", "?")), ms,
                            e.get("launches")))
        entries.sort(key=lambda e: -(e[1] or 0.0))
        total = sum(e[1] or 0.0 for e in entries)
        out.append("")
        out.append("### %s: where a fluid step's time goes (%s)" % (
            md(r.model), md(os.path.basename(r.json_path))))
        notes = []
        if d.get("graph") is False:
            notes.append("no CUDA graph")
        if d.get("timed_steps") is not None:
            notes.append("%s timed steps" % d.get("timed_steps"))
        if r.step_ms() is not None:
            notes.append("measured step %.2f ms median in this run"
                         % r.step_ms())
        ref = by_model.get(r.model)
        if ref is not None and ref is not r and ref.step_ms() is not None:
            notes.append("%.2f ms in the %s run" % (ref.step_ms(), ref.system))
        if notes:
            out.append("")
            out.append("; ".join(notes) + ".")
        out.append("")
        out.append("| op class | ms/step | % of profiled | launches |")
        out.append("| --- | --- | --- | --- |")
        for cls, ms, launches in entries:
            share = "—" if ms is None or total <= 0 else \
                "%.1f%%" % (100.0 * ms / total)
            out.append("| %s | %s | %s | %s |" % (
                md(cls), fmt(ms, ".3f"), share,
                md(launches) if launches is not None else "—"))
        out.append("| **total** | **%.3f** | 100%% | |" % total)
        step = r.step_ms()
        if step is not None and step > 0:
            out.append("| (measured step − total) | %.3f | | |"
                       % (step - total))


def footnotes(runs, out):
    notes = set()
    for r in runs:
        d = r.data or {}
        if "torch_version" in d:
            parts = ["torch %s" % d["torch_version"]]
            for key, label in (("cuda_version", "CUDA"),
                               ("cudnn_version", "cuDNN"),
                               ("device_name", None),
                               ("model_source", "model from")):
                if d.get(key) is not None:
                    parts.append(("%s %s" % (label, d[key])) if label
                                 else str(d[key]))
            notes.add(", ".join(parts))
    out.append("")
    out.append("Peak memory: fluid = its peak device memory; torch = "
               "max_memory_allocated (max_memory_reserved in parentheses), "
               "since just before the warm-up. Ratios: fluid's median "
               "images/s and peak memory divided by that row's. PyTorch's "
               "inputs are pre-generated on the GPU (copies not timed); "
               "fluid's executables copy each batch from the host "
               "(overlapped with the step).")
    for n in sorted(notes):
        out.append("")
        out.append("PyTorch runs: " + md(n) + ".")


def main(argv):
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__)
        return 0 if argv else 2
    paths = collect(argv)
    if not paths:
        print("no benchmark JSON or log files in %s" % " ".join(argv))
        return 1
    runs = [Run(p) for p in paths]
    out = []
    main_table(runs, out)
    profile_tables(runs, out)
    footnotes(runs, out)
    print("\n".join(out))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
