"""Compiles and runs the executables of ../layout-vs-cpu.test on the cpu
backend and compares their checkpoints. Arguments: WORKDIR. fluid-models
and fluid-compile are found on PATH (lit's tools directory).

Per model (LeNet-5 at batch 4; ResNet-18 and SE-ResNeXt-50 at batch 4 and
64x64 images; ResNet-18 in bf16 too), two executables with the same seed
and synthetic data: --layout nchw and --layout nhwc (--fluid-layout), both
with batch norm expanded and fused. The layout must not change a bit: 2
steps, byte-equal checkpoints. On the cpu backend a channels-last
convolution transposes to NCHW and runs the same kernel, the per-channel
sums visit each channel's elements in the same order (n, h, w) in both
layouts, and batch_norm_apply on the [N*H*W, C] view computes each element
as on [N, C, H, W]; the global average pool becomes a mean over H and W,
which sums in the same order as the pool's kernel. The steps' losses must
be equal too, and each NHWC program's convolutions channels-last (its
compile log says how many ops the pass converted).

The NHWC programs store their filters (and the filters' momentum buffers)
as [O, KH, KW, C] and take channels-last images
(--fluid-permute-storage), converting at initialization, load and save
only: the checkpoints above are PyTorch's shapes. Each checkpoint then
starts the other layout's program (LeNet-5 and ResNet-18; SE-ResNeXt-50
is slow on the cpu): NCHW's checkpoint resumed by the NHWC program and
NHWC's by the NCHW program must continue for a step exactly as the NCHW
program resumed from its own (equal losses, byte-equal checkpoints), so
loading permutes the weights and the optimizer state (momentum buffers,
which the step reads).
Last, lenet5-bad.safetensors is LeNet-5's checkpoint with conv1.weight in
the device's [O, KH, KW, C] shape, for ../layout-vs-cpu.test to load.
"""

import filecmp
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "lib"))
import safetensors_io  # noqa: E402

MODELS = {
    "lenet5": ["lenet5", "--batch", "4"],
    "resnet18": ["resnet18", "--batch", "4", "--image-size", "64",
                 "--classes", "10"],
    "se_resnext50": ["se_resnext50_32x4d", "--batch", "4", "--image-size",
                     "64", "--classes", "10"],
}
TRAINING = "optimizer=momentum lr=0.05 momentum=0.9 weight-decay=1e-4"


def run(exe, steps, checkpoint, load=None):
    out = subprocess.run([exe, "--synthetic-size", "4", "--steps", str(steps),
                          "--test-data", "none", "--log-every", "1",
                          "--save", checkpoint,
                          *(["--load", load] if load else [])], check=True,
                         capture_output=True, text=True).stdout
    return re.findall(r"^step \d+ +epoch \d+ +loss (\S+)", out, re.M)


def main():
    work = sys.argv[1]
    failures = 0

    def report(ok, text):
        nonlocal failures
        print(("PASS" if ok else "FAIL") + ": " + text)
        failures += not ok

    cases = [(m, a, []) for m, a in MODELS.items()]
    cases.append(("resnet18-bf16", MODELS["resnet18"], ["--precision", "bf16"]))
    for name, args, flags in cases:
        mlir = os.path.join(work, name + ".mlir")
        subprocess.run(["fluid-models", *args, "-o", mlir], check=True)
        losses, ck = {}, {}
        for layout in ("nchw", "nhwc"):
            exe = os.path.join(work, f"{name}-{layout}")
            subprocess.run(["fluid-compile", mlir, "--backend", "cpu",
                            "--quiet", "--training", TRAINING, "--layout",
                            layout, "-o", exe, *flags], check=True)
            if layout == "nhwc":
                ir = subprocess.run(
                    ["fluid-compile", mlir, "--backend", "cpu", "--quiet",
                     "--training", TRAINING, "--layout", layout,
                     "--emit=buffers", "-o", "-", *flags], check=True,
                    capture_output=True, text=True).stdout
                launch = r'launch "conv2d(?:_grad_input|_grad_filter)?"'
                convs = len(re.findall(launch, ir))
                last = len(re.findall(launch + r"[^\n]*channels_last", ir))
                report(convs > 0 and convs == last,
                       f"{name}: {last} of {convs} convolution launches "
                       "channels-last")
            ck[layout] = exe + ".safetensors"
            losses[layout] = run(exe, 2, ck[layout])
        report(len(losses["nchw"]) == 2 and losses["nchw"] == losses["nhwc"],
               f"{name}: losses {losses['nhwc']} (nhwc) and "
               f"{losses['nchw']} (nchw)")
        report(filecmp.cmp(ck["nchw"], ck["nhwc"], shallow=False),
               f"{name}: nchw and nhwc give byte-equal checkpoints after 2 "
               "steps")
        if name == "se_resnext50":
            continue
        # Each layout resumes the other's checkpoint.
        resumed = {}
        for exe_layout, ck_layout in (("nchw", "nchw"), ("nhwc", "nchw"),
                                      ("nchw", "nhwc")):
            key = f"{exe_layout}-from-{ck_layout}"
            out = os.path.join(work, f"{name}-{key}.safetensors")
            exe = os.path.join(work, f"{name}-{exe_layout}")
            resumed[key] = (run(exe, 1, out, ck[ck_layout]), out)
        base_losses, base_ck = resumed["nchw-from-nchw"]
        for key in ("nhwc-from-nchw", "nchw-from-nhwc"):
            losses_k, ck_k = resumed[key]
            report(len(base_losses) == 1 and losses_k == base_losses and
                   filecmp.cmp(base_ck, ck_k, shallow=False),
                   f"{name}: {key} resumes as nchw-from-nchw (losses "
                   f"{losses_k} and {base_losses}, byte-equal checkpoints)")
        if name == "lenet5":
            tensors = safetensors_io.load(ck["nhwc"])
            tensors["conv1.weight"] = tensors["conv1.weight"].transpose(
                0, 2, 3, 1).copy()
            safetensors_io.save(os.path.join(work, "lenet5-bad.safetensors"),
                                tensors)
    print(f"{failures} failed")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
