# RUN: %python %s %fluid_runtime_lib
# REQUIRES: gpu
"""The cuda backend's grouped optimizer updates (fluid_cuda_sgd_group,
_momentum_group, _adam_group: one multi-tensor kernel per call) against
the cpu's grouped updates: five updates in a row over groups of entries
of sizes around the kernel's chunk (chunk - 1, chunk, chunk + 1, several
chunks, and small ones down to rank 0 and no elements; and a group of
more chunks than the grid has blocks, whose blocks loop), aligned entries
mixed with unaligned ones (every tensor, or only the gradient, at an odd
address: the element-by-element path), f32 and f64, in place and into
separate outputs. sgd and momentum must be bitwise equal to the cpu; adam
within gpu-optimizer.py's tolerance, and bitwise equal to fluid_cuda_adam
called per entry (the same per-element code).

The device table cache (per call site): a site called again after an
entry's buffer moved, or after an entry was reshaped in place, gives the
right result; a cached site whose descriptors turn bad is checked again;
site NULL works. Inside CUDA graph capture (through the CUDA runtime the
library loaded): a captured call that reuses the site's table, then a
change outside capture (the graph must keep its table); captured calls
that change the table (two capture slots, a third capture fails cleanly),
replayed after the site's table was rewritten outside capture; site NULL
and a site's first call inside capture are refused.

A negative or NaN learning rate, or a step below 1, writes nothing (in
place, every entry keeps its values) and fluid_cuda_check_errors reports
it. Descriptor errors get the cpu group's messages (found_inf's among
them).

Dynamic loss scaling. The skip flag found_inf (NULL above), in device
memory, on groups of SHAPES: 0.0 and -0.0 give the bits of NULL and the
cpu's result; 1.0, NaN, inf and a subnormal leave every output of every
entry bitwise equal to its input and to the cpu's (with finite
gradients, and with inf, -inf and NaN in them), in place and into
distinct outputs prefilled with garbage. fluid_cuda_unscale_grads
against fluid_cpu_unscale_grads: bit for bit except NaN's bits (the
device's f32 NaN is the canonical one; NaN where the cpu has NaN), and
found_inf (prefilled with 7.0), f32 and f64, scales 2^16, 3 and
12345.678, in place and not, inf, -inf and NaN in later entries (one in
a fourth chunk), site NULL, one entry of more chunks than blocks; one
site called again on the same buffers (its cached table) sets found_inf
after non-finite gradients and zeroes it after finite ones; unscale then
the momentum or adamw group with the device flag, as a program runs
them, skips exactly the non-finite steps; both captured in a CUDA graph
and replayed over new gradients, found_inf follows each replay. Bad
unscale calls get the cpu's messages (an f16 gradient: a message naming
the entry and dtype on both; the wording and status differ).
"""

import ctypes
import importlib
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
harness = importlib.import_module("gpu-elementwise")
gpu_context = importlib.import_module("gpu-context")
fluidcuda = harness.fluidcuda
fluidrt = harness.fluidrt
SgdParams = harness.SgdParams
MomentumParams = harness.MomentumParams
AdamParams = harness.AdamParams
I32, I64, VOID_P, TENSOR = harness.I32, harness.I64, fluidcuda.VOID_P, \
    harness.TENSOR
OK, INVALID_ARGUMENT, UNSUPPORTED = harness.OK, harness.INVALID_ARGUMENT, \
    harness.UNSUPPORTED

# kChunkElements of runtime/cuda/KernelsOptimizerGroup.cu.
CHUNK = 32768
STEPS = 5
LRS = [0.1, 0.05, 0.0, 0.3, 0.01]

# Entry sizes and, cycled over them, where each entry's tensors live.
SHAPES = [(CHUNK - 1,), (CHUNK,), (CHUNK + 1,), (3 * CHUNK + 5,), (),
          (1,), (7,), (0,), (5, 33), (CHUNK // 2 - 1,), (2 * CHUNK + 1,)]
PLACES = ["aligned", "unaligned", "aligned", "grad unaligned"]

# name: (op, parameter struct)
CONFIGS = {
    "sgd": ("sgd", SgdParams(0.0)),
    "sgd weight_decay": ("sgd", SgdParams(0.01)),
    "momentum": ("momentum", MomentumParams(0.9, 0.0, 0)),
    "momentum weight_decay": ("momentum", MomentumParams(0.8, 1e-3, 0)),
    "momentum nesterov weight_decay": ("momentum",
                                       MomentumParams(0.9, 5e-4, 1)),
    "adam": ("adam", AdamParams(0.9, 0.999, 1e-8, 0.0, 0)),
    "adam weight_decay": ("adam", AdamParams(0.9, 0.99, 1e-6, 0.01, 0)),
    "adamw": ("adam", AdamParams(0.9, 0.999, 1e-8, 0.01, 1)),
}
STATE = {"sgd": 0, "momentum": 1, "adam": 2}
# The tensor (and descriptor array) arguments, found_inf among them.
ARRAYS = {"sgd": 5, "momentum": 7, "adam": 10}
PARAMS_TYPE = {"sgd": SgdParams, "momentum": MomentumParams,
               "adam": AdamParams}

# Call sites, alive as long as the context (the contract of `site`).
SITES = []


def new_site():
    site = ctypes.c_char(0)
    SITES.append(site)
    return ctypes.addressof(site)


def declare_groups(lib):
    for op, count in ARRAYS.items():
        params = ctypes.POINTER(PARAMS_TYPE[op])
        cpu = getattr(lib, f"fluid_cpu_{op}_group")
        cpu.restype = I32
        cpu.argtypes = [I64] + [TENSOR] * count + [params]
        cuda = getattr(lib, f"fluid_cuda_{op}_group")
        cuda.restype = I32
        cuda.argtypes = [VOID_P, VOID_P, I64] + [TENSOR] * count + [params]
    # count, grads, scale, new_grads, found_inf.
    lib.fluid_cpu_unscale_grads.restype = I32
    lib.fluid_cpu_unscale_grads.argtypes = [I64] + [TENSOR] * 4
    lib.fluid_cuda_unscale_grads.restype = I32
    lib.fluid_cuda_unscale_grads.argtypes = [VOID_P, VOID_P, I64] + \
        [TENSOR] * 4


def descriptors(tensors):
    """A C array of the descriptors of `tensors` (NumPy arrays, device
    tensors or descriptors); None for a null array."""
    if tensors is None:
        return None
    descs = []
    for t in tensors:
        if isinstance(t, np.ndarray):
            t = fluidrt.tensor(t)
        elif isinstance(t, fluidcuda.DeviceTensor):
            t = t.desc
        descs.append(t)
    return (fluidrt.FluidTensor * len(descs))(*descs)


def single(t):
    if t is None:
        return None
    if isinstance(t, np.ndarray):
        return ctypes.byref(fluidrt.tensor(t))
    return ctypes.byref(t.desc)


def group_arguments(op, count, inputs, lr, step, outputs, params,
                    found_inf=None):
    """inputs = [params, grads, *state], outputs = [new_params, *new_state]:
    lists of tensors per array (or None); found_inf the skip flag (None:
    NULL)."""
    ins = [descriptors(a) for a in inputs]
    outs = [descriptors(a) for a in outputs]
    if op == "sgd":
        middle = [ins[0], ins[1], single(lr), single(found_inf), outs[0]]
    elif op == "momentum":
        middle = [ins[0], ins[1], ins[2], single(lr), single(found_inf),
                  outs[0], outs[1]]
    else:
        middle = ins + [single(lr), single(step), single(found_inf)] + outs
    return [count] + middle + [params]


def cpu_group(lib, op, *args):
    status = getattr(lib, f"fluid_cpu_{op}_group")(*group_arguments(op,
                                                                     *args))
    return status, fluidcuda.last_error(lib)


def cuda_group(h, op, site, *args):
    status = getattr(h.lib, f"fluid_cuda_{op}_group")(
        h.ctx.handle, site, *group_arguments(op, *args))
    return status, fluidcuda.last_error(h.lib)


class DeviceGroup:
    """Device copies of a group's parameters and state (and outputs), each
    entry placed as `places` says; freed by free()."""

    def __init__(self, h, host, places):
        self.h = h
        self.bases = []
        self.tensors = [[self.upload(a, place) for a, place in
                         zip(tensor, places)] for tensor in host]

    def upload(self, array, place, unaligned=None):
        if unaligned is None:
            unaligned = place == "unaligned"
        if unaligned:
            view, base = harness.unaligned_upload(self.h, array)
        else:
            view = base = self.h.upload(array)
        self.bases.append(base)
        return view

    def grads(self, grads, places):
        return [self.upload(g, p, unaligned=p != "aligned")
                for g, p in zip(grads, places)]

    def download(self):
        return [[t.download() for t in tensor] for tensor in self.tensors]

    def free(self):
        for base in self.bases:
            base.free()
        self.bases = []


def place_of(k):
    return PLACES[k % len(PLACES)]


def random_group(h, op, shapes, dtype):
    """[params, *state] per entry, host arrays."""
    host = [[h.randn(*s, dtype=dtype) for s in shapes]]
    for _ in range(STATE[op]):
        host.append([np.zeros(s, dtype) if op == "adam"
                     else h.randn(*s, dtype=dtype) for s in shapes])
    return host


def compare_groups(got, want, op, what):
    """Bitwise for sgd and momentum; adam within tolerance. Returns whether
    everything was bitwise equal."""
    exact = True
    for j, (got_tensor, want_tensor) in enumerate(zip(got, want)):
        for k, (g, w) in enumerate(zip(got_tensor, want_tensor)):
            name = f"{what}: tensor {j} of entry {k}"
            if op == "adam":
                harness.expect_close(g, w, name)
            elif not harness.bitwise_equal(g, w):
                bad = np.flatnonzero(g.ravel() != w.ravel())
                raise AssertionError(
                    f"{name}: {bad.size} elements differ, the first at "
                    f"{bad[0]}: {g.ravel()[bad[0]]!r} vs "
                    f"{w.ravel()[bad[0]]!r}")
            exact = exact and harness.bitwise_equal(g, w)
    return exact


class Step:
    """One update's inputs, on the host and on the device."""

    def __init__(self, h, shapes, dtype, rate, lr_dtype, step, places):
        self.grads = [h.randn(*s, dtype=dtype) for s in shapes]
        self.lr = np.array(rate, lr_dtype)
        self.step = np.array(step, np.int64)
        self.d_lr, self.d_step = h.upload(self.lr), h.upload(self.step)
        self.places = places
        self.device = []

    def device_grads(self, group):
        return group.grads(self.grads, self.places)

    def free(self):
        self.d_lr.free()
        self.d_step.free()


def cpu_step(h, op, host, step, params, outputs=None):
    """The cpu group's update of `host` ([params, *state] lists), in place
    unless outputs are given; returns the new values."""
    outputs = outputs or host
    status, message = cpu_group(h.lib, op, len(host[0]),
                                [host[0], step.grads] + host[1:], step.lr,
                                step.step, outputs, params)
    assert status == OK, message
    return outputs


def update_case(h, config, dtype, lr_dtype, in_place, shapes=SHAPES,
                site="new", steps=STEPS):
    op, params = CONFIGS[config]

    def body():
        places = [place_of(k) for k in range(len(shapes))]
        call_site = new_site() if site == "new" else None
        host = random_group(h, op, shapes, dtype)
        device = DeviceGroup(h, host, places)
        inputs = device.tensors
        exact = True
        for number, rate in enumerate(LRS[:steps], start=1):
            step = Step(h, shapes, dtype, rate, lr_dtype, number, places)
            grads = step.device_grads(device)
            if in_place:
                outputs = inputs
            else:
                outputs = [[device.upload(np.full(s, np.nan, dtype), p)
                            for s, p in zip(shapes, places)]
                           for _ in inputs]
            status, message = cuda_group(h, op, call_site, len(shapes),
                                         [inputs[0], grads] + inputs[1:],
                                         step.d_lr, step.d_step, outputs,
                                         params)
            assert status == OK, message
            host = cpu_step(h, op, host, step, params)
            got = [[t.download() for t in tensor] for tensor in outputs]
            exact = compare_groups(got, host, op, f"step {number}") and exact
            inputs = outputs
            step.free()
        h.expect_no_device_error()
        device.free()
        return "bitwise equal" if exact else "within tolerance"
    return body


def adam_equals_single_case(h, dtype):
    """The adam group against fluid_cuda_adam per entry, bit for bit."""
    op, params = CONFIGS["adamw"]

    def body():
        shapes = SHAPES[:5]
        places = [place_of(k) for k in range(len(shapes))]
        host = random_group(h, op, shapes, dtype)
        group = DeviceGroup(h, host, places)
        singles = DeviceGroup(h, host, places)
        site = new_site()
        for number in range(1, 3):
            step = Step(h, shapes, dtype, 0.01, dtype, number, places)
            grads = step.device_grads(group)
            status, message = cuda_group(
                h, op, site, len(shapes), [group.tensors[0], grads] +
                group.tensors[1:], step.d_lr, step.d_step, group.tensors,
                params)
            assert status == OK, message
            for k in range(len(shapes)):
                p, m, v = (t[k] for t in singles.tensors)
                h.ctx("adam", p, grads[k], m, v, step.d_lr, step.d_step,
                      None, p, m, v, params)
            step.free()
            for j, (a, b) in enumerate(zip(group.download(),
                                           singles.download())):
                for k in range(len(shapes)):
                    assert harness.bitwise_equal(a[k], b[k]), (
                        f"step {number}: tensor {j} of entry {k} differs "
                        f"from fluid_cuda_adam's")
        h.expect_no_device_error()
        group.free()
        singles.free()
        return "bitwise equal to fluid_cuda_adam"
    return body


#===-----------------------------------------------------------------------===#
# The call-site cache
#===-----------------------------------------------------------------------===#


class Session:
    """In-place momentum f32 updates of one device group, checked against
    the cpu after each call."""

    PARAMS = MomentumParams(0.9, 1e-4, 1)

    def __init__(self, h, shapes, places=None):
        self.h = h
        self.shapes = list(shapes)
        self.places = places or [place_of(k) for k in range(len(shapes))]
        self.host = random_group(h, "momentum", self.shapes, np.float32)
        self.device = DeviceGroup(h, self.host, self.places)
        self.steps = []

    def prepare(self, rate=0.1):
        """A step's inputs (kept until free())."""
        step = Step(self.h, self.shapes, np.float32, rate, np.float32, 1,
                    self.places)
        step.d_grads = step.device_grads(self.device)
        self.steps.append(step)
        return step

    def call(self, site, step):
        t = self.device.tensors
        return cuda_group(self.h, "momentum", site, len(self.shapes),
                          [t[0], step.d_grads, t[1]], step.d_lr, None, t,
                          self.PARAMS)

    def run(self, site, rate=0.1):
        step = self.prepare(rate)
        status, message = self.call(site, step)
        assert status == OK, message
        self.expect(step)

    def expect(self, step, what="after the call"):
        """The device group equals the cpu's update of the host copy."""
        self.host = cpu_step(self.h, "momentum", self.host, step,
                             self.PARAMS)
        self.check(what)

    def check(self, what):
        compare_groups(self.device.download(), self.host, "momentum", what)

    def move(self, k):
        """Entry k's parameter and velocity to new buffers (allocated
        before the old ones are freed, so the addresses differ)."""
        for j, tensor in enumerate(self.device.tensors):
            tensor[k] = self.device.upload(self.host[j][k], self.places[k])

    def free(self):
        for step in self.steps:
            step.free()
        self.device.free()


def cache_cases(h):
    def moved_entry():
        s = Session(h, [(CHUNK + 3,), (100,), (7, 9), (CHUNK,)])
        site = new_site()
        s.run(site)
        s.run(site)
        before = s.device.tensors[0][2].pointer
        s.move(2)
        assert s.device.tensors[0][2].pointer != before
        s.run(site)
        s.run(site)
        s.free()
        h.expect_no_device_error()
        return "re-uploaded after the move"

    def reshaped_entry():
        s = Session(h, [(12, 10), (CHUNK + 1,)])
        site = new_site()
        s.run(site)
        for j, tensor in enumerate(s.device.tensors):
            view = harness.DeviceView(tensor[0], 0, (120,), np.float32)
            s.device.tensors[j][0] = view
            s.host[j][0] = s.host[j][0].reshape(120)
        s.shapes[0] = (120,)
        s.run(site)
        s.free()

    def spoiled_after_caching():
        s = Session(h, [(10,), (20,), (30,)])
        site = new_site()
        s.run(site)
        step = s.prepare()
        wrong = h.upload(np.ones((21,), np.float32))
        s.device.bases.append(wrong)
        step.d_grads[1] = wrong
        status, message = s.call(site, step)
        fluidcuda.expect_status(h.lib, status, INVALID_ARGUMENT, [
            "fluid_cuda_momentum_group: entry 1: grads[1] shape [21] does not "
            "match expected [20]"])
        s.check("after the refused call")
        s.free()

    def site_null():
        s = Session(h, [(CHUNK + 1,), (3,), ()])
        for _ in range(3):
            s.run(None)
        s.free()

    h.case("cache: site called after an entry's buffer moved", moved_entry)
    h.case("cache: site called after an entry was reshaped in place",
           reshaped_entry)
    h.case("cache: cached site whose grads turn bad is checked again",
           spoiled_after_caching)
    h.case("cache: site NULL", site_null)


#===-----------------------------------------------------------------------===#
# CUDA graph capture
#===-----------------------------------------------------------------------===#


class Capture:
    """A CUDA graph captured on the context's stream (thread-local mode,
    as the driver captures): `with Capture(h) as c:` ... then c.launch()."""

    def __init__(self, h):
        self.h = h
        self.cudart = gpu_context.load_cudart()
        self.stream = h.ctx.stream()
        self.graph = ctypes.c_void_p()
        self.executable = ctypes.c_void_p()

    def __enter__(self):
        gpu_context.cuda_check(self.cudart, self.cudart.cudaStreamBeginCapture(
            self.stream, gpu_context.CAPTURE_THREAD_LOCAL),
            "cudaStreamBeginCapture")
        return self

    def __exit__(self, *exc):
        ended = self.cudart.cudaStreamEndCapture(self.stream,
                                                 ctypes.byref(self.graph))
        if exc[0] is None:
            gpu_context.cuda_check(self.cudart, ended, "cudaStreamEndCapture")

    def launch(self):
        if not self.executable:
            gpu_context.cuda_check(self.cudart,
                                   self.cudart.cudaGraphInstantiate(
                                       ctypes.byref(self.executable),
                                       self.graph, 0), "cudaGraphInstantiate")
        gpu_context.cuda_check(self.cudart, self.cudart.cudaGraphLaunch(
            self.executable, self.stream), "cudaGraphLaunch")
        self.h.ctx.synchronize()

    def destroy(self):
        if self.executable:
            self.cudart.cudaGraphExecDestroy(self.executable)
        if self.graph:
            self.cudart.cudaGraphDestroy(self.graph)


def capture_cases(h):
    shapes = [(CHUNK + 5,), (64,), (3, 7)]

    def captured_hit_then_change():
        a = Session(h, shapes)
        site = new_site()
        a.run(site)
        step = a.prepare()
        with Capture(h) as graph:
            status, message = a.call(site, step)
            assert status == OK, message
        # Outside capture, the site's table changes: the graph's must not.
        b = Session(h, shapes)
        b.run(site)
        graph.launch()
        a.expect(step, "after the graph's launch")
        b.check("after the graph's launch")
        b.run(site)
        graph.launch()
        a.expect(step, "after the graph's second launch")
        graph.destroy()
        for s in (a, b):
            s.free()
        h.expect_no_device_error()
        return "the graph kept its table"

    def captured_changes():
        a, b, c, d = (Session(h, shapes) for _ in range(4))
        site = new_site()
        a.run(site)
        graphs, steps = [], []
        for s in (b, c):
            step = s.prepare()
            with Capture(h) as graph:
                status, message = s.call(site, step)
                assert status == OK, message
            graphs.append(graph)
            steps.append(step)
        d_step = d.prepare()
        with Capture(h) as third:
            status, message = d.call(site, d_step)
        fluidcuda.expect_status(h.lib, status, INVALID_ARGUMENT, [
            "fluid_cuda_momentum_group: the call site's device table",
            "capture slots is free"])
        third.destroy()
        d.check("after the refused capture")
        # The site's own buffer is rewritten; the graphs keep their slots.
        a.run(site)
        for s, graph, step in zip((b, c), graphs, steps):
            graph.launch()
            s.expect(step, "after its graph's launch")
        a.run(site)
        for s, graph, step in zip((b, c), graphs, steps):
            graph.launch()
            s.expect(step, "after its graph's second launch")
        for graph in graphs:
            graph.destroy()
        for s in (a, b, c, d):
            s.free()
        h.expect_no_device_error()
        return "two captures with their own tables, a third refused"

    def refused_in_capture(site_of, fragment):
        def body():
            s = Session(h, shapes)
            site = site_of(s)
            step = s.prepare()
            with Capture(h) as graph:
                status, message = s.call(site, step)
            graph.destroy()
            fluidcuda.expect_status(h.lib, status, INVALID_ARGUMENT,
                                    [fragment])
            s.check("after the refused call")
            s.free()
        return body

    h.case("capture: a captured call reusing the site's table, then a change "
           "outside capture", captured_hit_then_change)
    h.case("capture: captured calls changing the table", captured_changes)
    h.case("capture: site NULL is refused", refused_in_capture(
        lambda s: None, "a call without a site (site NULL) cannot run during "
        "CUDA graph capture"))
    h.case("capture: a site's first call is refused", refused_in_capture(
        lambda s: new_site(), "the first call of a call site cannot run "
        "during CUDA graph capture"))


#===-----------------------------------------------------------------------===#
# Bad values and bad calls
#===-----------------------------------------------------------------------===#


def bad_value_case(h, op, rate, step_value, fragment):
    _, params = CONFIGS[op]

    def body():
        shapes = [(CHUNK + 1,), (5,), (1000,)]
        places = ["aligned", "unaligned", "aligned"]
        host = random_group(h, op, shapes, np.float64)
        device = DeviceGroup(h, host, places)
        step = Step(h, shapes, np.float64, rate, np.float64, step_value,
                    places)
        grads = step.device_grads(device)
        t = device.tensors
        status, message = cuda_group(h, op, new_site(), len(shapes),
                                     [t[0], grads] + t[1:], step.d_lr,
                                     step.d_step, t, params)
        assert status == OK, message
        h.expect_device_error([f"fluid_cuda_check_errors: fluid_cuda_{op}_"
                               f"group: {fragment}"])
        for j, (got, want) in enumerate(zip(device.download(), host)):
            for k in range(len(shapes)):
                assert harness.bitwise_equal(got[k], want[k]), (
                    f"tensor {j} of entry {k} was written")
        step.free()
        device.free()
    return body


class BadCall:
    """A valid in-place call over f32 entries of SHAPE, on the cpu and on
    the device, to be spoiled by one change."""

    SHAPE = (4, 6)

    def __init__(self, h, op, count=5):
        self.h, self.op, self.count = h, op, count
        self.params = CONFIGS[op][1]
        self.host = [[h.randn(*self.SHAPE, dtype=np.float32)
                      for _ in range(count)]
                     for _ in range(2 + STATE[op])]
        self.lr = np.array(0.1, np.float32)
        self.step = np.array(1, np.int64)
        self.spoils = []

    def spoil(self, fn):
        self.spoils.append(fn)
        return self

    def arguments(self, device):
        """The unspoiled call's state: inputs, outputs (in place), lr, step,
        count and params, of the cpu call, or of the device call (uploaded
        through `device`)."""
        tensors = self.host
        lr, step = self.lr, self.step
        if device is not None:
            tensors = [[device.upload(a, "aligned") for a in tensor]
                       for tensor in tensors]
            lr, step = device.upload(lr, "aligned"), \
                device.upload(step, "aligned")
        inputs = [list(t) for t in tensors]
        return {"inputs": inputs, "outputs": [inputs[0]] + inputs[2:],
                "lr": lr, "step": step, "found_inf": None,
                "count": self.count, "params": self.params,
                "device": device is not None}

    def spoiled(self, state, device):
        """A copy of `state` with every spoil applied."""
        inputs = [list(t) for t in state["inputs"]]
        state = dict(state, inputs=inputs,
                     outputs=[inputs[0]] + inputs[2:])
        for fn in self.spoils:
            fn(state, device)
        return state


def spoil_entry(index, k, make):
    """inputs[index][k] replaced by make(): a NumPy array, uploaded for the
    device call."""
    def fn(state, device):
        array = make()
        state["inputs"][index][k] = array if device is None else \
            device.upload(array, "aligned")
    return fn


def spoil(key, value):
    """state[key] = value (a NumPy array uploaded for the device call)."""
    def fn(state, device):
        if device is not None and isinstance(value, np.ndarray):
            state[key] = device.upload(value, "aligned")
        else:
            state[key] = value
    return fn


def null_array(index, output=False):
    def fn(state, device):
        state["outputs" if output else "inputs"][index] = None
    return fn


def host_memory(index, k, array):
    """inputs[index][k] in host memory (for the device call)."""
    def fn(state, device):
        if device is not None:
            state["inputs"][index][k] = array
    return fn


def entry_dtype(k, dtype):
    def fn(state, device):
        for tensor in state["inputs"]:
            host = tensor[k] if device is None else tensor[k].download()
            value = host.astype(dtype)
            tensor[k] = value if device is None else \
                device.upload(value, "aligned")
        state["outputs"] = [state["inputs"][0]] + state["inputs"][2:]
    return fn


def all_dtype(dtype):
    def fn(state, device):
        for k in range(state["count"]):
            entry_dtype(k, dtype)(state, device)
    return fn


def call_of(h, op, state, site):
    args = [state["count"], state["inputs"], state["lr"], state["step"],
            state["outputs"], state["params"], state["found_inf"]]
    if state["device"]:
        return cuda_group(h, op, site, *args)
    return cpu_group(h.lib, op, *args)


def same_error_case(h, op, spoils, fragment, status_code):
    """The cpu and the cuda group refuse the call with the same status and
    message (cuda's entry point and wording; `fragment` is the cpu's),
    writing nothing; on the
    device with a fresh site, and with a site whose table a valid call of
    the same buffers cached just before."""
    def body():
        call = BadCall(h, op)
        for fn in spoils:
            call.spoil(fn)
        status, cpu_message = call_of(
            h, op, call.spoiled(call.arguments(None), None), None)
        assert status == status_code, f"cpu: {status} {cpu_message!r}"
        assert fragment in cpu_message, f"{fragment!r} not in {cpu_message!r}"
        for cached in (False, True):
            device = DeviceGroup(h, [], [])
            clean = call.arguments(device)
            site = new_site()
            if cached:
                got_status, message = call_of(h, op, clean, site)
                assert got_status == OK, message
            state = call.spoiled(clean, device)
            device_tensors = [t for tensor in state["inputs"] if tensor
                              for t in tensor
                              if isinstance(t, fluidcuda.DeviceTensor)]
            before = [t.download() for t in device_tensors]
            got_status, message = call_of(h, op, state, site)
            if got_status != status or \
                    message != harness.cuda_message(cpu_message):
                raise AssertionError(
                    f"cuda ({'cached' if cached else 'fresh'} site): "
                    f"{got_status} {message!r}; cpu: {status} "
                    f"{cpu_message!r}")
            for t, old in zip(device_tensors, before):
                assert harness.bitwise_equal(t.download(), old), \
                    "a buffer was written"
            device.free()
        return harness.cuda_message(cpu_message)
    return body


def cuda_only_error_case(h, op, spoils, fragment):
    def body():
        call = BadCall(h, op)
        for fn in spoils:
            call.spoil(fn)
        device = DeviceGroup(h, [], [])
        state = call.spoiled(call.arguments(device), device)
        status, message = call_of(h, op, state, new_site())
        device.free()
        assert status == INVALID_ARGUMENT, f"status {status}: {message!r}"
        assert fragment in message, f"{fragment!r} not in {message!r}"
        return message
    return body


def error_cases(h):
    shape = BadCall.SHAPE
    ones = np.ones
    cases = [
        ("count 0", "momentum", [spoil("count", 0)],
         "count must be >= 1, got 0"),
        ("null grads array", "momentum", [null_array(1)],
         "grads array is null"),
        ("null new_exp_avg_sqs array", "adam", [null_array(2, output=True)],
         "new_exp_avg_sqs array is null"),
        ("grads of entry 3 of another shape", "momentum",
         [spoil_entry(1, 3, lambda: ones((4, 5), np.float32))],
         "entry 3: grads[3] shape [4,5] does not match expected [4,6]"),
        ("velocity of entry 4 of another dtype", "momentum",
         [spoil_entry(2, 4, lambda: ones(shape, np.float64))],
         "entry 4: velocities[4] has dtype f64 but params[4] has f32"),
        ("entries of different dtypes", "sgd", [entry_dtype(2, np.float64)],
         "entry 2: params[2] has dtype f64 but params[0] has f32"),
        ("f16 entries", "adam", [all_dtype(np.float16)],
         "entry 0: params[0] has dtype f16; the cpu kernels support f32 and "
         "f64"),
        ("null p", "sgd", [spoil("params", None)], "p is null"),
        ("nesterov without momentum", "momentum",
         [spoil("params", MomentumParams(0.0, 0.0, 1))],
         "nesterov needs a momentum > 0"),
        ("adam beta2 1", "adam",
         [spoil("params", AdamParams(0.9, 1.0, 1e-8, 0.0, 0))],
         "beta2 must be in [0, 1), got 1"),
        ("lr of rank 1", "sgd", [spoil("lr", ones(1, np.float32))],
         "lr must have rank 0, got shape [1]"),
        ("step of dtype i32", "adam", [spoil("step", np.array(1, np.int32))],
         "step has dtype i32; expected i64"),
        # Bad skip flags, of value 0.0 (which would let the update write).
        ("found_inf of dtype f64", "sgd",
         [spoil("found_inf", np.array(0.0))],
         "found_inf has dtype f64; expected f32"),
        ("found_inf of rank 1", "momentum",
         [spoil("found_inf", np.zeros(1, np.float32))],
         "found_inf must have rank 0, got shape [1]"),
        ("found_inf of dtype i32", "adam",
         [spoil("found_inf", np.array(0, np.int32))],
         "found_inf has dtype i32; expected f32"),
    ]
    for name, op, spoils, fragment in cases:
        status = UNSUPPORTED if "f16" in name else INVALID_ARGUMENT
        h.case(f"error {op}: {name}",
               same_error_case(h, op, spoils, fragment, status))
    host = np.ones(shape, np.float32)
    h.case("error momentum: grads of entry 1 in host memory",
           cuda_only_error_case(h, "momentum", [host_memory(1, 1, host)],
                                "fluid_cuda_momentum_group: entry 1: grads[1] "
                                "data"))

    def host_flag(state, device):
        state["found_inf"] = np.array(0.0, np.float32)
    h.case("error sgd: found_inf in host memory",
           cuda_only_error_case(h, "sgd", [host_flag],
                                "fluid_cuda_sgd_group: found_inf data"))


#===-----------------------------------------------------------------------===#
# Dynamic loss scaling: the skip flag found_inf and fluid_cuda_unscale_grads
#===-----------------------------------------------------------------------===#

# found_inf values: (name, value, whether the update is skipped). None is
# NULL; zeros of either sign let the update run; anything nonzero, NaN
# included, skips it.
FLAGS = [("NULL", None, False), ("0.0", 0.0, False), ("-0.0", -0.0, False),
         ("1.0", 1.0, True), ("NaN", np.nan, True), ("inf", np.inf, True),
         ("subnormal 1e-45", 1e-45, True)]
# What distinct outputs hold before a call, so that an unwritten one shows.
GARBAGE = 12345.0


def plant_non_finite(grads, shapes):
    """inf, -inf and NaN in later entries of the gradients (in place):
    the last element of entry 3 (in its fourth chunk), entry 1's last and
    entry 9's first; in a group of fewer entries, in the last entry's last
    chunk and middle."""
    planted = 0
    for k, index, value in [(3, -1, np.inf), (1, -1, -np.inf),
                            (9, 0, np.nan)]:
        if k < len(shapes) and grads[k].size:
            grads[k].flat[index] = value
            planted += 1
    if not planted:
        grads[-1].flat[-1] = np.inf
        grads[-1].flat[grads[-1].size // 2] = np.nan


def skip_case(h, config, dtype, in_place):
    """The group on the device with found_inf in device memory against the
    cpu group with the same flag on the host, for each of FLAGS: a
    skipped call leaves every output of every entry its input's bits
    (with finite gradients, and with inf, -inf and NaN in them); 0.0 and
    -0.0 give the bits of NULL on the device and the cpu's result
    (bitwise for sgd and momentum, adam within tolerance); the flag is
    not written."""
    op, params = CONFIGS[config]

    def body():
        shapes = SHAPES
        places = [place_of(k) for k in range(len(shapes))]
        originals = random_group(h, op, shapes, dtype)
        if op == "adam":  # a state that a copy and an update tell apart
            originals[1:] = [[np.array(np.abs(h.randn(*s, dtype=dtype)))
                              for s in shapes] for _ in originals[1:]]
        site = new_site()
        # Every call's gradients (before any planting): the same for all.
        first = Step(h, shapes, dtype, 0.1, dtype, 3, places)
        base_grads = first.grads
        first.free()
        plain = None
        exact = True
        for flag_name, value, skips in FLAGS:
            host_flag = None if value is None else np.array(value, np.float32)
            for poisoned in (False, True) if skips else (False,):
                what = (f"found_inf {flag_name}"
                        f"{', non-finite gradients' if poisoned else ''}")
                step = Step(h, shapes, dtype, 0.1, dtype, 3, places)
                step.grads = [g.copy() for g in base_grads]
                if poisoned:
                    plant_non_finite(step.grads, shapes)
                device = DeviceGroup(h, originals, places)
                grads = step.device_grads(device)
                outputs = device.tensors if in_place else [
                    [device.upload(np.full(s, GARBAGE, dtype), p)
                     for s, p in zip(shapes, places)]
                    for _ in device.tensors]
                d_flag = None if host_flag is None else \
                    h.upload(host_flag)
                status, message = cuda_group(
                    h, op, site, len(shapes),
                    [device.tensors[0], grads] + device.tensors[1:],
                    step.d_lr, step.d_step, outputs, params, d_flag)
                assert status == OK, f"{what}: {message}"
                host = [[a.copy() for a in tensor] for tensor in originals]
                cpu_outputs = host if in_place else [
                    [np.full(s, GARBAGE, dtype) for s in shapes]
                    for _ in host]
                status, message = cpu_group(
                    h.lib, op, len(shapes), [host[0], step.grads] +
                    host[1:], step.lr, step.step, cpu_outputs, params,
                    host_flag)
                assert status == OK, f"{what}: cpu: {message}"
                got = [[t.download() for t in tensor]
                       for tensor in outputs]
                if skips:
                    for want, name in [(originals, "its input's value"),
                                       (cpu_outputs, "the cpu's")]:
                        for j, (g, w) in enumerate(zip(got, want)):
                            for k in range(len(shapes)):
                                assert harness.bitwise_equal(g[k], w[k]), (
                                    f"{what}: tensor {j} of entry {k} is "
                                    f"not {name}")
                else:
                    exact = compare_groups(got, cpu_outputs, op,
                                           what) and exact
                    if plain is None:
                        plain = got
                    for j, (g, w) in enumerate(zip(got, plain)):
                        for k in range(len(shapes)):
                            assert harness.bitwise_equal(g[k], w[k]), (
                                f"{what}: tensor {j} of entry {k} "
                                f"differs from found_inf NULL's")
                if not in_place:
                    for j, (tensor, want) in enumerate(
                            zip(device.tensors, originals)):
                        for k in range(len(shapes)):
                            assert harness.bitwise_equal(
                                tensor[k].download(), want[k]), (
                                f"{what}: input {j} of entry {k} was "
                                "written")
                if d_flag is not None:
                    assert harness.bitwise_equal(d_flag.download(),
                                                 host_flag), \
                        f"{what}: found_inf was written"
                    d_flag.free()
                step.free()
                device.free()
        h.expect_no_device_error()
        return "skips bitwise; updates " + (
            "bitwise equal" if exact else "within tolerance")
    return body


def cpu_unscale(lib, grads, scale, new_grads, found_inf):
    status = lib.fluid_cpu_unscale_grads(len(grads), descriptors(grads),
                                         single(scale), descriptors(new_grads),
                                         single(found_inf))
    return status, fluidcuda.last_error(lib)


def cuda_unscale(h, site, count, grads, scale, new_grads, found_inf):
    status = h.lib.fluid_cuda_unscale_grads(
        h.ctx.handle, site, count, descriptors(grads), single(scale),
        descriptors(new_grads), single(found_inf))
    return status, fluidcuda.last_error(h.lib)


def scaled(h, shapes, dtype, scale):
    """Gradients of a loss multiplied by `scale` (host arrays)."""
    return [np.array(h.randn(*s, dtype=dtype) * dtype(scale), dtype)
            for s in shapes]


def overwrite(h, tensor, array):
    """Copies `array` into the device buffer of `tensor` (same address)."""
    h.ctx.check(h.lib.fluid_cuda_copy_to_device(
        h.ctx.handle, tensor.pointer, np.ascontiguousarray(array).ctypes.data,
        tensor.nbytes))


def expect_unscaled(got, want, what):
    """Bit for bit, except the bits of NaN: NaN where the cpu has NaN (the
    device's f32 arithmetic returns the canonical NaN, the cpu's keeps
    the input NaN's bits)."""
    for k, (g, w) in enumerate(zip(got, want)):
        nan = np.isnan(w)
        if not np.array_equal(np.isnan(g), nan):
            raise AssertionError(f"{what}: entry {k}: NaN at "
                                 f"{np.flatnonzero(np.isnan(g))}, the cpu's "
                                 f"at {np.flatnonzero(nan)}")
        if not harness.bitwise_equal(g[~nan], w[~nan]):
            bad = np.flatnonzero((g != w) & ~nan)
            first = bad[0] if bad.size else 0
            raise AssertionError(
                f"{what}: entry {k}: {bad.size} elements differ from the "
                f"cpu's, the first at {first}: {g.ravel()[first]!r} vs "
                f"{w.ravel()[first]!r}")


def unscale_case(h, dtype, scale, in_place, poisoned, shapes=SHAPES,
                 site="new"):
    """fluid_cuda_unscale_grads against fluid_cpu_unscale_grads, bit for
    bit, and found_inf (prefilled with 7.0 on both, so that it must be
    written): entries aligned and unaligned, around the chunk size;
    poisoned: inf, -inf and NaN planted in later entries."""
    def body():
        places = [place_of(k) for k in range(len(shapes))]
        grads = scaled(h, shapes, dtype, scale)
        if poisoned:
            plant_non_finite(grads, shapes)
        scale_array = np.array(scale, np.float32)
        want = [g.copy() for g in grads]
        want_flag = np.array(7.0, np.float32)
        status, message = cpu_unscale(h.lib, want, scale_array, want,
                                      want_flag)
        assert status == OK, message
        assert want_flag == (1.0 if poisoned else 0.0), want_flag
        device = DeviceGroup(h, [grads], places)
        inputs = device.tensors[0]
        outputs = inputs if in_place else [
            device.upload(np.full(s, GARBAGE, dtype), p)
            for s, p in zip(shapes, places)]
        d_scale, d_flag = h.upload(scale_array), h.upload(
            np.array(7.0, np.float32))
        status, message = cuda_unscale(
            h, new_site() if site == "new" else None, len(shapes), inputs,
            d_scale, outputs, d_flag)
        assert status == OK, message
        expect_unscaled([t.download() for t in outputs], want, "new_grads")
        if not in_place:
            for k, (t, g) in enumerate(zip(inputs, grads)):
                assert harness.bitwise_equal(t.download(), g), \
                    f"grads[{k}] was written"
        flag = d_flag.download()
        assert harness.bitwise_equal(flag, want_flag), (
            f"found_inf {flag} (the cpu's {want_flag})")
        h.expect_no_device_error()
        for t in (d_scale, d_flag):
            t.free()
        device.free()
        return f"bitwise equal, found_inf {float(flag)}"
    return body


def unscale_repeated_case(h, dtype):
    """One site called again on the same buffers (its cached table), in
    place, with new gradients each time: found_inf follows each call's
    data (the kernel zeroes it on every call), 1.0 after inf or NaN and
    back to 0.0 after finite gradients; each call bitwise equal to the
    cpu's."""
    def body():
        shapes = SHAPES
        places = [place_of(k) for k in range(len(shapes))]
        scale = np.array(1000.0, np.float32)
        device = DeviceGroup(h, [scaled(h, shapes, dtype, 1000.0)], places)
        d_scale, d_flag = h.upload(scale), h.upload(np.array(0, np.float32))
        site = new_site()
        flags = []
        for number, poisoned in enumerate([True, False, False, True, False,
                                           True, True, False]):
            grads = scaled(h, shapes, dtype, 1000.0)
            if poisoned:
                plant_non_finite(grads, shapes)
            for t, g in zip(device.tensors[0], grads):
                overwrite(h, t, g)
            want_flag = np.array(7.0, np.float32)
            status, message = cpu_unscale(h.lib, grads, scale, grads,
                                          want_flag)
            assert status == OK, message
            status, message = cuda_unscale(h, site, len(shapes),
                                           device.tensors[0], d_scale,
                                           device.tensors[0], d_flag)
            assert status == OK, message
            expect_unscaled([t.download() for t in device.tensors[0]], grads,
                            f"call {number}")
            flag = d_flag.download()
            assert harness.bitwise_equal(flag, want_flag), (
                f"call {number} ({'non-' if poisoned else ''}finite): "
                f"found_inf {flag}, the cpu's {want_flag}")
            flags.append(float(flag))
        h.expect_no_device_error()
        for t in (d_scale, d_flag):
            t.free()
        device.free()
        return f"found_inf {flags}"
    return body


def unscale_then_update_case(h, op_config, dtype):
    """Dynamic loss scaling as a compiled program runs it: unscale in
    place on the device (found_inf stays in device memory), then the
    group update in place with that found_inf, the same two sites each
    step; the cpu does the same with its own flag. A step with inf or NaN
    in the gradients leaves every parameter and state as it was."""
    op, params = CONFIGS[op_config]

    def body():
        shapes = SHAPES[:7]
        places = [place_of(k) for k in range(len(shapes))]
        host = random_group(h, op, shapes, dtype)
        device = DeviceGroup(h, host, places)
        scale = np.array(65536.0 * 3, np.float32)
        d_scale = h.upload(scale)
        d_flag = h.upload(np.array(7.0, np.float32))
        unscale_site, update_site = new_site(), new_site()
        skipped = 0
        for number, poisoned in enumerate([False, True, False, True, False],
                                          start=1):
            step = Step(h, shapes, dtype, 0.05, dtype, number, places)
            step.grads = scaled(h, shapes, dtype, float(scale))
            if poisoned:
                plant_non_finite(step.grads, shapes)
            grads = step.device_grads(device)
            before = device.download()
            status, message = cuda_unscale(h, unscale_site, len(shapes),
                                           grads, d_scale, grads, d_flag)
            assert status == OK, message
            t = device.tensors
            status, message = cuda_group(h, op, update_site, len(shapes),
                                         [t[0], grads] + t[1:], step.d_lr,
                                         step.d_step, t, params, d_flag)
            assert status == OK, message
            host_flag = np.array(7.0, np.float32)
            status, message = cpu_unscale(h.lib, step.grads, scale,
                                          step.grads, host_flag)
            assert status == OK, message
            status, message = cpu_group(h.lib, op, len(shapes),
                                        [host[0], step.grads] + host[1:],
                                        step.lr, step.step, host, params,
                                        host_flag)
            assert status == OK, message
            assert harness.bitwise_equal(d_flag.download(), host_flag), (
                f"step {number}: found_inf {d_flag.download()}, the cpu's "
                f"{host_flag}")
            got = device.download()
            if poisoned:
                skipped += 1
                for j, (g, w) in enumerate(zip(got, before)):
                    for k in range(len(shapes)):
                        assert harness.bitwise_equal(g[k], w[k]), (
                            f"step {number}: tensor {j} of entry {k} was "
                            "updated despite found_inf")
            compare_groups(got, host, op, f"step {number}")
            step.free()
        h.expect_no_device_error()
        for t in (d_scale, d_flag):
            t.free()
        device.free()
        return f"{skipped} of 5 steps skipped"
    return body


def unscale_capture_case(h):
    """unscale and the momentum group (with its found_inf) captured in one
    CUDA graph, replayed over new gradients copied into the same buffers:
    each replay zeroes found_inf again (a finite replay after a
    non-finite one updates), and matches the cpu."""
    _, params = CONFIGS["momentum weight_decay"]

    def body():
        shapes = [(CHUNK + 5,), (64,), (3, 7), ()]
        places = ["aligned", "unaligned", "aligned", "aligned"]
        host = random_group(h, "momentum", shapes, np.float32)
        device = DeviceGroup(h, host, places)
        scale = np.array(1024.0 * 3, np.float32)
        d_scale = h.upload(scale)
        d_flag = h.upload(np.array(0.0, np.float32))
        step = Step(h, shapes, np.float32, 0.1, np.float32, 1, places)
        grads = step.device_grads(device)
        unscale_site, update_site = new_site(), new_site()
        t = device.tensors

        def calls():
            status, message = cuda_unscale(h, unscale_site, len(shapes),
                                           grads, d_scale, grads, d_flag)
            assert status == OK, message
            status, message = cuda_group(h, "momentum", update_site,
                                         len(shapes), [t[0], grads, t[1]],
                                         step.d_lr, None, t, params, d_flag)
            assert status == OK, message

        def cpu_step_of(host_grads):
            host_flag = np.array(7.0, np.float32)
            status, message = cpu_unscale(h.lib, host_grads, scale,
                                          host_grads, host_flag)
            assert status == OK, message
            status, message = cpu_group(h.lib, "momentum", len(shapes),
                                        [host[0], host_grads, host[1]],
                                        step.lr, None, host, params,
                                        host_flag)
            assert status == OK, message
            return host_flag

        # The sites' first calls, outside capture (a finite step).
        fresh = scaled(h, shapes, np.float32, float(scale))
        for d, g in zip(grads, fresh):
            overwrite(h, d, g)
        calls()
        cpu_step_of(fresh)
        compare_groups(device.download(), host, "momentum", "first call")
        with Capture(h) as graph:
            calls()
        flags = []
        for number, poisoned in enumerate([True, False, True, True, False]):
            fresh = scaled(h, shapes, np.float32, float(scale))
            if poisoned:
                fresh[0].flat[CHUNK + 2] = np.nan
            for d, g in zip(grads, fresh):
                overwrite(h, d, g)
            before = device.download()
            graph.launch()
            host_flag = cpu_step_of(fresh)
            flag = d_flag.download()
            assert harness.bitwise_equal(flag, host_flag), (
                f"replay {number}: found_inf {flag}, the cpu's {host_flag}")
            got = device.download()
            if poisoned:
                for j, (g, w) in enumerate(zip(got, before)):
                    for k in range(len(shapes)):
                        assert harness.bitwise_equal(g[k], w[k]), (
                            f"replay {number}: tensor {j} of entry {k} was "
                            "updated despite found_inf")
            compare_groups(got, host, "momentum", f"replay {number}")
            flags.append(float(flag))
        graph.destroy()
        step.free()
        for x in (d_scale, d_flag):
            x.free()
        device.free()
        h.expect_no_device_error()
        return f"found_inf per replay {flags}"
    return body


UNSCALE_SHAPE = [(4, 6), (5,), (), (3, 2, 2)]


def unscale_state(h, device):
    """A valid unscale call's arguments over f32 UNSCALE_SHAPE entries into
    distinct outputs (prefilled), on the host or uploaded via `device`."""
    rng = np.random.default_rng(31)
    grads = [np.array(rng.standard_normal(s) * 3000.0, np.float32)
             for s in UNSCALE_SHAPE]
    outputs = [np.full(s, GARBAGE, np.float32) for s in UNSCALE_SHAPE]
    scale, flag = np.array(3000.0, np.float32), np.array(7.0, np.float32)
    if device is not None:
        grads = [device.upload(a, "aligned") for a in grads]
        outputs = [device.upload(a, "aligned") for a in outputs]
        scale, flag = device.upload(scale, "aligned"), \
            device.upload(flag, "aligned")
    return {"count": len(UNSCALE_SHAPE), "grads": grads,
            "new_grads": outputs, "scale": scale, "found_inf": flag}


def unscale_spoil(key, value):
    """state[key] = value (a NumPy array uploaded for the device call)."""
    def fn(state, device):
        state[key] = device.upload(value, "aligned") \
            if device is not None and isinstance(value, np.ndarray) else value
    return fn


def unscale_entry(key, k, array):
    """state[key][k] = array (uploaded for the device call)."""
    def fn(state, device):
        state[key] = list(state[key])
        state[key][k] = array if device is None else \
            device.upload(array, "aligned")
    return fn


def unscale_all_dtype(dtype):
    def fn(state, device):
        for key in ("grads", "new_grads"):
            values = [a if device is None else a.download()
                      for a in state[key]]
            values = [v.astype(dtype) for v in values]
            state[key] = values if device is None else \
                [device.upload(v, "aligned") for v in values]
    return fn


def unscale_same_error_case(h, spoil_fn, fragment):
    """fluid_cpu_unscale_grads and fluid_cuda_unscale_grads refuse the
    call with the same status and message (cuda's entry point), writing
    nothing; on the device with a fresh site and with a site whose table
    a valid call of the same buffers cached just before."""
    def body():
        state = unscale_state(h, None)
        spoil_fn(state, None)
        cpu_status, cpu_message = cpu_unscale_state(h, state)
        assert cpu_status == INVALID_ARGUMENT, \
            f"cpu: {cpu_status} {cpu_message!r}"
        assert cpu_message == f"fluid_cpu_unscale_grads: {fragment}", \
            cpu_message
        for cached in (False, True):
            device = DeviceGroup(h, [], [])
            clean = unscale_state(h, device)
            site = new_site()
            if cached:
                status, message = cuda_unscale_state(h, site, clean)
                assert status == OK, message
            spoiled = dict(clean)
            spoil_fn(spoiled, device)
            buffers = [t for key in ("grads", "new_grads")
                       for t in (spoiled[key] or [])
                       if isinstance(t, fluidcuda.DeviceTensor)]
            buffers += [spoiled[key] for key in ("scale", "found_inf")
                        if isinstance(spoiled[key], fluidcuda.DeviceTensor)]
            before = [t.download() for t in buffers]
            status, message = cuda_unscale_state(h, site, spoiled)
            if status != cpu_status or \
                    message != harness.cuda_message(cpu_message):
                raise AssertionError(
                    f"cuda ({'cached' if cached else 'fresh'} site): "
                    f"{status} {message!r}; cpu: {cpu_status} "
                    f"{cpu_message!r}")
            for t, old in zip(buffers, before):
                assert harness.bitwise_equal(t.download(), old), \
                    "a buffer was written"
            device.free()
        h.expect_no_device_error()
        return harness.cuda_message(cpu_message)
    return body


def cpu_unscale_state(h, state):
    grads, new_grads = state["grads"], state["new_grads"]
    status = h.lib.fluid_cpu_unscale_grads(
        state["count"], descriptors(grads), single(state["scale"]),
        descriptors(new_grads), single(state["found_inf"]))
    return status, fluidcuda.last_error(h.lib)


def cuda_unscale_state(h, site, state):
    return cuda_unscale(h, site, state["count"], state["grads"],
                        state["scale"], state["new_grads"],
                        state["found_inf"])


def unscale_error_cases(h):
    f32 = np.float32
    cases = [
        ("count 0", unscale_spoil("count", 0), "count must be >= 1, got 0"),
        ("null grads array", unscale_spoil("grads", None),
         "grads array is null"),
        ("null new_grads array", unscale_spoil("new_grads", None),
         "new_grads array is null"),
        ("grads of entry 2 of dtype f64",
         unscale_entry("grads", 2, np.ones((), np.float64)),
         "entry 2: grads[2] has dtype f64 but grads[0] has f32"),
        ("new_grads of entry 1 of dtype f64",
         unscale_entry("new_grads", 1, np.ones(5, np.float64)),
         "entry 1: new_grads[1] has dtype f64 but grads[1] has f32"),
        ("new_grads of entry 3 of another shape",
         unscale_entry("new_grads", 3, np.ones((3, 4), f32)),
         "entry 3: new_grads[3] shape [3,4] does not match expected "
         "[3,2,2]"),
        ("f64 scale", unscale_spoil("scale", np.array(3000.0)),
         "scale has dtype f64; expected f32"),
        ("scale of rank 1", unscale_spoil("scale", np.ones(1, f32)),
         "scale must have rank 0, got shape [1]"),
        ("null scale", unscale_spoil("scale", None),
         "scale descriptor is null"),
        ("f64 found_inf", unscale_spoil("found_inf", np.array(7.0)),
         "found_inf has dtype f64; expected f32"),
        ("found_inf of rank 1",
         unscale_spoil("found_inf", np.full(1, 7.0, f32)),
         "found_inf must have rank 0, got shape [1]"),
        ("null found_inf", unscale_spoil("found_inf", None),
         "found_inf descriptor is null"),
    ]
    for name, fn, fragment in cases:
        h.case(f"error unscale: {name}",
               unscale_same_error_case(h, fn, fragment))

    def f16_gradients():
        """Refused on both, naming the entry and the dtype (the cpu says
        "expected f32 or f64", the cuda kernels their own wording)."""
        state = unscale_state(h, None)
        unscale_all_dtype(np.float16)(state, None)
        cpu_status, cpu_message = cpu_unscale_state(h, state)
        device = DeviceGroup(h, [], [])
        spoiled = unscale_state(h, device)
        unscale_all_dtype(np.float16)(spoiled, device)
        status, message = cuda_unscale_state(h, new_site(), spoiled)
        device.free()
        for who, got_status, text, entry in [
                ("cpu", cpu_status, cpu_message, "fluid_cpu"),
                ("cuda", status, message, "fluid_cuda")]:
            assert got_status != OK, f"{who} accepted f16 gradients"
            fragment = (f"{entry}_unscale_grads: entry 0: grads[0] has "
                        "dtype f16")
            assert text.startswith(fragment), f"{who}: {text!r}"
        return f"cpu {cpu_status} {cpu_message!r}; cuda {status} {message!r}"

    def host_flag():
        device = DeviceGroup(h, [], [])
        state = unscale_state(h, device)
        state["found_inf"] = np.array(7.0, np.float32)
        status, message = cuda_unscale_state(h, new_site(), state)
        device.free()
        assert status == INVALID_ARGUMENT, f"status {status}: {message!r}"
        fragment = "fluid_cuda_unscale_grads: found_inf data"
        assert message.startswith(fragment), message
        return message

    h.case("error unscale: f16 gradients", f16_gradients)
    h.case("error unscale: found_inf in host memory", host_flag)


def loss_scaling_cases(h):
    for mode, dtype in harness.FLOATS:
        for config in ["sgd weight_decay", "momentum nesterov weight_decay",
                       "adam weight_decay", "adamw"]:
            h.case(f"{config} {mode} found_inf in place",
                   skip_case(h, config, dtype, True))
            h.case(f"{config} {mode} found_inf",
                   skip_case(h, config, dtype, False))
        for scale in [65536.0, 3.0, 12345.678]:
            h.case(f"unscale {mode} scale {scale}",
                   unscale_case(h, dtype, scale, False, False))
            h.case(f"unscale {mode} scale {scale} in place",
                   unscale_case(h, dtype, scale, True, False))
        h.case(f"unscale {mode} inf, -inf and NaN set found_inf",
               unscale_case(h, dtype, 1000.0, False, True))
        h.case(f"unscale {mode} inf, -inf and NaN set found_inf in place",
               unscale_case(h, dtype, 1000.0, True, True))
        h.case(f"unscale {mode} repeated calls of one site",
               unscale_repeated_case(h, dtype))
        h.case(f"unscale then momentum {mode}",
               unscale_then_update_case(h, "momentum weight_decay", dtype))
        h.case(f"unscale then adamw {mode}",
               unscale_then_update_case(h, "adamw", dtype))
    h.case("unscale f32 site NULL",
           unscale_case(h, np.float32, 3.0, True, True, site=None))
    h.case("unscale f32 only entries without elements",
           unscale_case(h, np.float32, 3.0, False, False,
                        shapes=[(0,), (3, 0)]))
    h.case("unscale f64 one entry of more chunks than blocks",
           unscale_case(h, np.float64, 3.0, True, True,
                        shapes=[(8 * 160 * CHUNK + 3,)]))
    h.case("capture: unscale and momentum with found_inf, replayed",
           unscale_capture_case(h))
    unscale_error_cases(h)


def main():
    h = harness.Harness(sys.argv)
    declare_groups(h.lib)
    for mode, dtype in harness.FLOATS:
        other = np.float64 if dtype == np.float32 else np.float32
        for config in CONFIGS:
            h.case(f"{config} {mode} in place",
                   update_case(h, config, dtype, dtype, True))
            h.case(f"{config} {mode}",
                   update_case(h, config, dtype, dtype, False,
                               shapes=SHAPES[:6]))
        h.case(f"momentum {mode} lr {np.dtype(other).name} in place",
               update_case(h, "momentum weight_decay", dtype, other, True,
                           shapes=SHAPES[:6]))
        h.case(f"adam {mode} equals fluid_cuda_adam per entry",
               adam_equals_single_case(h, dtype))
    h.case("momentum f32 one entry of one chunk",
           update_case(h, "momentum", np.float32, np.float32, True,
                       shapes=[(CHUNK,)]))
    # The grid has at most 8 blocks per multiprocessor (kWaves); more chunks
    # than that (on a GPU of up to 160 multiprocessors) make blocks loop.
    h.case("momentum f32 more chunks than blocks",
           update_case(h, "momentum nesterov weight_decay", np.float32,
                       np.float32, True,
                       shapes=[(8 * 160 * CHUNK + 3,), (CHUNK + 1,)],
                       steps=2))
    h.case("sgd f64 only entries without elements",
           update_case(h, "sgd", np.float64, np.float64, True,
                       shapes=[(0,), (3, 0)]))
    cache_cases(h)
    capture_cases(h)
    for op in ["sgd", "momentum", "adam"]:
        h.case(f"{op} lr -0.1 is reported, nothing written",
               bad_value_case(h, op, -0.1, 1, "lr is -0.1; it must be >= 0"))
    h.case("momentum lr NaN is reported, nothing written",
           bad_value_case(h, "momentum", np.nan, 1, "lr is nan"))
    h.case("adam step 0 is reported, nothing written",
           bad_value_case(h, "adam", 0.1, 0, "step is 0"))
    error_cases(h)
    loss_scaling_cases(h)
    h.finish()


if __name__ == "__main__":
    main()
