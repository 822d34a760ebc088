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
it. Descriptor errors get the cpu group's messages.
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
ARRAYS = {"sgd": 4, "momentum": 6, "adam": 9}
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


def group_arguments(op, count, inputs, lr, step, outputs, params):
    """inputs = [params, grads, *state], outputs = [new_params, *new_state]:
    lists of tensors per array (or None)."""
    ins = [descriptors(a) for a in inputs]
    outs = [descriptors(a) for a in outputs]
    if op == "sgd":
        middle = [ins[0], ins[1], single(lr), outs[0]]
    elif op == "momentum":
        middle = [ins[0], ins[1], ins[2], single(lr), outs[0], outs[1]]
    else:
        middle = ins + [single(lr), single(step)] + outs
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
                h.ctx("adam", p, grads[k], m, v, step.d_lr, step.d_step, p,
                      m, v, params)
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
                "lr": lr, "step": step, "count": self.count,
                "params": self.params, "device": device is not None}

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
            state["outputs"], state["params"]]
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
    h.finish()


if __name__ == "__main__":
    main()
