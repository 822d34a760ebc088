# --fluid-expand-batch-norm against PyTorch on badly scaled inputs.
# RUN: rm -rf %t && mkdir -p %t
# RUN: %python %s %t
"""A hand-written function with one training fluid.batch_norm and its
fluid.batch_norm_grad is run by fluid-run three ways: by the cpu kernels
(unexpanded; statistics two-pass in double), after --fluid-expand-batch-norm
(shifted one-pass sums in the program's float type), and after
--fluid-expand-batch-norm --fluid-fuse-elementwise. Each run's eight outputs
(y, saved mean, saved inv_std, new running mean and variance, dx, dscale,
dshift) are compared with PyTorch: torch.native_batch_norm (saved mean,
saved inv_std = 1 / sqrt(biased var + eps)) and F.batch_norm(training=True,
momentum=0.1, eps=1e-5) with autograd of sum(y * g), in float64 on the very
same input values (a float32 case's inputs widened), and with the kernels'
run as a second oracle. PyTorch's own float32 CPU batch norm is no oracle
here: on these inputs its inv_std is ~700 u off and its y ~2e4 u (of |y|)
off what its own saved statistics give.

Inputs: [8, 4, 5, 6] with channels of mean 1e4 and std 1e-2, mean -3e3 and
std 10, N(0, 1), and a constant 7.25 (variance 0, so inv_std must be
1 / sqrt(eps) and y the shift); and [16, 3] with the first three channels.
The first channel's first element, the expansion's shift K, is 4 std off.
A plain one-pass E[x^2] - E[x]^2 loses all of the first channel's variance
in float32 and ~1e-4 of it in float64 (u mean^2 / var): every case also
feeds such a result (computed here in numpy) to the same checks, which must
reject it.

Bounds are in units of u, the unit roundoff of the case's type (2^-53 or
2^-24), per channel, with m, s, var, inv the exact (long double) mean, std,
biased variance and inv_std, xhat = (x - m) inv, and kappa = 1 + |m| inv
(1e6 for the first channel: rounding the saved mean to the type moves
every normalized value by up to u kappa, which no implementation that saves
its mean in the type avoids; in float32 the mean's ulp is 0.1 std there).
All three are 512 u (5.7e-14 in f64, 3.1e-5 in f32): above (M - 1) u =
239 u, the worst-case error of a sequential M-term sum relative to the sum
of the magnitudes, plus a few roundings. Measured worst errors are 51 u
(f64: the first channel's inv_std, its cancellation factor 17 times a few
u) and 7 u (f32), so a real regression (1e-4 relative, say, or a
cancellation) shows as thousands of u or more.
Each error may be 512 u times its scale:
- "stats", against PyTorch and against the kernels: saved mean |m| + s,
  inv_std inv, running mean 0.9 |rm| + 0.1 (|m| + s) and running variance
  0.9 |rv| + 0.1 var M / (M - 1) (the update's terms, since the update may
  cancel). The shifted variance's cancellation factor 1 + ((K - m) / s)^2
  (K the channel's first element) shows here.
- "own": y, dx, dscale, dshift against a long double recomputation from the
  run's own saved mean and inv_std (checked just above), so that kappa does
  not enter: max |y|, max |w inv g| (1 + max |xhat|), sum |g xhat'| (xhat'
  from the run's statistics; for the constant channel it is 0 when the
  saved mean is exact, and then no error is allowed) and sum |g|; also the
  constant channel's y, |b|, and inv_std, 1 / sqrt(eps).
- "end": the same outputs against PyTorch and the kernels: kappa (max |y| +
  |w|), kappa max |w inv g| (1 + max |xhat|), kappa (sum |g xhat| +
  sum |g|) and sum |g|, the saved mean's rounding carried through. Only
  here may the first channel's float32 outputs be off by ~1e-2 (relative),
  inherent as said above.
Each case prints its worst errors, in u, and fails on any error beyond its
bound.
"""

import os
import subprocess
import sys

import numpy as np
import torch
import torch.nn.functional as F

work = sys.argv[1]
EPS, MOMENTUM = 1e-5, 0.1
TOL_STATS, TOL_OWN, TOL_END = 512, 512, 512  # in units of u
NAMES = ["y", "mean", "inv_std", "running_mean", "running_var", "dx",
         "dscale", "dshift"]
VARIANTS = [("kernel", []),
            ("expanded", ["--fluid-expand-batch-norm"]),
            ("expanded+fused", ["--fluid-expand-batch-norm",
                                "--fluid-fuse-elementwise"])]
# Per-channel (mean, std) of the input.
CHANNELS = [(1e4, 1e-2), (-3e3, 10.0), (0.0, 1.0), (7.25, 0.0)]
L = np.longdouble


def make_inputs(shape, rng):
    channels = shape[1]
    x = np.empty(shape)
    for c, (mean, std) in enumerate(CHANNELS[:channels]):
        x[:, c] = mean + std * rng.standard_normal(x[:, c].shape)
    # The shift is each channel's first element: make the first channel's
    # an outlier, 4 std off (a cancellation factor 1 + 4^2 in the variance).
    x[(0, 0) + (0,) * (len(shape) - 2)] = CHANNELS[0][0] + 4 * CHANNELS[0][1]
    g = rng.standard_normal(shape)
    w = rng.uniform(0.5, 1.5, channels) * np.where(np.arange(channels) % 2,
                                                   -1, 1)
    b = rng.uniform(-0.5, 0.5, channels)
    rm = rng.uniform(-1, 1, channels)
    rv = rng.uniform(0.5, 2, channels)
    return [x, g, w, b, rm, rv]


def program(shape, t):
    big = "tensor<" + "x".join(map(str, shape)) + f"x{t}>"
    vec = f"tensor<{shape[1]}x{t}>"
    results = ", ".join([big] + [vec] * 4 + [big] + [vec] * 2)
    return f"""\
func.func @f(%x: {big}, %g: {big}, %w: {vec}, %b: {vec}, %rm: {vec}, %rv: {vec}) -> ({results}) {{
  %y, %mean, %inv, %nrm, %nrv = fluid.batch_norm %x, %w, %b, %rm, %rv {{epsilon = 1.0e-05 : f64, momentum = 1.0e-01 : f64}} : {big}, {vec}
  %dx, %dw, %db = fluid.batch_norm_grad %g, %x, %w, %mean, %inv : {big}, {vec}
  return %y, %mean, %inv, %nrm, %nrv, %dx, %dw, %db : {results}
}}
"""


def torch_oracle(arrays):
    """PyTorch in float64 on `arrays` (widened): the eight outputs."""
    x, g, w, b, rm, rv = [torch.tensor(a.astype(np.float64)) for a in arrays]
    _, saved_mean, saved_inv_std = torch.native_batch_norm(
        x, w, b, rm.clone(), rv.clone(), True, MOMENTUM, EPS)
    x.requires_grad_()
    w.requires_grad_()
    b.requires_grad_()
    y = F.batch_norm(x, rm, rv, w, b, training=True, momentum=MOMENTUM,
                     eps=EPS)
    (y * g).sum().backward()
    return [t.detach().numpy() for t in
            [y, saved_mean, saved_inv_std, rm, rv, x.grad, w.grad, b.grad]]


def axes_of(x):
    return tuple([0] + list(range(2, x.ndim)))


def per_channel(v, ndim):
    return v.reshape([1, -1] + [1] * (ndim - 2))


def own_reference(arrays, mean, inv_std):
    """y, dx, dscale, dshift in long double from the given statistics."""
    x, g, w, b = [a.astype(L) for a in arrays[:4]]
    mean, inv_std = mean.astype(L), inv_std.astype(L)
    axes, count = axes_of(x), x.size // x.shape[1]
    xhat = (x - per_channel(mean, x.ndim)) * per_channel(inv_std, x.ndim)
    y = xhat * per_channel(w, x.ndim) + per_channel(b, x.ndim)
    dshift = g.sum(axes)
    dscale = (g * xhat).sum(axes)
    dx = (g - per_channel(dshift / count, x.ndim)
          - xhat * per_channel(dscale / count, x.ndim)) * \
        per_channel(w * inv_std, x.ndim)
    return {"y": y, "dx": dx, "dscale": dscale, "dshift": dshift,
            "dscale scale": np.abs(g * xhat).sum(axes)}


def channel_max(v):
    return np.abs(v).max(axis=axes_of(v)) if v.ndim > 1 else np.abs(v)


def scales(arrays, oracle):
    """Per-channel scales of the errors (see the docstring): those of the
    statistics and of the outputs from the run's own statistics, and those
    of the outputs end to end."""
    x, g, w, b, rm, rv = [a.astype(np.float64) for a in arrays]
    axes, count = axes_of(x), x.size // x.shape[1]
    mean = x.astype(L).mean(axes)
    var = ((x - per_channel(mean, x.ndim)) ** 2).mean(axes)
    mean, var = mean.astype(np.float64), var.astype(np.float64)
    std, inv = np.sqrt(var), 1 / np.sqrt(var + EPS)
    xhat = (x - per_channel(mean, x.ndim)) * per_channel(inv, x.ndim)
    xhat_max = channel_max(xhat)
    g_sum, gx_sum = np.abs(g).sum(axes), np.abs(g * xhat).sum(axes)
    y_max = channel_max(oracle[0])
    dx = np.abs(w) * inv * channel_max(g) * (1 + xhat_max)
    own = {"mean": np.abs(mean) + std,
           "inv_std": inv,
           "running_mean": (1 - MOMENTUM) * np.abs(rm) +
           MOMENTUM * (np.abs(mean) + std),
           "running_var": (1 - MOMENTUM) * np.abs(rv) +
           MOMENTUM * var * count / (count - 1),
           "y": y_max, "dx": dx, "dshift": g_sum}
    kappa = 1 + np.abs(mean) * inv
    end = {"y": kappa * (y_max + np.abs(w)), "dx": kappa * dx,
           "dscale": kappa * (gx_sum + g_sum), "dshift": g_sum}
    return own, end


def errors(got, expected, scale):
    """The largest per-channel |got - expected| / scale."""
    diff = channel_max(np.abs(got.astype(L) - expected.astype(L)))
    # A zero scale allows no error at all.
    with np.errstate(divide="ignore", invalid="ignore"):
        return float(np.where(diff == 0, 0, diff / scale).max())


def run_variant(tag, shape, t, passes, input_args):
    source = os.path.join(work, f"{tag}.mlir")
    if not os.path.exists(source):
        open(source, "w").write(program(shape, t))
    name = tag + "-" + "-".join(p.lstrip("-") for p in passes)
    lowered = os.path.join(work, f"{name}.mlir")
    out = os.path.join(work, f"{name}-out")
    subprocess.run(["fluid-opt", source, *passes, "-o", lowered], check=True)
    # The passes must have done their work, or the run is the kernels'.
    text = open(lowered).read()
    expanded = "--fluid-expand-batch-norm" in passes
    for op in ("fluid.batch_norm ", "fluid.batch_norm_grad "):
        if (op in text) == expanded:
            raise RuntimeError(f"{op.strip()} {'left' if expanded else 'gone'}"
                               f" after {' '.join(passes) or 'no passes'}")
    if ("fluid.fusion" in text) != ("--fluid-fuse-elementwise" in passes):
        raise RuntimeError(f"fluid.fusion unexpected after {passes}")
    result = subprocess.run(["fluid-run", lowered, *input_args,
                             "--save-outputs", out],
                            capture_output=True, text=True)
    if result.returncode != 0:
        raise RuntimeError(f"fluid-run exited {result.returncode}: "
                           f"{result.stderr.strip()}")
    return [np.load(os.path.join(out, f"output{i}.npy")) for i in range(8)]


def check_case(got, oracle, kernel, arrays, u):
    """Returns the list of problems and the worst errors (in u) by group."""
    problems, worst = [], {}
    scale, end_scale = scales(arrays, oracle)

    def record(group, name, error, bound):
        if error / u > worst.get(group, (-1.0, ""))[0]:
            worst[group] = (error / u, name)
        if not error <= bound * u:  # also catches NaN
            problems.append(f"{group} {name}: {error / u:.3g} u > {bound} u")

    for i, name in enumerate(NAMES):
        if got[i].dtype != arrays[0].dtype or got[i].shape != oracle[i].shape:
            problems.append(f"{name}: {got[i].dtype}{list(got[i].shape)}")
            return problems, worst
    oracles = [("torch", oracle), ("kernel", kernel)]
    # The statistics, against PyTorch and against the kernels.
    for i, name in enumerate(NAMES):
        if name in ("mean", "inv_std", "running_mean", "running_var"):
            for what, expected in oracles:
                record("stats", f"{name} vs {what}",
                       errors(got[i], expected[i], scale[name]), TOL_STATS)
    # The constant channel: variance 0, inv_std = 1 / sqrt(eps), y = shift.
    if arrays[0].shape[1] == 4:
        record("stats", "constant channel inv_std",
               abs(float(got[2][3]) - 1 / np.sqrt(EPS)) * np.sqrt(EPS),
               TOL_STATS)
        record("own", "constant channel y",
               float(np.abs(got[0][:, 3].astype(np.float64) -
                            float(arrays[3][3])).max() / abs(arrays[3][3])),
               TOL_OWN)
    # The outputs, from the run's own statistics.
    own = own_reference(arrays, got[1], got[2])
    # dscale's from the run's xhat (the constant channel's may be exactly 0).
    own_scale = dict(scale, dscale=own["dscale scale"])
    for i, name in enumerate(NAMES):
        if name in own:
            record("own", name, errors(got[i], own[name], own_scale[name]),
                   TOL_OWN)
    # The outputs end to end, carrying the saved mean's rounding (kappa).
    for i, name in enumerate(NAMES):
        if name in own:
            for what, expected in oracles:
                record("end", f"{name} vs {what}",
                       errors(got[i], expected[i], end_scale[name]), TOL_END)
    return problems, worst


def naive_one_pass(arrays):
    """What a plain one-pass E[x^2] - E[x]^2 in the case's type returns."""
    x, g, w, b, rm, rv = arrays
    dtype, axes, count = x.dtype, axes_of(x), x.size // x.shape[1]
    mean = x.mean(axes, dtype=dtype)
    var = np.maximum((x * x).mean(axes, dtype=dtype) - mean * mean, 0)
    inv = (1 / np.sqrt(var + dtype.type(EPS))).astype(dtype)
    own = own_reference(arrays, mean, inv)
    running_mean = (1 - MOMENTUM) * rm + MOMENTUM * mean
    running_var = (1 - MOMENTUM) * rv + MOMENTUM * var * count / (count - 1)
    return [a.astype(dtype) for a in
            [own["y"], mean, inv, running_mean, running_var, own["dx"],
             own["dscale"], own["dshift"]]]


def summary(worst):
    return "; ".join(f"{group} worst {value:.3g} u ({name})"
                     for group, (value, name) in worst.items())


def main():
    rng = np.random.default_rng(20240607)
    failures = 0
    for shape in [(8, 4, 5, 6), (16, 3)]:
        inputs = make_inputs(shape, rng)
        for t, dtype in [("f64", np.float64), ("f32", np.float32)]:
            u = float(np.finfo(dtype).eps) / 2
            arrays = [a.astype(dtype) for a in inputs]
            tag = "x".join(map(str, shape)) + "-" + t
            input_args = []
            for i, a in enumerate(arrays):
                path = os.path.join(work, f"{tag}-in{i}.npy")
                np.save(path, a)
                input_args += ["--input", f"{i}={path}"]
            oracle = torch_oracle(arrays)
            outputs = {}
            for variant, passes in VARIANTS:
                label = f"{tag} {variant}"
                try:
                    outputs[variant] = run_variant(tag, shape, t, passes,
                                                   input_args)
                except (RuntimeError, subprocess.CalledProcessError) as e:
                    print(f"FAIL {label}: {e}")
                    failures += 1
                    continue
                if "kernel" not in outputs:
                    print(f"FAIL {label}: no kernel run to compare with")
                    failures += 1
                    continue
                problems, worst = check_case(outputs[variant], oracle,
                                             outputs["kernel"], arrays, u)
                if problems:
                    print(f"FAIL {label}: " + "; ".join(problems[:8]))
                    failures += 1
                else:
                    print(f"PASS {label}: {summary(worst)}")
            # The checks must reject the cancellation the shift avoids.
            if "kernel" in outputs:
                problems, worst = check_case(naive_one_pass(arrays), oracle,
                                             outputs["kernel"], arrays, u)
                if problems:
                    print(f"PASS {tag} plain one-pass variance rejected: "
                          f"{problems[0]}")
                else:
                    print(f"FAIL {tag} plain one-pass variance accepted: "
                          f"{summary(worst)}")
                    failures += 1
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
