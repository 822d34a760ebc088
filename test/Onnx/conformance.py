# The ONNX backend node tests (Debian's libonnx-testdata) of every operator
# that fluid-import-onnx imports, as `fluid-import-onnx --list-operators`
# prints its operator table: each test's model.onnx is imported, run on the
# cpu backend with fluid-run on test_data_set_0's inputs, and compared
# with its expected outputs (rtol 1e-3, atol 1e-5; integers exactly). A test
# is skipped only for a reason listed in SKIPS, and the import must fail
# with the error that reason names, so the list cannot go stale. The run
# regenerates docs/onnx-conformance.md and fails if the committed table
# differs; `conformance.py --write-table` updates it.
#
# Integer graph inputs (Reshape's shape, Unsqueeze's axes, Gather's indices,
# Slice's starts and ends), the scalar operands Clip's bounds, Pad's value,
# Range's start, limit and delta and Dropout's ratio, and Where's and
# Dropout's BOOL condition and training mode are given to the importer as
# initializers holding the test's values: fluid programs are statically
# shaped, and the importer composes Clip, Pad and Where from fluid ops
# around constants and folds Range, so these must be known at import time,
# as they are in exported models.
#
# RUN: rm -rf %t && mkdir -p %t
# RUN: %python %s --work %t

import argparse
import concurrent.futures
import os
import subprocess
import sys

import numpy as np
import onnx
from onnx import numpy_helper

NODE_TESTS = "/usr/share/libonnx-testdata/data/node"
ROOT = os.path.normpath(os.path.join(os.path.dirname(__file__), "..", ".."))
TABLE = os.path.join(ROOT, "docs", "onnx-conformance.md")
RTOL, ATOL = 1e-3, 1e-5

_UINT8 = ("UINT8 elements: fluid computes in FLOAT and DOUBLE",
          "element type UINT8")
# The graph inputs (by operator, their indices) that must be known at
# import time although they are not integers.
KNOWN_INPUTS = {"Clip": (1, 2), "Dropout": (1, 2), "Pad": (2,),
                "Range": (0, 1, 2), "Where": (0,)}


def _input_type(name):
    return (f"{name} elements: the importer reads FLOAT, DOUBLE, INT32 and "
            "INT64 tensors", f"has element type {name}")


_LAYER_NORM_EXPANDED = (
    "the function body's Size, Neg and Reciprocal are not imported (the "
    "operator is)", "operator 'Size' is not supported")
_INTEGER_POW = (
    "an integer base with a run-time FLOAT exponent: fluid computes powers "
    "of FLOAT and DOUBLE (integer ones known at import time are folded)",
    "must be a FLOAT or DOUBLE tensor")


def _cast_to(name, number):
    return (f"a cast to {name}: the importer casts to FLOAT, DOUBLE, INT32 "
            "and INT64", f"attribute 'to' = {number} ({name}) is not "
            "supported")


_DROPOUT_MASK = (
    "the mask is a BOOL graph output: fluid has no BOOL tensors (the mask, "
    "all true, is known at import time)",
    "a constant of element type BOOL is not supported")
_DROPOUT_TRAINING = (
    "training_mode true with a ratio above 0: fluid does not drop at random",
    "drops elements at random")
_RUNTIME_MOD = (
    "a Mod of run-time tensors: Mod is folded on values known at import "
    "time (shape arithmetic), and fluid has no remainder op",
    "Mod is supported on values known at import time only")
_NOT = ("BOOL tensors: fluid has none (Not is folded on values known at "
        "import time)", "has element type BOOL")
_RANGE_EXPANDED = (
    "the function body's Ceil and Loop are not imported (the operator is)",
    "operator 'Ceil' is not supported")
_RUNTIME_SCATTER = (
    "reduction add or mul on run-time tensors: ScatterND is folded on values "
    "known at import time, and only reduction none is imported at run time",
    "is supported on values known at import time only")

# test name: (reason, a part of the importer's error message).
SKIPS = {
    "test_dropout_default_mask": _DROPOUT_MASK,
    "test_dropout_default_mask_ratio": _DROPOUT_MASK,
    "test_training_dropout_zero_ratio_mask": _DROPOUT_MASK,
    "test_training_dropout": _DROPOUT_TRAINING,
    "test_training_dropout_default": _DROPOUT_TRAINING,
    "test_training_dropout_default_mask": _DROPOUT_TRAINING,
    "test_training_dropout_mask": _DROPOUT_TRAINING,
    "test_mod_mixed_sign_float32": _RUNTIME_MOD,
    "test_mod_mixed_sign_float64": _RUNTIME_MOD,
    "test_mod_mixed_sign_float16": _input_type("FLOAT16"),
    "test_mod_mixed_sign_int16": _input_type("INT16"),
    "test_mod_mixed_sign_int8": _input_type("INT8"),
    "test_mod_uint16": _input_type("UINT16"),
    "test_mod_uint32": _input_type("UINT32"),
    "test_mod_uint64": _input_type("UINT64"),
    "test_mod_uint8": _input_type("UINT8"),
    "test_not_2d": _NOT,
    "test_not_3d": _NOT,
    "test_not_4d": _NOT,
    "test_range_float_type_positive_delta_expanded": _RANGE_EXPANDED,
    "test_range_int32_type_negative_delta_expanded": _RANGE_EXPANDED,
    "test_scatternd_add": _RUNTIME_SCATTER,
    "test_scatternd_multiply": _RUNTIME_SCATTER,
    "test_add_uint8": _UINT8,
    "test_sub_uint8": _UINT8,
    "test_mul_uint8": _UINT8,
    "test_div_uint8": _UINT8,
    "test_maxpool_2d_uint8": _UINT8,
    "test_clip_default_int8_inbounds": _input_type("INT8"),
    "test_clip_default_int8_max": _input_type("INT8"),
    "test_clip_default_int8_min": _input_type("INT8"),
    "test_cast_BFLOAT16_to_FLOAT": _input_type("BFLOAT16"),
    "test_cast_FLOAT16_to_DOUBLE": _input_type("FLOAT16"),
    "test_cast_FLOAT16_to_FLOAT": _input_type("FLOAT16"),
    "test_cast_STRING_to_FLOAT": _input_type("STRING"),
    "test_cast_DOUBLE_to_FLOAT16": _cast_to("FLOAT16", 10),
    "test_cast_FLOAT_to_FLOAT16": _cast_to("FLOAT16", 10),
    "test_cast_FLOAT_to_BFLOAT16": _cast_to("BFLOAT16", 16),
    "test_cast_FLOAT_to_STRING": _cast_to("STRING", 8),
    # CastLike's body is a Cast; its second input has the target type.
    "test_castlike_BFLOAT16_to_FLOAT_expanded": _input_type("BFLOAT16"),
    "test_castlike_DOUBLE_to_FLOAT16_expanded": _input_type("FLOAT16"),
    "test_castlike_FLOAT16_to_DOUBLE_expanded": _input_type("FLOAT16"),
    "test_castlike_FLOAT16_to_FLOAT_expanded": _input_type("FLOAT16"),
    "test_castlike_FLOAT_to_BFLOAT16_expanded": _input_type("BFLOAT16"),
    "test_castlike_FLOAT_to_FLOAT16_expanded": _input_type("FLOAT16"),
    "test_castlike_FLOAT_to_STRING_expanded": _input_type("STRING"),
    "test_castlike_STRING_to_FLOAT_expanded": _input_type("STRING"),
    "test_einsum_batch_diagonal": (
        "an ellipsis and a diagonal: Einsum is imported as a transpose or "
        "a batched product", "ellipses are not supported"),
    "test_einsum_sum": (
        "a sum within one operand: Einsum is imported as a transpose or a "
        "batched product", "it sums over subscript 'j' of one operand only"),
    "test_constantofshape_int_shape_zero": (
        "an empty result (shape [0]) reaching the output: fluid tensors hold "
        "at least one element", "it has no elements"),
    "test_slice_start_out_of_bounds": (
        "an empty result (shape [20, 0, 5]): fluid tensors hold at least one "
        "element", "takes no elements along axis 1"),
    "test_averagepool_3d_default": (
        "3-D pooling: fluid pools 1-D and 2-D images",
        "only 1-D and 2-D pooling is supported"),
    "test_maxpool_3d_default": (
        "3-D pooling: fluid pools 1-D and 2-D images",
        "only 1-D and 2-D pooling is supported"),
    "test_maxpool_with_argmax_2d_precomputed_pads": (
        "the Indices output is not supported",
        "the Indices of the maxima) is not supported"),
    "test_maxpool_with_argmax_2d_precomputed_strides": (
        "storage_order = 1 (and the Indices output) are not supported",
        "attribute 'storage_order' = 1 is not supported"),
    "test_batchnorm_epsilon_training_mode": (
        "training_mode = 1: ONNX's running variance is the biased batch "
        "variance, fluid's (PyTorch's) the unbiased one; use --loss for "
        "training", "attribute 'training_mode' = 1 is not supported"),
    "test_batchnorm_example_training_mode": (
        "training_mode = 1: ONNX's running variance is the biased batch "
        "variance, fluid's (PyTorch's) the unbiased one; use --loss for "
        "training", "attribute 'training_mode' = 1 is not supported"),
    "test_reshape_allowzero_reordered": (
        "an empty input (shape [0, 3, 4]): fluid tensors hold at least one "
        "element", "has a zero dimension at index 0"),
    "test_equal": (
        "a BOOL graph output: fluid has no BOOL tensors (Equal is folded on "
        "values known at import time)",
        "a constant of element type BOOL is not supported"),
    "test_equal_bcast": (
        "a BOOL graph output: fluid has no BOOL tensors (Equal is folded on "
        "values known at import time)",
        "a constant of element type BOOL is not supported"),
    "test_pow_types_float": _INTEGER_POW,
    "test_pow_types_int32_float32": _INTEGER_POW,
    "test_pow_types_int64_float32": _INTEGER_POW,
    "test_pow_types_float32_uint32": _input_type("UINT32"),
    "test_pow_types_float32_uint64": _input_type("UINT64"),
    **{f"test_layer_normalization_{case}_expanded": _LAYER_NORM_EXPANDED
       for case in [
           "2d_axis0", "2d_axis1", "2d_axis_negative_1", "2d_axis_negative_2",
           "3d_axis0_epsilon", "3d_axis1_epsilon", "3d_axis2_epsilon",
           "3d_axis_negative_1_epsilon", "3d_axis_negative_2_epsilon",
           "3d_axis_negative_3_epsilon", "4d_axis0", "4d_axis1", "4d_axis2",
           "4d_axis3", "4d_axis_negative_1", "4d_axis_negative_2",
           "4d_axis_negative_3", "4d_axis_negative_4", "default_axis"]},
    "test_identity_opt": (
        "optional-typed input: fluid values are tensors",
        "is of optional type"),
    "test_identity_sequence": (
        "sequence-typed input: fluid values are tensors",
        "is of sequence type"),
}


def supported_operators():
    """The operators fluid-import-onnx imports, in its table's order (by
    name): the first column of `fluid-import-onnx --list-operators`."""
    listed = subprocess.run(
        ["fluid-import-onnx", "--list-operators"], capture_output=True,
        text=True, check=True).stdout
    return [line.split("\t")[0] for line in listed.splitlines()]


def discover(operators):
    """{test name: operator} for the node tests of `operators`; an expanded
    test (a function's body) belongs to the operator of its base test."""
    ops = {}
    for name in sorted(os.listdir(NODE_TESTS)):
        model = onnx.load(os.path.join(NODE_TESTS, name, "model.onnx"))
        if len(model.graph.node) == 1:
            ops[name] = model.graph.node[0].op_type
    tests = {}
    for name in sorted(os.listdir(NODE_TESTS)):
        op = ops.get(name)
        if op is None and name.endswith("_expanded"):
            op = ops.get(name[:-len("_expanded")])
        if op in operators:
            tests[name] = op
    return tests


def bind_known_inputs(model, case):
    """Turns integer graph inputs and those of KNOWN_INPUTS into
    initializers with the test's values; returns the remaining inputs'
    indices in test_data_set_0."""
    known = set()
    for node in model.graph.node:
        for index in KNOWN_INPUTS.get(node.op_type, ()):
            if index < len(node.input):
                known.add(node.input[index])
    kept = []
    for index in reversed(range(len(model.graph.input))):
        value = model.graph.input[index]
        elem = value.type.tensor_type.elem_type if value.type.HasField(
            "tensor_type") else 0
        if elem in (onnx.TensorProto.INT64, onnx.TensorProto.INT32) or \
                value.name in known:
            tensor = onnx.load_tensor(
                os.path.join(case, "test_data_set_0", f"input_{index}.pb"))
            tensor.name = value.name
            model.graph.initializer.append(tensor)
            del model.graph.input[index]
        else:
            kept.insert(0, index)
    return kept


def run_case(name, work):
    """'pass', or ('fail' | 'import-error', message)."""
    case = os.path.join(NODE_TESTS, name)
    out = os.path.join(work, name)
    os.makedirs(out, exist_ok=True)
    model = onnx.load(os.path.join(case, "model.onnx"))
    kept = bind_known_inputs(model, case)
    model_path = os.path.join(out, "model.onnx")
    onnx.save(model, model_path)
    program = os.path.join(out, "model.mlir")
    imported = subprocess.run(
        ["fluid-import-onnx", model_path, "-o", program],
        capture_output=True, text=True)
    if imported.returncode != 0:
        return "import-error", imported.stderr.strip()

    command = ["fluid-run", program, "--entry", "forward", "--params",
               os.path.join(out, "model.safetensors"), "--save-outputs",
               os.path.join(out, "outputs")]
    for position, index in enumerate(kept):
        tensor = onnx.load_tensor(
            os.path.join(case, "test_data_set_0", f"input_{index}.pb"))
        path = os.path.join(out, f"input{position}.npy")
        np.save(path, numpy_helper.to_array(tensor))
        command += ["--input", f"{position}={path}"]
    ran = subprocess.run(command, capture_output=True, text=True)
    if ran.returncode != 0:
        return "fail", "fluid-run: " + ran.stderr.strip()

    problems = []
    for index, output in enumerate(model.graph.output):
        expected = numpy_helper.to_array(onnx.load_tensor(
            os.path.join(case, "test_data_set_0", f"output_{index}.pb")))
        ours = np.load(os.path.join(out, "outputs", f"output{index}.npy"))
        if ours.shape != expected.shape or ours.dtype != expected.dtype:
            problems.append(f"output {output.name}: {ours.dtype}"
                            f"{list(ours.shape)} vs expected "
                            f"{expected.dtype}{list(expected.shape)}")
        elif not np.allclose(ours, expected, rtol=RTOL, atol=ATOL):
            worst = np.abs(ours.astype(np.float64) - expected).max()
            problems.append(f"output {output.name}: max |diff| {worst:.3g}")
    return ("fail", "; ".join(problems)) if problems else "pass"


def make_table(operators, tests, outcomes):
    """The markdown of docs/onnx-conformance.md."""
    lines = [
        "# ONNX conformance of fluid-import-onnx",
        "",
        "Generated by `test/Onnx/conformance.py --write-table`; the lit test "
        "fails when this file",
        "is not what the run produces. Every node test of Debian's "
        "`libonnx-testdata` (ONNX 1.12)",
        "whose operator `fluid-import-onnx` imports is imported, run on the "
        "cpu backend with",
        "`fluid-run` and compared with its expected outputs (rtol 1e-3, atol "
        "1e-5; integers",
        "exactly), or skipped for the reason given. An expanded test (the "
        "operator's function",
        "body) counts for its operator. Integer graph inputs (Reshape's "
        "shape, Unsqueeze's axes,",
        "Gather's indices, Slice's starts and ends), Clip's bounds, Pad's "
        "value, Range's start,",
        "limit and delta, Dropout's ratio and training mode and Where's "
        "condition are bound to the",
        "test's values as initializers: fluid programs are statically "
        "shaped, Clip, Pad and Where",
        "are composed of fluid ops around constants and Range is folded, so "
        "these must be known at",
        "import time.",
        "",
        "| Operator | Passed | Skipped |",
        "|---|---:|---:|",
    ]
    total_passed = total_skipped = 0
    for op in operators:
        names = [n for n, o in tests.items() if o == op]
        passed = sum(outcomes[n] == "pass" for n in names)
        skipped = sum(n in SKIPS for n in names)
        total_passed += passed
        total_skipped += skipped
        lines.append(f"| {op} | {passed} | {skipped} |")
    lines.append(f"| **all** | **{total_passed}** | **{total_skipped}** |")
    lines += ["", "## Skipped tests", "",
              "| Test | Operator | Reason |", "|---|---|---|"]
    for name in sorted(n for n in tests if n in SKIPS):
        lines.append(f"| `{name}` | {tests[name]} | {SKIPS[name][0]} |")
    return "\n".join(lines) + "\n"


def main():
    parser = argparse.ArgumentParser(
        description="Runs the ONNX node tests of the supported operators.")
    parser.add_argument("--work", default="/tmp/fluid-onnx-conformance")
    parser.add_argument("--write-table", action="store_true",
                        help="write docs/onnx-conformance.md")
    args = parser.parse_args()
    os.makedirs(args.work, exist_ok=True)

    operators = supported_operators()
    tests = discover(operators)
    unknown = sorted(set(SKIPS) - set(tests))
    with concurrent.futures.ThreadPoolExecutor(max_workers=4) as pool:
        results = dict(zip(tests, pool.map(
            lambda name: run_case(name, args.work), tests)))

    problems, outcomes = [], {}
    for name, result in results.items():
        if name in SKIPS:
            reason, message = SKIPS[name]
            outcomes[name] = "skip"
            if result == "pass":
                problems.append(f"{name} passes: remove it from SKIPS")
            elif message and message not in result[1]:
                problems.append(f"{name} is skipped for '{reason}', but "
                                f"fails with: {result[1]}")
            continue
        outcomes[name] = "pass" if result == "pass" else "fail"
        if result != "pass":
            problems.append(f"{name} ({tests[name]}): {result[0]}: "
                            f"{result[1]}")
    problems += [f"SKIPS names {name}, which is no node test of a supported "
                 "operator" for name in unknown]

    table = make_table(operators, tests, outcomes)
    if args.write_table:
        with open(TABLE, "w") as f:
            f.write(table)
    else:
        current = open(TABLE).read() if os.path.exists(TABLE) else ""
        if current != table:
            problems.append(f"{TABLE} is out of date: run "
                            "test/Onnx/conformance.py --write-table")

    passed = sum(o == "pass" for o in outcomes.values())
    skipped = sum(o == "skip" for o in outcomes.values())
    print(f"{len(tests)} node tests: {passed} passed, {skipped} skipped, "
          f"{len(tests) - passed - skipped} failed")
    for problem in problems:
        print("FAIL " + problem)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
