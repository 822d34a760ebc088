# Every gradient rule of --fluid-append-backward against PyTorch autograd,
# in float64: for each op, a small loss over trainable parameters is
# differentiated by the pass and run by fluid-run; the loss and each
# parameter's gradient must equal torch's to 1e-10 relative (infinities
# and NaNs where torch's are: pow's edge cases). Shapes are chosen to
# exercise broadcasting along every axis, transposed and batched products,
# strides, padding, dilation, groups and multiple uses; given values make
# ties (maximum, minimum), zeros (select's condition, pow's base and
# exponent) and NaNs (maximum) where the rules have their special cases.
# RUN: rm -rf %t && mkdir -p %t
# RUN: %python %s %t

import os
import subprocess
import sys

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
import safetensors_io  # noqa: E402

work = sys.argv[1]
torch.manual_seed(0)


def ty(shape):
    return "tensor<" + "".join(f"{d}x" for d in shape) + "f64>"


def check(name, params, body, torch_loss, given=None):
    """params: {name: shape}; body: MLIR computing %loss from %<name>
    values (dots in names become underscores); torch_loss: f(dict);
    given: {name: tensor} for values that are not random."""
    values = {k: torch.randn(s, dtype=torch.float64) for k, s in params.items()}
    values.update(given or {})
    decls = "\n".join(f"fluid.param @{k} : {ty(s)} init zeros"
                      for k, s in params.items())
    reads = "\n".join(f"  %{k} = fluid.get_param @{k} : {ty(s)}"
                      for k, s in params.items())
    program = (f"{decls}\nfunc.func @loss() -> tensor<f64> {{\n{reads}\n"
               f"{body}\n  return %loss : tensor<f64>\n}}\n")
    path = os.path.join(work, name)
    open(path + ".mlir", "w").write(program)
    safetensors_io.save(path + ".safetensors",
                        {k: v.numpy() for k, v in values.items()})
    step = subprocess.run(["fluid-opt", path + ".mlir",
                           "--fluid-append-backward"],
                          capture_output=True, text=True)
    if step.returncode != 0:
        print(f"FAIL {name}: {step.stderr}")
        return False
    open(path + "-grad.mlir", "w").write(step.stdout)
    run = subprocess.run(["fluid-run", path + "-grad.mlir", "--params",
                          path + ".safetensors", "--save-outputs",
                          path + "-out"], capture_output=True, text=True)
    if run.returncode != 0:
        print(f"FAIL {name}: {run.stderr}")
        return False

    leaves = {k: v.clone().requires_grad_(True) for k, v in values.items()}
    loss = torch_loss(leaves)
    loss.backward()
    ours = [np.load(os.path.join(path + "-out", f"output{i}.npy"))
            for i in range(len(params) + 1)]
    problems = []
    if not np.allclose(ours[0], loss.detach().numpy(), rtol=1e-10, atol=1e-12,
                       equal_nan=True):
        problems.append(f"loss {ours[0]} vs {loss.item()}")
    for i, k in enumerate(params):
        # A parameter the loss does not depend on has a zero gradient.
        grad = leaves[k].grad
        expected = np.zeros(params[k]) if grad is None else grad.numpy()
        if not np.allclose(ours[i + 1], expected, rtol=1e-10, atol=1e-12,
                           equal_nan=True):
            diff = np.abs(ours[i + 1] - expected).max()
            problems.append(f"grad of {k}: max |diff| {diff:.3g}")
    if problems:
        print(f"FAIL {name}: " + "; ".join(problems))
        return False
    print(f"PASS {name}")
    return True


def mean(value, shape):
    return f"  %loss = fluid.mean {value} : {ty(shape)} -> tensor<f64>"


cases = []

# Broadcasting binary ops along every axis, and a rank-0 operand.
for op, fn in [("add", torch.add), ("sub", torch.sub), ("mul", torch.mul),
               ("div", torch.div)]:
    for a, b in [((2, 3, 4), (2, 3, 4)), ((2, 3, 4), (3, 1)),
                 ((1, 3, 1), (2, 1, 4)), ((2, 3, 4), ()), ((4,), (2, 3, 4))]:
        out = tuple(torch.broadcast_shapes(a, b))
        body = (f"  %y = fluid.{op} %a, %b : {ty(a)}, {ty(b)} -> {ty(out)}\n"
                + mean("%y", out))
        if op == "div":
            # Keep the divisor away from zero.
            body = (f"  %e = fluid.exp %b : {ty(b)}\n"
                    f"  %y = fluid.div %a, %e : {ty(a)}, {ty(b)} -> {ty(out)}\n"
                    + mean("%y", out))
            cases.append((f"{op} {a} {b}", {"a": a, "b": b}, body,
                          lambda v: torch.div(v["a"], v["b"].exp()).mean()))
        else:
            cases.append((f"{op} {a} {b}", {"a": a, "b": b}, body,
                          lambda v, fn=fn: fn(v["a"], v["b"]).mean()))

# A value used several times: its gradients add up.
cases.append(("multiple uses", {"a": (3, 4)},
              f"  %s = fluid.mul %a, %a : {ty((3,4))}, {ty((3,4))} -> {ty((3,4))}\n"
              f"  %t = fluid.add %s, %a : {ty((3,4))}, {ty((3,4))} -> {ty((3,4))}\n"
              + mean("%t", (3, 4)),
              lambda v: (v["a"] * v["a"] + v["a"]).mean()))

# Unary ops.
for op, fn, pre in [("relu", F.relu, None), ("sigmoid", torch.sigmoid, None),
                    ("tanh", torch.tanh, None), ("neg", torch.neg, None),
                    ("exp", torch.exp, None), ("log", torch.log, "exp"),
                    ("sqrt", torch.sqrt, "exp"), ("erf", torch.erf, None)]:
    s = (2, 5)
    if pre:
        body = (f"  %p = fluid.{pre} %a : {ty(s)}\n  %y = fluid.{op} %p : {ty(s)}\n"
                + mean("%y", s))
        cases.append((op, {"a": s}, body,
                      lambda v, fn=fn: fn(v["a"].exp()).mean()))
    else:
        body = f"  %y = fluid.{op} %a : {ty(s)}\n" + mean("%y", s)
        cases.append((op, {"a": s}, body, lambda v, fn=fn: fn(v["a"]).mean()))

# Products: every transposition, batched.
for tl in (False, True):
    for tr in (False, True):
        a = (5, 3) if tl else (3, 5)
        b = (4, 5) if tr else (5, 4)
        flags = [f for f, on in (("transpose_lhs", tl), ("transpose_rhs", tr)) if on]
        attrs = f" {{{', '.join(flags)}}}" if flags else ""
        body = (f"  %y = fluid.matmul %a, %b{attrs} : {ty(a)}, {ty(b)} -> {ty((3,4))}\n"
                f"  %z = fluid.tanh %y : {ty((3,4))}\n" + mean("%z", (3, 4)))
        cases.append((f"matmul {flags}", {"a": a, "b": b}, body,
                      lambda v, tl=tl, tr=tr: torch.tanh(
                          (v["a"].T if tl else v["a"]) @
                          (v["b"].T if tr else v["b"])).mean()))
cases.append(("batched matmul", {"a": (2, 3, 5), "b": (2, 5, 4)},
              f"  %y = fluid.matmul %a, %b : {ty((2,3,5))}, {ty((2,5,4))} -> {ty((2,3,4))}\n"
              f"  %z = fluid.sigmoid %y : {ty((2,3,4))}\n" + mean("%z", (2, 3, 4)),
              lambda v: torch.sigmoid(v["a"] @ v["b"]).mean()))
cases.append(("linear", {"x": (3, 5), "w": (4, 5), "b": (4,)},
              f"  %y = fluid.linear %x, %w, %b : {ty((3,5))}, {ty((4,5))}, {ty((4,))} -> {ty((3,4))}\n"
              f"  %z = fluid.tanh %y : {ty((3,4))}\n" + mean("%z", (3, 4)),
              lambda v: torch.tanh(F.linear(v["x"], v["w"], v["b"])).mean()))

# Convolutions: stride, asymmetric padding, dilation, groups, bias.
for name, cin, cout, k, stride, pad, dil, groups in [
        ("conv plain", 3, 4, 3, 1, (0, 0, 0, 0), 1, 1),
        ("conv stride 2 pad", 4, 6, 3, 2, (1, 1, 1, 1), 1, 1),
        ("conv asymmetric pad", 2, 3, 3, 1, (0, 1, 2, 0), 1, 1),
        ("conv dilation", 2, 2, 3, 1, (2, 2, 2, 2), 2, 1),
        ("conv groups", 4, 6, 3, 1, (1, 1, 1, 1), 1, 2),
        ("conv depthwise", 4, 4, 3, 2, (1, 1, 1, 1), 1, 4)]:
    x, w, b = (2, cin, 7, 6), (cout, cin // groups, k, k), (cout,)
    xt = torch.zeros(x)
    y = tuple(F.conv2d(F.pad(xt, (pad[1], pad[3], pad[0], pad[2])),
                       torch.zeros(w), stride=stride, dilation=dil,
                       groups=groups).shape)
    attrs = (f"{{strides = array<i64: {stride}, {stride}>, padding = array<i64: "
             f"{', '.join(map(str, pad))}>, dilation = array<i64: {dil}, {dil}>, "
             f"groups = {groups} : i64}}")
    body = (f"  %y = fluid.conv2d %x, %w, %b {attrs} : ({ty(x)}, {ty(w)}, {ty(b)}) -> {ty(y)}\n"
            f"  %z = fluid.tanh %y : {ty(y)}\n" + mean("%z", y))
    cases.append((name, {"x": x, "w": w, "b": b}, body,
                  lambda v, s=stride, p=pad, d=dil, g=groups: torch.tanh(
                      F.conv2d(F.pad(v["x"], (p[1], p[3], p[0], p[2])), v["w"],
                               v["b"], stride=s, dilation=d, groups=g)).mean()))

# Batch norm (training form), 4-D and 2-D, with the running statistics.
for shape in [(3, 4, 5, 5), (6, 4)]:
    c = (4,)
    body = (f"  %y, %m, %i, %nm, %nv = fluid.batch_norm %x, %g, %b, %rm, %rv : {ty(shape)}, {ty(c)}\n"
            f"  %z = fluid.tanh %y : {ty(shape)}\n" + mean("%z", shape))
    cases.append((f"batch_norm {len(shape)}-D",
                  {"x": shape, "g": c, "b": c, "rm": c, "rv": c}, body,
                  lambda v: torch.tanh(F.batch_norm(
                      v["x"], v["rm"].detach().clone(),
                      v["rv"].detach().exp(), v["g"], v["b"],
                      training=True)).mean()))

# Pooling.
cases.append(("max_pool2d", {"x": (2, 3, 7, 8)},
              f"  %y = fluid.max_pool2d %x {{kernel_size = array<i64: 3, 3>, strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>, ceil_mode}} : {ty((2,3,7,8))} -> {ty((2,3,4,5))}\n"
              f"  %z = fluid.tanh %y : {ty((2,3,4,5))}\n" + mean("%z", (2, 3, 4, 5)),
              lambda v: torch.tanh(F.max_pool2d(v["x"], 3, 2, 1, ceil_mode=True)).mean()))
cases.append(("avg_pool2d", {"x": (2, 3, 7, 8)},
              f"  %y = fluid.avg_pool2d %x {{kernel_size = array<i64: 3, 3>, strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>}} : {ty((2,3,7,8))} -> {ty((2,3,4,4))}\n"
              f"  %z = fluid.tanh %y : {ty((2,3,4,4))}\n" + mean("%z", (2, 3, 4, 4)),
              lambda v: torch.tanh(F.avg_pool2d(v["x"], 3, 2, 1, count_include_pad=False)).mean()))
cases.append(("global_avg_pool", {"x": (2, 3, 4, 5)},
              f"  %y = fluid.global_avg_pool %x : {ty((2,3,4,5))} -> {ty((2,3,1,1))}\n"
              f"  %z = fluid.tanh %y : {ty((2,3,1,1))}\n" + mean("%z", (2, 3, 1, 1)),
              lambda v: torch.tanh(v["x"].mean((2, 3), keepdim=True)).mean()))

# Shapes, softmax, loss, reductions.
cases.append(("reshape and flatten", {"x": (2, 3, 4)},
              f"  %r = fluid.reshape %x : {ty((2,3,4))} -> {ty((6,4))}\n"
              f"  %t = fluid.tanh %r : {ty((6,4))}\n"
              f"  %f = fluid.flatten %t {{axis = 1 : i64}} : {ty((6,4))} -> {ty((6,4))}\n"
              + mean("%f", (6, 4)),
              lambda v: torch.tanh(v["x"].reshape(6, 4)).mean()))
cases.append(("concat", {"a": (2, 3), "b": (2, 5)},
              f"  %c = fluid.concat %a, %b {{axis = -1 : i64}} : ({ty((2,3))}, {ty((2,5))}) -> {ty((2,8))}\n"
              f"  %t = fluid.tanh %c : {ty((2,8))}\n" + mean("%t", (2, 8)),
              lambda v: torch.tanh(torch.cat([v["a"], v["b"]], -1)).mean()))
cases.append(("transpose", {"x": (2, 3, 4, 5), "w": (4, 2, 5, 3)},
              f"  %p = fluid.transpose %x {{permutation = array<i64: 2, 0, 3, 1>}} : {ty((2,3,4,5))} -> {ty((4,2,5,3))}\n"
              f"  %m = fluid.mul %p, %w : {ty((4,2,5,3))}, {ty((4,2,5,3))} -> {ty((4,2,5,3))}\n"
              f"  %t = fluid.tanh %m : {ty((4,2,5,3))}\n" + mean("%t", (4, 2, 5, 3)),
              lambda v: torch.tanh(v["x"].permute(2, 0, 3, 1) * v["w"]).mean()))
cases.append(("softmax", {"x": (3, 5)},
              f"  %s = fluid.softmax %x {{axis = 0 : i64}} : {ty((3,5))}\n"
              f"  %t = fluid.tanh %s : {ty((3,5))}\n" + mean("%t", (3, 5)),
              lambda v: torch.tanh(torch.softmax(v["x"], 0)).mean()))
cases.append(("log_softmax", {"x": (3, 5)},
              f"  %s = fluid.log_softmax %x : {ty((3,5))}\n"
              f"  %t = fluid.tanh %s : {ty((3,5))}\n" + mean("%t", (3, 5)),
              lambda v: torch.tanh(torch.log_softmax(v["x"], -1)).mean()))
LABELS = [2, 0, 4]
labels_body = "  %labels = fluid.constant dense<[2, 0, 4]> : tensor<3xi64>\n"
for reduction in ["mean", "sum"]:
    attr = "" if reduction == "mean" else " {reduction = #fluid<reduction sum>}"
    cases.append((f"softmax_cross_entropy {reduction}", {"x": (3, 5)},
                  labels_body +
                  f"  %loss = fluid.softmax_cross_entropy %x, %labels{attr} : {ty((3,5))}, tensor<3xi64> -> tensor<f64>",
                  lambda v, r=reduction: F.cross_entropy(
                      v["x"], torch.tensor(LABELS), reduction=r)))
cases.append(("softmax_cross_entropy none", {"x": (3, 5)},
              labels_body +
              f"  %l = fluid.softmax_cross_entropy %x, %labels {{reduction = #fluid<reduction none>}} : {ty((3,5))}, tensor<3xi64> -> {ty((3,))}\n"
              f"  %t = fluid.tanh %l : {ty((3,))}\n" + mean("%t", (3,)),
              lambda v: torch.tanh(F.cross_entropy(
                  v["x"], torch.tensor(LABELS), reduction="none")).mean()))
cases.append(("reduce_sum and mean over axes", {"x": (2, 3, 4)},
              f"  %s = fluid.reduce_sum %x {{axes = array<i64: 0, -1>}} : {ty((2,3,4))} -> {ty((3,))}\n"
              f"  %t = fluid.tanh %s : {ty((3,))}\n"
              f"  %m = fluid.mean %x {{axes = array<i64: 1>, keep_dims}} : {ty((2,3,4))} -> {ty((2,1,4))}\n"
              f"  %u = fluid.tanh %m : {ty((2,1,4))}\n"
              f"  %a = fluid.mean %t : {ty((3,))} -> tensor<f64>\n"
              f"  %b = fluid.mean %u : {ty((2,1,4))} -> tensor<f64>\n"
              f"  %loss = fluid.add %a, %b : tensor<f64>, tensor<f64> -> tensor<f64>",
              lambda v: torch.tanh(v["x"].sum((0, 2))).mean()
              + torch.tanh(v["x"].mean(1, keepdim=True)).mean()))


def halves(shape):
    """Multiples of 1/2 in [-1, 1]: maximum and minimum of two such tensors
    tie often."""
    return torch.randint(-2, 3, shape, dtype=torch.float64) / 2


def ties(a, b):
    x, y = torch.broadcast_tensors(a, b)
    return int((x == y).sum())


# maximum and minimum: the gradient of the operand that is the result,
# half of it to each where they tie, summed over broadcast dimensions.
for op, fn in [("maximum", torch.maximum), ("minimum", torch.minimum)]:
    for a, b in [((2, 3, 4), (2, 3, 4)), ((2, 3, 4), (3, 1)),
                 ((1, 3, 1), (2, 1, 4)), ((2, 3, 4), ())]:
        out = tuple(torch.broadcast_shapes(a, b))
        body = (f"  %y = fluid.{op} %a, %b : {ty(a)}, {ty(b)} -> {ty(out)}\n"
                f"  %t = fluid.tanh %y : {ty(out)}\n" + mean("%t", out))
        torch_loss = lambda v, fn=fn: torch.tanh(fn(v["a"], v["b"])).mean()
        cases.append((f"{op} {a} {b}", {"a": a, "b": b}, body, torch_loss))
        given = {"a": halves(a), "b": halves(b)}
        assert ties(given["a"], given["b"]) > 0
        cases.append((f"{op} ties {a} {b}", {"a": a, "b": b}, body,
                      torch_loss, given))
    # A NaN operand makes the result NaN and takes all of the gradient, as
    # does the other operand; the product keeps the gradient finite.
    nan = {"a": torch.tensor([1.0, float("nan"), 2.0, 0.5],
                             dtype=torch.float64),
           "b": torch.tensor([0.5, 1.0, float("nan"), 0.5],
                             dtype=torch.float64),
           "w": torch.tensor([1.0, 2.0, 3.0, 4.0], dtype=torch.float64)}
    cases.append((f"{op} NaN", {"a": (4,), "b": (4,), "w": (4,)},
                  f"  %y = fluid.{op} %a, %b : {ty((4,))}, {ty((4,))} -> {ty((4,))}\n"
                  f"  %p = fluid.mul %y, %w : {ty((4,))}, {ty((4,))} -> {ty((4,))}\n"
                  + mean("%p", (4,)),
                  lambda v, fn=fn: (fn(v["a"], v["b"]) * v["w"]).mean(), nan))

# select: on_true's gradient where the condition is nonzero, on_false's
# elsewhere, the condition's zero; broadcasting all three.
cond = torch.tensor([[0.0], [1.5], [-2.0]], dtype=torch.float64)
cases.append(("select", {"c": (3, 1), "a": (2, 3, 4), "b": (4,)},
              f"  %y = fluid.select %c, %a, %b : {ty((3,1))}, {ty((2,3,4))}, {ty((4,))} -> {ty((2,3,4))}\n"
              f"  %t = fluid.tanh %y : {ty((2,3,4))}\n" + mean("%t", (2, 3, 4)),
              lambda v: torch.tanh(torch.where(v["c"] != 0, v["a"],
                                               v["b"])).mean(),
              {"c": cond}))

# greater_equal and floor are piecewise constant: zero gradient.
cases.append(("greater_equal", {"a": (2, 3, 4), "b": (3, 1)},
              f"  %g = fluid.greater_equal %a, %b : {ty((2,3,4))}, {ty((3,1))} -> {ty((2,3,4))}\n"
              f"  %y = fluid.mul %g, %a : {ty((2,3,4))}, {ty((2,3,4))} -> {ty((2,3,4))}\n"
              + mean("%y", (2, 3, 4)),
              lambda v: ((v["a"] >= v["b"]).double() * v["a"]).mean()))
cases.append(("floor", {"a": (3, 4)},
              f"  %f = fluid.floor %a : {ty((3,4))}\n"
              f"  %y = fluid.mul %f, %a : {ty((3,4))}, {ty((3,4))} -> {ty((3,4))}\n"
              + mean("%y", (3, 4)),
              lambda v: (torch.floor(v["a"]) * v["a"]).mean(),
              {"a": 3 * torch.randn(3, 4, dtype=torch.float64)}))

# pow: both operands, broadcast, on a positive base.
cases.append(("pow (2, 3) (2, 1)", {"a": (2, 3), "b": (2, 1)},
              f"  %x = fluid.exp %a : {ty((2,3))}\n"
              f"  %y = fluid.pow %x, %b : {ty((2,3))}, {ty((2,1))} -> {ty((2,3))}\n"
              f"  %t = fluid.tanh %y : {ty((2,3))}\n" + mean("%t", (2, 3)),
              lambda v: torch.tanh(torch.pow(v["a"].exp(), v["b"])).mean()))
# PyTorch's special cases: no base gradient where the exponent is 0, no
# exponent gradient where the base is 0 and the exponent >= 0; elsewhere
# the formulas, infinite (0^-1) or NaN (log(-2)) as they are.
cases.append(("pow special cases", {"x": (7,), "e": (7,)},
              f"  %y = fluid.pow %x, %e : {ty((7,))}, {ty((7,))} -> {ty((7,))}\n"
              + mean("%y", (7,)),
              lambda v: torch.pow(v["x"], v["e"]).mean(),
              {"x": torch.tensor([0.0, 0.0, 0.0, 2.0, -2.0, 3.0, 0.0],
                                 dtype=torch.float64),
               "e": torch.tensor([0.0, 2.0, 0.5, 0.0, 2.0, -1.5, -1.0],
                                 dtype=torch.float64)}))
# A constant exponent (no gradient for it), 0 included; a constant base.
for exponent in ["2.5", "0.0", "2.0"]:
    cases.append((f"pow constant exponent {exponent}", {"a": (2, 3)},
                  f"  %e = fluid.constant dense<{exponent}> : tensor<f64>\n"
                  f"  %y = fluid.pow %a, %e : {ty((2,3))}, tensor<f64> -> {ty((2,3))}\n"
                  f"  %t = fluid.tanh %y : {ty((2,3))}\n" + mean("%t", (2, 3)),
                  lambda v, e=float(exponent): torch.tanh(
                      torch.pow(v["a"], e)).mean(),
                  {"a": torch.tensor([[0.0, 1.5, 0.7], [2.0, 0.0, 1.1]],
                                     dtype=torch.float64)}))
cases.append(("pow constant base", {"a": (2, 3)},
              "  %two = fluid.constant dense<2.0> : tensor<f64>\n"
              f"  %y = fluid.pow %two, %a : tensor<f64>, {ty((2,3))} -> {ty((2,3))}\n"
              f"  %t = fluid.tanh %y : {ty((2,3))}\n" + mean("%t", (2, 3)),
              lambda v: torch.tanh(torch.pow(2.0, v["a"])).mean()))

# broadcast_to and sum_to, each the other's gradient.
cases.append(("broadcast_to", {"a": (3, 1), "w": (2, 3, 4)},
              f"  %b = fluid.broadcast_to %a : {ty((3,1))} -> {ty((2,3,4))}\n"
              f"  %y = fluid.mul %b, %w : {ty((2,3,4))}, {ty((2,3,4))} -> {ty((2,3,4))}\n"
              f"  %t = fluid.tanh %y : {ty((2,3,4))}\n" + mean("%t", (2, 3, 4)),
              lambda v: torch.tanh(v["a"].expand(2, 3, 4) * v["w"]).mean()))
cases.append(("sum_to", {"x": (2, 3, 4)},
              f"  %s = fluid.sum_to %x : {ty((2,3,4))} -> {ty((3,1))}\n"
              f"  %t = fluid.tanh %s : {ty((3,1))}\n" + mean("%t", (3, 1)),
              lambda v: torch.tanh(v["x"].sum((0, 2)).unsqueeze(1)).mean()))

# slice: at the start, in the middle, at the end and whole, along the
# first and the last axis; a channel split (two slices of one value,
# rejoined the other way round, as shufflenet's).
for axis, offset, size in [(0, 0, 2), (1, 1, 2), (2, 3, 2), (1, 0, 4),
                           (2, 0, 5)]:
    shape = (3, 4, 5)
    out = tuple(size if d == axis else n for d, n in enumerate(shape))
    index = tuple(slice(offset, offset + size) if d == axis else slice(None)
                  for d in range(3))
    cases.append((f"slice axis {axis} offset {offset} size {size}",
                  {"x": shape},
                  f"  %s = fluid.slice %x {{axis = {axis} : i64, offset = {offset} : i64}} : {ty(shape)} -> {ty(out)}\n"
                  f"  %t = fluid.tanh %s : {ty(out)}\n" + mean("%t", out),
                  lambda v, i=index: torch.tanh(v["x"][i]).mean()))
cases.append(("channel split", {"x": (2, 6, 3), "w": (2, 6, 3)},
              f"  %a = fluid.slice %x {{axis = 1 : i64, offset = 0 : i64}} : {ty((2,6,3))} -> {ty((2,3,3))}\n"
              f"  %b = fluid.slice %x {{axis = 1 : i64, offset = 3 : i64}} : {ty((2,6,3))} -> {ty((2,3,3))}\n"
              f"  %t = fluid.tanh %b : {ty((2,3,3))}\n"
              f"  %c = fluid.concat %t, %a {{axis = 1 : i64}} : ({ty((2,3,3))}, {ty((2,3,3))}) -> {ty((2,6,3))}\n"
              f"  %y = fluid.mul %c, %w : {ty((2,6,3))}, {ty((2,6,3))} -> {ty((2,6,3))}\n"
              f"  %u = fluid.tanh %y : {ty((2,6,3))}\n" + mean("%u", (2, 6, 3)),
              lambda v: torch.tanh(torch.cat([torch.tanh(v["x"][:, 3:]),
                                              v["x"][:, :3]], 1)
                                   * v["w"]).mean()))

# gather: repeated indices (their gradients add up), unused rows (zero
# gradient), along the first, a middle and the last axis, i64 and i32
# indices; a table read by two gathers and directly (swin's relative
# position bias reads its table through one gather per block).
for axis, picks, dtype in [(0, [3, 0, 3, 3, 1], "i64"), (1, [1, 1], "i32"),
                           (2, [4, 0, 2, 0, 4, 1], "i64")]:
    shape = (4, 3, 5)
    out = tuple(len(picks) if d == axis else n for d, n in enumerate(shape))
    itype = f"tensor<{len(picks)}x{dtype}>"
    cases.append((f"gather axis {axis} {dtype}", {"x": shape},
                  f"  %i = fluid.constant dense<{picks}> : {itype}\n"
                  f"  %g = fluid.gather %x, %i {{axis = {axis} : i64}} : "
                  f"({ty(shape)}, {itype}) -> {ty(out)}\n"
                  f"  %t = fluid.tanh %g : {ty(out)}\n" + mean("%t", out),
                  lambda v, a=axis, p=picks: torch.tanh(
                      v["x"].index_select(a, torch.tensor(p))).mean()))
table, rows = ty((6, 2)), ty((4, 2))
cases.append(("gather twice", {"table": (6, 2), "w": (4, 2)},
              "  %i = fluid.constant dense<[5, 0, 5, 2]> : tensor<4xi64>\n"
              "  %j = fluid.constant dense<[1, 5, 5, 5]> : tensor<4xi64>\n"
              f"  %a = fluid.gather %table, %i {{axis = 0 : i64}} : ({table}, tensor<4xi64>) -> {rows}\n"
              f"  %b = fluid.gather %table, %j {{axis = 0 : i64}} : ({table}, tensor<4xi64>) -> {rows}\n"
              f"  %c = fluid.mul %a, %b : {rows}, {rows} -> {rows}\n"
              f"  %d = fluid.mul %c, %w : {rows}, {rows} -> {rows}\n"
              f"  %e = fluid.tanh %table : {table}\n"
              f"  %m1 = fluid.mean %d : {rows} -> tensor<f64>\n"
              f"  %m2 = fluid.mean %e : {table} -> tensor<f64>\n"
              "  %loss = fluid.add %m1, %m2 : tensor<f64>, tensor<f64> -> tensor<f64>",
              lambda v: (v["table"][[5, 0, 5, 2]] * v["table"][[1, 5, 5, 5]]
                         * v["w"]).mean() + torch.tanh(v["table"]).mean()))

ok = all([check(name.replace(" ", "_").replace("(", "").replace(")", "")
                .replace(",", "").replace("'", "").replace("[", "")
                .replace("]", ""), *case)
          for name, *case in cases])
sys.exit(0 if ok else 1)
