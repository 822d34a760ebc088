#!/usr/bin/python3
"""Writes the fuzzers' seed corpora (fuzz/corpus/<target>/) and dictionaries
(fuzz/dict/<target>.dict) from the lit tests' inputs and from small files
made here: for each format a few valid files and near-valid ones (one field
wrong), so the fuzzers start next to every check of the parsers.

    /usr/bin/python3 fuzz/make-corpus.py [TARGET...]

Needs NumPy, PIL and onnx (scripts/setup.sh installs them); PyTorch, when present,
adds a small exported CNN. The output is deterministic: run it again after
changing it, and commit what changed.
"""

import gzip
import io
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import warnings
import zlib

import numpy as np

FUZZ = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(FUZZ)
CORPUS = os.path.join(FUZZ, "corpus")
DICT = os.path.join(FUZZ, "dict")


def writer(target):
    folder = os.path.join(CORPUS, target)
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(folder)

    def save(name, content):
        if isinstance(content, str):
            content = content.encode()
        with open(os.path.join(folder, name), "wb") as f:
            f.write(content)
    return save


def write_dict(target, tokens):
    """A libFuzzer dictionary: one quoted token per line, escaped."""
    os.makedirs(DICT, exist_ok=True)
    lines = []
    for token in sorted({t.encode() if isinstance(t, str) else t
                         for t in tokens}):
        escaped = "".join(chr(b) if 0x20 <= b < 0x7f and b not in b'"\\'
                          else f"\\x{b:02x}" for b in token)
        lines.append(f'"{escaped}"')
    with open(os.path.join(DICT, target + ".dict"), "w") as f:
        f.write(f"# libFuzzer dictionary for {target}; written by "
                "fuzz/make-corpus.py.\n")
        f.write("\n".join(lines) + "\n")


def gz(content):
    """gzip with a fixed timestamp, so the corpus is reproducible."""
    out = io.BytesIO()
    with gzip.GzipFile(fileobj=out, mode="wb", mtime=0) as f:
        f.write(content)
    return out.getvalue()


# --- fuzz-npy ---------------------------------------------------------------

def npy_bytes(array, version=None):
    out = io.BytesIO()
    if version is None:
        np.save(out, array)
    else:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            np.lib.format.write_array(out, array, version=version)
    return out.getvalue()


def npy_raw(header, data=b"", version=(1, 0)):
    """A .npy file with the header dict text given as it is."""
    header = header.encode("latin1")
    length = struct.pack("<H" if version[0] == 1 else "<I", len(header))
    return b"\x93NUMPY" + bytes(version) + length + header + data


def make_npy():
    save = writer("fuzz-npy")
    rng = np.random.default_rng(0)
    for dtype in ["<f4", "<f8", "<i4", "<i8", "|u1", "<f2"]:
        a = (rng.standard_normal((2, 3)) * 10).astype(dtype)
        save(f"valid-{dtype[1:]}-2x3.npy", npy_bytes(a))
    save("valid-scalar.npy", npy_bytes(np.float32(1.5)))
    save("valid-empty.npy", npy_bytes(np.zeros((2, 0, 3), np.float32)))
    save("valid-vector.npy", npy_bytes(np.arange(5, dtype=np.int64)))
    save("valid-rank8.npy", npy_bytes(np.ones((1, 2, 1, 2, 1, 2, 1, 2), "u1")))
    save("valid-v2.npy", npy_bytes(np.arange(6, dtype="<f4"), (2, 0)))
    save("valid-v3.npy", npy_bytes(np.arange(6, dtype="<f8"), (3, 0)))
    good = npy_bytes(np.arange(6, dtype="<f4").reshape(2, 3))
    save("truncated-data.npy", good[:-5])
    save("truncated-header.npy", good[:40])
    save("extra-bytes.npy", good + b"\0\0\0\0")
    save("fortran.npy", npy_bytes(np.asfortranarray(np.ones((2, 3), "<f4"))))
    save("big-endian.npy", npy_bytes(np.ones((2, 3), ">f4")))
    save("bool.npy", npy_bytes(np.ones(3, bool)))
    save("rank9.npy", npy_bytes(np.ones((1,) * 9, "u1")))
    save("bad-version.npy", b"\x93NUMPY\x04\x00" + good[8:])
    save("bad-magic.npy", b"\x93NUMPX" + good[6:])
    save("huge-shape.npy", npy_raw(
        "{'descr': '<f4', 'fortran_order': False, "
        "'shape': (4294967296, 4294967296), }\n"))
    save("negative-dim.npy", npy_raw(
        "{'descr': '<f4', 'fortran_order': False, 'shape': (-1,), }\n"))
    save("not-tuple.npy", npy_raw(
        "{'descr': '<f4', 'fortran_order': False, 'shape': (3), }\n",
        b"\0" * 12))
    save("duplicate-key.npy", npy_raw(
        "{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, "
        "'shape': (1,), }\n", b"\0" * 4))
    save("header-too-long.npy", b"\x93NUMPY\x02\x00\xff\xff\xff\x7f{")
    write_dict("fuzz-npy", [
        b"\x93NUMPY", "{", "}", "(", ")", ",", ":", "'", "\"", "'descr'",
        "'fortran_order'", "'shape'", "True", "False", "'<f4'", "'<f8'",
        "'<i4'", "'<i8'", "'|u1'", "'<f2'", "'>f4'", "'<u2'", ",)",
        "9223372036854775807", "4294967296"])


# --- fuzz-safetensors -------------------------------------------------------

def safetensors(header, data=b"", pad=True):
    """A safetensors file with header `header` (a dict, or JSON text)."""
    text = header if isinstance(header, str) else json.dumps(
        header, separators=(",", ":"))
    text = text.encode()
    if pad:
        text += b" " * (-len(text) % 8)
    return struct.pack("<Q", len(text)) + text + data


def make_safetensors():
    save = writer("fuzz-safetensors")
    f32 = np.arange(6, dtype="<f4").tobytes()
    save("valid-f32.safetensors", safetensors(
        {"w": {"dtype": "F32", "shape": [2, 3], "data_offsets": [0, 24]}}, f32))
    entries, data = {}, b""
    for name, (dtype, np_dtype) in {
            "a.f32": ("F32", "<f4"), "b.f64": ("F64", "<f8"),
            "c.i32": ("I32", "<i4"), "d.i64": ("I64", "<i8"),
            "e.f16": ("F16", "<f2"), "f.bf16": ("BF16", "<u2"),
            "g.u8": ("U8", "|u1")}.items():
        values = np.arange(3, dtype=np_dtype).tobytes()
        entries[name] = {"dtype": dtype, "shape": [3],
                         "data_offsets": [len(data), len(data) + len(values)]}
        data += values
    entries["__metadata__"] = {"format": "pt", "step": "12"}
    save("valid-all-dtypes.safetensors", safetensors(entries, data))
    save("valid-scalar-and-empty.safetensors", safetensors(
        {"s": {"dtype": "F64", "shape": [], "data_offsets": [0, 8]},
         "z": {"dtype": "F32", "shape": [4, 0], "data_offsets": [8, 8]}},
        b"\0" * 8))
    save("valid-escapes.safetensors", safetensors(
        '{"layer\\u00e9.\\ud83d\\ude00\\n": {"dtype": "U8", "shape": [2], '
        '"data_offsets": [0, 2]}, "__metadata__": {"k\\"": "v\\\\"}}', b"xy"))
    save("valid-empty.safetensors", safetensors({}))
    save("valid-rank8.safetensors", safetensors(
        {"r": {"dtype": "U8", "shape": [1] * 8, "data_offsets": [0, 1]}},
        b"\1"))
    valid = safetensors(
        {"w": {"dtype": "F32", "shape": [2, 3], "data_offsets": [0, 24]}}, f32)
    save("truncated-data.safetensors", valid[:-4])
    save("truncated-header.safetensors", valid[:20])
    save("extra-data.safetensors", valid + b"\0" * 4)
    save("header-too-long.safetensors", struct.pack("<Q", 1 << 40) + b"{}")
    save("overlap.safetensors", safetensors(
        {"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},
         "b": {"dtype": "F32", "shape": [2], "data_offsets": [4, 12]}},
        b"\0" * 12))
    save("hole.safetensors", safetensors(
        {"a": {"dtype": "F32", "shape": [1], "data_offsets": [4, 8]}},
        b"\0" * 8))
    save("reversed.safetensors", safetensors(
        {"a": {"dtype": "F32", "shape": [1], "data_offsets": [4, 0]}},
        b"\0" * 4))
    save("size-mismatch.safetensors", safetensors(
        {"a": {"dtype": "F64", "shape": [1], "data_offsets": [0, 4]}},
        b"\0" * 4))
    save("overflow.safetensors", safetensors(
        {"a": {"dtype": "F32", "shape": [4294967296, 4294967296],
               "data_offsets": [0, 0]}}))
    save("unknown-dtype.safetensors", safetensors(
        {"a": {"dtype": "C64", "shape": [1], "data_offsets": [0, 8]}},
        b"\0" * 8))
    save("rank9.safetensors", safetensors(
        {"a": {"dtype": "U8", "shape": [1] * 9, "data_offsets": [0, 1]}},
        b"\0"))
    save("duplicate.safetensors", safetensors(
        '{"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},'
        '"a":{"dtype":"U8","shape":[1],"data_offsets":[1,2]}}', b"\0\0"))
    save("unknown-field.safetensors", safetensors(
        {"a": {"dtype": "U8", "shape": [1], "data_offsets": [0, 1],
               "extra": 1}}, b"\0"))
    save("bad-json.safetensors", safetensors(
        '{"a": {"dtype": "U8", "shape": [01], "data_offsets": [0, 1],}}',
        b"\0"))
    write_dict("fuzz-safetensors", [
        "{", "}", "[", "]", ":", ",", "\"", "\\u", "\\ud83d", "\\ude00",
        "\\\"", "\\\\", "\\n", "\"dtype\"", "\"shape\"", "\"data_offsets\"",
        "\"__metadata__\"", "\"F32\"", "\"F64\"", "\"I32\"", "\"I64\"",
        "\"F16\"", "\"BF16\"", "\"U8\"", "\"BOOL\"", "0", "1", "-1", "1.5",
        "1e3", "9223372036854775807", "9223372036854775808", "true",
        "null"])


# --- fuzz-idx ---------------------------------------------------------------

def idx(kind, dims, data):
    """An IDX file: magic {0, 0, type, rank}, big-endian dims, data."""
    return bytes([0, 0, kind, len(dims)]) + b"".join(
        struct.pack(">I", d) for d in dims) + data


def idx_input(images, labels, flags=0):
    """fuzz-idx's packing: flags, image file length, both files."""
    return bytes([flags]) + struct.pack("<I", len(images)) + images + labels


def make_idx():
    save = writer("fuzz-idx")
    rng = np.random.default_rng(0)
    pixels = rng.integers(0, 256, 3 * 4 * 5, dtype=np.uint8).tobytes()
    images = idx(0x08, [3, 4, 5], pixels)
    labels = idx(0x08, [3], bytes([0, 9, 4]))
    save("valid-raw", idx_input(images, labels))
    save("valid-gzip-images", idx_input(images, labels, flags=1))
    save("valid-gzip-both", idx_input(images, labels, flags=3))
    save("valid-gzip-two-members", idx_input(images, labels, flags=7))
    save("valid-gzip-files", idx_input(gz(images), gz(labels)))
    save("valid-one-pixel", idx_input(idx(0x08, [1, 1, 1], b"\x80"),
                                      idx(0x08, [1], b"\x00")))
    save("count-mismatch", idx_input(images, idx(0x08, [2], b"\0\1")))
    save("swapped", idx_input(labels, images))
    save("truncated-images", idx_input(images[:-3], labels))
    save("extra-bytes", idx_input(images + b"\0", labels, flags=2))
    save("element-type-f32", idx_input(idx(0x0D, [3, 4, 5], pixels), labels))
    save("bad-magic", idx_input(b"\x01" + images[1:], labels))
    save("empty-images", idx_input(idx(0x08, [0, 4, 5], b""),
                                   idx(0x08, [0], b"")))
    save("huge-shape", idx_input(idx(0x08, [0xFFFFFFFF] * 3, b""), labels,
                                 flags=1))
    save("gzip-corrupt", idx_input(gz(images)[:-6] + b"\0" * 6, labels))
    save("gzip-trailing", idx_input(gz(images) + b"junk", gz(labels)))
    write_dict("fuzz-idx", [
        b"\x00\x00\x08\x03", b"\x00\x00\x08\x01", b"\x00\x00\x0d\x03",
        b"\x1f\x8b\x08\x00", b"\xff\xff\xff\xff", b"\x00\x00\x00\x00",
        b"\x00\x00\x00\x01", b"\x00\x01\x00\x00"])


# --- fuzz-image -------------------------------------------------------------

def png_chunk(kind, body):
    return (struct.pack(">I", len(body)) + kind + body +
            struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF))


def png_raw(width, height, bit_depth, color_type, rows, extra=b""):
    """A PNG file written here (PIL writes no 16-bit RGB or RGBA): `rows`
    the unfiltered bytes of each row."""
    header = struct.pack(">IIBBBBB", width, height, bit_depth, color_type,
                         0, 0, 0)
    data = b"".join(b"\0" + row for row in rows)
    return (b"\x89PNG\r\n\x1a\n" + png_chunk(b"IHDR", header) + extra +
            png_chunk(b"IDAT", zlib.compress(data, 9)) +
            png_chunk(b"IEND", b""))


def make_image():
    from PIL import Image
    save = writer("fuzz-image")
    rng = np.random.default_rng(0)
    rgb = Image.fromarray(rng.integers(0, 256, (9, 13, 3), dtype=np.uint8))

    def encoded(image, fmt, **options):
        out = io.BytesIO()
        image.save(out, fmt, **options)
        return out.getvalue()

    jpegs = {
        "rgb-420.jpg": encoded(rgb, "JPEG", quality=75),
        "rgb-444.jpg": encoded(rgb, "JPEG", quality=90, subsampling=0),
        "rgb-422-restarts.jpg": encoded(rgb.resize((40, 24)), "JPEG",
                                        subsampling=1, restart_marker_blocks=1),
        "gray.jpg": encoded(rgb.convert("L"), "JPEG"),
        "cmyk.jpg": encoded(rgb.convert("CMYK"), "JPEG"),
        "progressive.jpg": encoded(rgb, "JPEG", progressive=True),
        "progressive-gray.jpg": encoded(rgb.convert("L"), "JPEG",
                                        progressive=True),
        "optimized.jpg": encoded(rgb, "JPEG", optimize=True),
        "one-pixel.jpg": encoded(rgb.crop((0, 0, 1, 1)), "JPEG"),
    }
    pngs = {
        "rgb.png": encoded(rgb, "PNG"),
        "rgba.png": encoded(rgb.convert("RGBA"), "PNG"),
        "gray.png": encoded(rgb.convert("L"), "PNG"),
        "gray-alpha.png": encoded(rgb.convert("LA"), "PNG"),
        "bilevel.png": encoded(rgb.convert("1"), "PNG"),
        "palette.png": encoded(rgb.convert("P", palette=Image.ADAPTIVE,
                                           colors=16), "PNG"),
        "palette-4bit.png": encoded(rgb.convert("P", palette=Image.ADAPTIVE,
                                                colors=16), "PNG", bits=4),
        "palette-transparent.png": encoded(
            rgb.convert("P", palette=Image.ADAPTIVE, colors=8), "PNG",
            transparency=3),
        "gray-16.png": encoded(Image.fromarray(
            rng.integers(0, 65536, (9, 13), dtype=np.uint16)), "PNG"),
        "one-pixel.png": encoded(rgb.crop((0, 0, 1, 1)), "PNG"),
    }
    # 16-bit RGB and RGBA and 2-bit gray, big-endian samples.
    wide = rng.integers(0, 65536, (5, 7, 4), dtype=np.uint16).astype(">u2")
    pngs["rgb-16.png"] = png_raw(7, 5, 16, 2,
                                 [r[:, :3].tobytes() for r in wide])
    pngs["rgba-16.png"] = png_raw(7, 5, 16, 6, [r.tobytes() for r in wide])
    pngs["gray-2bit.png"] = png_raw(
        8, 3, 2, 0, [bytes(rng.integers(0, 256, 2, dtype=np.uint8))
                     for _ in range(3)],
        extra=png_chunk(b"gAMA", struct.pack(">I", 45455)))
    for name, content in {**jpegs, **pngs}.items():
        save(name, content)
    # Truncated and damaged files: the decoders' error paths.
    save("truncated.jpg", jpegs["rgb-420.jpg"][:len(jpegs["rgb-420.jpg"]) // 2])
    save("truncated-progressive.jpg", jpegs["progressive.jpg"][:300])
    save("header-only.jpg", jpegs["rgb-420.jpg"][:2] + b"\xff\xd9")
    save("truncated.png", pngs["rgb.png"][:len(pngs["rgb.png"]) - 20])
    save("truncated-header.png", pngs["rgb.png"][:20])
    bad_crc = bytearray(pngs["gray.png"])
    bad_crc[29] ^= 0xFF  # the IHDR chunk's CRC
    save("bad-crc.png", bytes(bad_crc))
    save("huge.png", png_raw(100000, 100000, 8, 0, []))
    save("not-an-image.gif", b"GIF89a\x01\x00\x01\x00\x00\x00\x00;")
    write_dict("fuzz-image", [
        b"\xff\xd8\xff", b"\xff\xd9", b"\xff\xc0", b"\xff\xc1",
        b"\xff\xc2", b"\xff\xc4", b"\xff\xcc", b"\xff\xda", b"\xff\xdb",
        b"\xff\xdd", b"\xff\xe0", b"\xff\xe1", b"\xff\xee", b"Adobe",
        b"JFIF\x00", b"\x89PNG\r\n\x1a\n", b"IHDR", b"PLTE", b"IDAT",
        b"IEND", b"tRNS", b"gAMA", b"iCCP", b"sBIT", b"\x00\x00\x00\x00",
        b"\xff\xff\xff\xff"])


# --- fuzz-mlir-loader -------------------------------------------------------

def mlir_sources():
    """Every .mlir file of the tests and examples, as (path, text)."""
    for folder in ["test", "examples"]:
        for dirpath, _, names in sorted(os.walk(os.path.join(ROOT, folder))):
            for name in sorted(names):
                if name.endswith(".mlir"):
                    path = os.path.join(dirpath, name)
                    with open(path) as f:
                        yield os.path.relpath(path, ROOT), f.read()


def make_mlir():
    save = writer("fuzz-mlir-loader")
    seen = set()
    for path, text in mlir_sources():
        stem = re.sub(r"[^A-Za-z0-9]+", "-", path[:-len(".mlir")]).strip("-")
        # One seed per split-input-file case; the lit directives go, the
        # cases (valid and invalid alike) stay.
        for index, case in enumerate(re.split(r"^// -----\s*$", text,
                                              flags=re.M)):
            lines = [line for line in case.splitlines()
                     if not re.match(r"\s*//\s*(RUN|CHECK|expected-|REQUIRES)",
                                     line)]
            body = "\n".join(lines).strip() + "\n"
            if len(body) < 8 or body in seen:
                continue
            seen.add(body)
            save(f"{stem}-{index}.mlir", body)
    # Near-valid: what the input guards reject.
    save("guard-nesting.mlir", "func.func @f() -> " + "tensor<" * 300 + "\n")
    save("guard-nul.mlir", "func.func @f() {\n  return\n}\0\n")

    tokens = ["func.func", "module", "return", "func.return", "->", "loc(",
              "tensor<", "memref<", "f16", "f32", "f64", "bf16", "i1", "i32",
              "i64", "index", "x", "?", "%arg0", "^bb0", "@", "#", "!", "{",
              "}", "(", ")", "[", "]", "<", ">", ":", "=", "\"", "dense<",
              "true", "false", "attributes", "private", "unit", "0x7FC00000",
              "-9223372036854775808", "9223372036854775807", "1.0e+308",
              "// -----", "fluid.name"]
    for td in ["FluidOps.td", "FluidMathOps.td", "FluidGradOps.td",
               "FluidOptimizerOps.td", "FluidAttrs.td", "FluidBase.td"]:
        with open(os.path.join(ROOT, "include/fluid/Dialect/Fluid/IR", td)) as f:
            text = f.read()
        tokens += ["fluid." + m for m in re.findall(r'Op<"([a-z0-9_]+)"', text)]
        tokens += re.findall(r":\$([a-z][A-Za-z0-9_]*)", text)
    with open(os.path.join(ROOT, "include/fluid/Dialect/FluidRt/IR",
                           "FluidRtOps.td")) as f:
        text = f.read()
    tokens += ["fluid_rt." + m for m in re.findall(r'Op<"([a-z0-9_]+)"', text)]
    tokens += re.findall(r":\$([a-z][A-Za-z0-9_]*)", text)
    tokens += ["#fluid.init<", "memref.alloc", "memref.dealloc"]
    write_dict("fuzz-mlir-loader", tokens)


# --- fuzz-onnx --------------------------------------------------------------

ONNX_NODE_TESTS = [
    "test_add", "test_averagepool_2d_default", "test_batchnorm_example",
    "test_concat_2d_axis_0", "test_constant", "test_basic_conv_with_padding",
    "test_div", "test_flatten_axis1", "test_gather_0", "test_gemm_default_"
    "matrix_bias", "test_globalaveragepool", "test_identity",
    "test_logsoftmax_axis_1", "test_matmul_2d", "test_maxpool_2d_pads",
    "test_mul", "test_relu", "test_reshape_reordered_all_dims", "test_shape",
    "test_sigmoid", "test_softmax_axis_1", "test_sub", "test_tanh",
    "test_unsqueeze_axis_0", "test_conv_with_strides_padding",
]


def torch_cnn(path):
    """A small CNN with every common layer, exported as PyTorch exports."""
    import torch
    from torch import nn

    torch.manual_seed(0)
    model = nn.Sequential(
        nn.Conv2d(1, 2, 3, padding=1), nn.BatchNorm2d(2), nn.ReLU(),
        nn.MaxPool2d(2), nn.Conv2d(2, 2, 3, stride=2), nn.Sigmoid(),
        nn.AvgPool2d(1), nn.Flatten(), nn.Linear(2, 3), nn.Tanh(),
        nn.Softmax(dim=1)).eval()
    torch.onnx.export(model, torch.zeros(1, 1, 8, 8), path,
                      input_names=["images"], output_names=["probs"],
                      dynamic_axes={"images": {0: "batch"}},
                      training=torch.onnx.TrainingMode.PRESERVE,
                      do_constant_folding=False, opset_version=13)


def make_onnx():
    save = writer("fuzz-onnx")
    with tempfile.TemporaryDirectory() as work:
        subprocess.run([sys.executable,
                        os.path.join(ROOT, "test/Onnx/Inputs/make_models.py"),
                        work], check=True)
        for name in sorted(os.listdir(work)):
            # random.onnx is 4 KB of noise; mutations make plenty of that.
            if name.endswith(".onnx") and name != "random.onnx":
                with open(os.path.join(work, name), "rb") as f:
                    save("lit-" + name, f.read())
        try:
            cnn = os.path.join(work, "cnn.onnx")
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                torch_cnn(cnn)
            with open(cnn, "rb") as f:
                content = f.read()
            save("torch-cnn.onnx", content)
            save("torch-cnn-truncated.onnx", content[:len(content) * 2 // 3])
        except ImportError:
            print("make-corpus: no PyTorch; skipping torch-cnn.onnx")
    data = "/usr/share/libonnx-testdata/data/node"
    for test in ONNX_NODE_TESTS:
        path = os.path.join(data, test, "model.onnx")
        if os.path.exists(path):
            with open(path, "rb") as f:
                save(test[len("test_"):] + ".onnx", f.read())
        else:
            print(f"make-corpus: no {path} (libonnx-testdata); skipped")

    from onnx import AttributeProto, TensorProto
    tokens = ["ai.onnx", "com.microsoft", "batch"]
    tokens += ["Add", "AveragePool", "BatchNormalization", "Concat",
               "Constant", "Conv", "Div", "Flatten", "Gather", "Gemm",
               "GlobalAveragePool", "Identity", "LogSoftmax", "MatMul",
               "MaxPool", "Mul", "Relu", "Reshape", "Shape", "Sigmoid",
               "Softmax", "Sub", "Tanh", "Unsqueeze"]
    tokens += ["axis", "axes", "kernel_shape", "pads", "strides", "dilations",
               "group", "auto_pad", "ceil_mode", "storage_order", "epsilon",
               "momentum", "alpha", "beta", "transA", "transB", "value",
               "allowzero", "start", "end", "count_include_pad",
               "training_mode", "NOTSET", "SAME_UPPER", "VALID"]
    # Varint field keys of the messages the reader walks, as protobuf
    # encodes them: (field number << 3) | wire type.
    tokens += [bytes([key]) for key in range(0x08, 0x80, 0x08)]
    tokens += [bytes([key | 2]) for key in range(0x08, 0x80, 0x08)]
    tokens += [bytes([t]) for t in TensorProto.DataType.values()]
    tokens += [bytes([k]) for k in AttributeProto.AttributeType.values()]
    write_dict("fuzz-onnx", tokens)


MAKERS = {
    "fuzz-npy": lambda: make_npy(),
    "fuzz-safetensors": lambda: make_safetensors(),
    "fuzz-idx": lambda: make_idx(),
    "fuzz-image": lambda: make_image(),
    "fuzz-mlir-loader": lambda: make_mlir(),
    "fuzz-onnx": lambda: make_onnx(),
}


def main():
    targets = sys.argv[1:] or list(MAKERS)
    for target in targets:
        if target not in MAKERS:
            sys.exit(f"make-corpus: unknown target '{target}' "
                     f"(targets: {' '.join(MAKERS)})")
    for target in targets:
        MAKERS[target]()
    total = sum(os.path.getsize(os.path.join(d, n))
                for d, _, names in os.walk(CORPUS) for n in names)
    print(f"make-corpus: {total} bytes in {CORPUS}")


if __name__ == "__main__":
    main()
