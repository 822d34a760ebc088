# RUN: %python %s %fluid_runtime_lib
"""fluid_safetensors_open rejects a header whose tensor name, metadata key or
metadata value holds a NUL character (JSON "\\u0000"). The C interface hands
these out and looks them up as NUL-terminated strings, so such a file used to
open, list tensor "a\\u0000b" as "a" and then fail to read it, or read tensor
"a" in its place (the fuzz-safetensors harness checks for this). The same
strings with \\u0001 in place of the NUL still open and read back whole.
"""

import ctypes
import os
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "lib"))
import fluidrt  # noqa: E402
from fluidrt import INVALID_ARGUMENT, OK  # noqa: E402
from scratch import Scratch  # noqa: E402

lib = fluidrt.load(sys.argv[1])
P = ctypes.c_void_p
lib.fluid_safetensors_open.argtypes = [ctypes.c_char_p, ctypes.POINTER(P)]
lib.fluid_safetensors_count.argtypes = [P, ctypes.POINTER(ctypes.c_int64)]
lib.fluid_safetensors_name.argtypes = [P, ctypes.c_int64,
                                       ctypes.POINTER(ctypes.c_char_p)]
lib.fluid_safetensors_metadata.argtypes = [P, ctypes.c_char_p,
                                           ctypes.POINTER(ctypes.c_char_p)]
lib.fluid_safetensors_close.argtypes = [P]
lib.fluid_safetensors_close.restype = None

SCRATCH = Scratch(prefix="fluid-io-safetensors-nul-")


def safetensors(header_text, data):
    text = header_text.encode()
    text += b" " * (-len(text) % 8)
    return struct.pack("<Q", len(text)) + text + data


def tensor(name, begin):
    return (f'"{name}": {{"dtype": "U8", "shape": [1], '
            f'"data_offsets": [{begin}, {begin + 1}]}}')


def header(tensors, metadata=""):
    members = [tensor(name, i) for i, name in enumerate(tensors)]
    if metadata:
        members.insert(0, f'"__metadata__": {{{metadata}}}')
    return "{" + ", ".join(members) + "}"


def open_status(name, text, data):
    """fluid_safetensors_open's status on the file; the reader, if any, is
    closed after checking it lists what the header holds."""
    file = SCRATCH.save(name, safetensors(text, data))
    handle = P()
    status = lib.fluid_safetensors_open(file.encode(), ctypes.byref(handle))
    if status == OK:
        lib.fluid_safetensors_close(handle)
    else:
        assert not handle.value, "a failed open must not return a reader"
    return file, status


BAD = [
    ("name", header(["a\\u0000b"]), "tensor name \"a\\u0000b\""),
    ("second-name", header(["a", "a\\u0000b"]), "tensor name \"a\\u0000b\""),
    ("only-nul", header(["\\u0000"]), "tensor name \"\\u0000\""),
    ("metadata-key", header(["w"], '"k\\u0000": "v"'),
     "metadata key \"k\\u0000\""),
    ("metadata-value", header(["w"], '"format": "p\\u0000t"'),
     "the value of metadata key \"format\" \"p\\u0000t\""),
]
for name, text, what in BAD:
    data = b"\0" * text.count("data_offsets")
    file, status = open_status(name + ".safetensors", text, data)
    fluidrt.expect_status(lib, status, INVALID_ARGUMENT,
                          [file, what, "contains a NUL character"])
    print(f"ok: {name} rejected")

# Control: the same files without the NUL (a \u0001 instead) open, and the
# names and metadata read back whole.
text = header(["a", "a\\u0001b"], '"k\\u0001": "p\\u0001t"')
file, status = open_status("control.safetensors", text, b"\0\0")
fluidrt.check(lib, status)
handle = P()
fluidrt.check(lib, lib.fluid_safetensors_open(file.encode(),
                                              ctypes.byref(handle)))
count = ctypes.c_int64()
fluidrt.check(lib, lib.fluid_safetensors_count(handle, ctypes.byref(count)))
names = []
for i in range(count.value):
    out = ctypes.c_char_p()
    fluidrt.check(lib, lib.fluid_safetensors_name(handle, i, ctypes.byref(out)))
    names.append(out.value)
assert names == [b"a", b"a\x01b"], names
value = ctypes.c_char_p()
fluidrt.check(lib, lib.fluid_safetensors_metadata(handle, b"k\x01",
                                                  ctypes.byref(value)))
assert value.value == b"p\x01t", value.value
lib.fluid_safetensors_close(handle)
print("ok: control opens")

SCRATCH.remove()
print("all safetensors NUL checks passed")
