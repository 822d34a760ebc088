# The dialect's shape rules against PyTorch's, on random configurations:
# every result type PyTorch computes must verify, and every configuration
# PyTorch rejects (window larger than the padded input) must be rejected.
# RUN: %python %s

import random
import subprocess
import sys

import torch
import torch.nn.functional as F

rng = random.Random(1234)


def ty(shape, dtype="f32"):
    return "tensor<" + "".join(f"{d}x" for d in shape) + dtype + ">"


def arr(values):
    return "array<i64: " + ", ".join(str(v) for v in values) + ">"


def conv_case():
    groups = rng.choice([1, 1, 2, 4, 32])
    cin = groups * rng.randint(1, 3)
    cout = groups * rng.randint(1, 3)
    kh, kw = rng.randint(1, 5), rng.randint(1, 5)
    sh, sw = rng.randint(1, 3), rng.randint(1, 3)
    dh, dw = rng.randint(1, 3), rng.randint(1, 3)
    pad = [rng.randint(0, 3) for _ in range(4)]  # top, left, bottom, right
    n, h, w = rng.randint(1, 3), rng.randint(1, 17), rng.randint(1, 17)
    x = torch.zeros(n, cin, h, w)
    wt = torch.zeros(cout, cin // groups, kh, kw)
    try:
        xp = F.pad(x, (pad[1], pad[3], pad[0], pad[2]))
        y = F.conv2d(xp, wt, stride=(sh, sw), dilation=(dh, dw), groups=groups)
        out = list(y.shape)
    except RuntimeError:
        out = None
    attrs = (f"{{strides = {arr([sh, sw])}, padding = {arr(pad)}, "
             f"dilation = {arr([dh, dw])}, groups = {groups} : i64}}")
    args = [ty(x.shape), ty(wt.shape)]
    op = (f"fluid.conv2d %a0, %a1 {attrs} : ({args[0]}, {args[1]}) -> "
          f"{ty(out or [n, cout, 1, 1])}")
    return args, op, out


def pool_case():
    kind = rng.choice(["max", "avg"])
    kh, kw = rng.randint(1, 4), rng.randint(1, 4)
    sh, sw = rng.randint(1, 3), rng.randint(1, 3)
    # PyTorch pools only pad symmetrically, by at most half the kernel.
    ph, pw = rng.randint(0, kh // 2), rng.randint(0, kw // 2)
    dh, dw = (rng.randint(1, 2), rng.randint(1, 2)) if kind == "max" else (1, 1)
    ceil = rng.random() < 0.5
    n, c, h, w = rng.randint(1, 2), rng.randint(1, 3), rng.randint(1, 13), rng.randint(1, 13)
    x = torch.zeros(n, c, h, w)
    try:
        if kind == "max":
            y = F.max_pool2d(x, (kh, kw), (sh, sw), (ph, pw), (dh, dw), ceil_mode=ceil)
        else:
            y = F.avg_pool2d(x, (kh, kw), (sh, sw), (ph, pw), ceil_mode=ceil)
        out = list(y.shape)
        if min(out) <= 0:
            out = None
    except RuntimeError:
        out = None
    attrs = [f"kernel_size = {arr([kh, kw])}", f"strides = {arr([sh, sw])}",
             f"padding = {arr([ph, pw, ph, pw])}"]
    if kind == "max":
        attrs.append(f"dilation = {arr([dh, dw])}")
    if ceil:
        attrs.append("ceil_mode")
    op = (f"fluid.{kind}_pool2d %a0 {{{', '.join(attrs)}}} : {ty(x.shape)} -> "
          f"{ty(out or [n, c, 1, 1])}")
    return [ty(x.shape)], op, out


def broadcast_case():
    rank = rng.randint(0, 4)
    full = [rng.randint(1, 4) for _ in range(rank)]
    a = [d if rng.random() < 0.7 else 1 for d in full]
    b = [d if rng.random() < 0.7 else 1 for d in full][rng.randint(0, rank):]
    if rng.random() < 0.2 and b:
        b[0] += 1  # likely incompatible
    try:
        out = list(torch.broadcast_shapes(tuple(a), tuple(b)))
    except RuntimeError:
        out = None
    opname = rng.choice(["add", "sub", "mul", "div"])
    op = (f"fluid.{opname} %a0, %a1 : {ty(a)}, {ty(b)} -> "
          f"{ty(out if out is not None else a)}")
    return [ty(a), ty(b)], op, out


def matmul_case():
    batch = [rng.randint(1, 3)] if rng.random() < 0.4 else []
    m, k, n = rng.randint(1, 5), rng.randint(1, 5), rng.randint(1, 5)
    tl, tr = rng.random() < 0.5, rng.random() < 0.5
    a = batch + ([k, m] if tl else [m, k])
    b = batch + ([n, k] if tr else [k, n])
    if rng.random() < 0.2:
        b[-1 if tr else -2] += 1
    ta, tb = torch.zeros(a), torch.zeros(b)
    try:
        out = list(torch.matmul(ta.transpose(-1, -2) if tl else ta,
                                tb.transpose(-1, -2) if tr else tb).shape)
    except RuntimeError:
        out = None
    flags = [f for f, on in (("transpose_lhs", tl), ("transpose_rhs", tr)) if on]
    attrs = f" {{{', '.join(flags)}}}" if flags else ""
    op = f"fluid.matmul %a0, %a1{attrs} : {ty(a)}, {ty(b)} -> {ty(out or [1, 1])}"
    return [ty(a), ty(b)], op, out


def reduce_case():
    rank = rng.randint(1, 4)
    shape = [rng.randint(1, 4) for _ in range(rank)]
    axes = rng.sample(range(-rank, rank), rng.randint(1, rank))
    keep = rng.random() < 0.5
    try:
        if len({a % rank for a in axes}) != len(axes):
            raise RuntimeError("duplicate axis")
        out = list(torch.zeros(shape).sum(dim=axes, keepdim=keep).shape)
    except RuntimeError:
        out = None
    attrs = f"axes = {arr(axes)}" + (", keep_dims" if keep else "")
    opname = rng.choice(["mean", "reduce_sum"])
    op = f"fluid.{opname} %a0 {{{attrs}}} : {ty(shape)} -> {ty(out if out is not None else shape)}"
    return [ty(shape)], op, out


def run(module):
    return subprocess.run(["fluid-opt", "-", "-o", "/dev/null"], input=module,
                          capture_output=True, text=True)


def main():
    makers = [conv_case, pool_case, broadcast_case, matmul_case, reduce_case]
    valid, invalid = [], []
    for i in range(600):
        args, op, out = makers[i % len(makers)]()
        (valid if out is not None else invalid).append((args, op))

    # All valid cases in one module: one fluid-opt run.
    funcs = []
    for i, (args, op) in enumerate(valid):
        params = ", ".join(f"%a{j}: {t}" for j, t in enumerate(args))
        funcs.append(f"func.func @case{i}({params}) {{\n  %r = {op}\n  return\n}}")
    result = run("\n".join(funcs))
    if result.returncode != 0:
        print(result.stderr)
        print(f"FAIL: fluid-opt rejected shapes that PyTorch computes")
        return 1
    print(f"PASS {len(valid)} configurations PyTorch accepts verify with its shapes")

    failures = 0
    for args, op in invalid:
        params = ", ".join(f"%a{j}: {t}" for j, t in enumerate(args))
        r = run(f"func.func @f({params}) {{\n  %r = {op}\n  return\n}}")
        if r.returncode == 0 or "error:" not in r.stderr:
            print(f"FAIL: accepted a configuration PyTorch rejects: {op}")
            failures += 1
    print(f"PASS {len(invalid) - failures} of {len(invalid)} configurations "
          "PyTorch rejects are rejected")
    return 1 if failures else 0


sys.exit(main())
