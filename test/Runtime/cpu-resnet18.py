# RUN: %python %s %fluid_runtime_lib
"""A ResNet-18 forward pass and loss (batch 2, 3x64x64, batch norm in
training mode) composed of the cpu kernels, against the same network in
PyTorch with the same weights, in f32 and f64.

The network is written once against a small set of ops, implemented twice:
by the kernels and by torch.nn.functional. Prints the time of the kernels'
forward pass (not asserted: benchmarks are not tests).
"""

import importlib
import os
import sys
import time

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
api = importlib.import_module("cpu-api")

BATCH, IMAGE, CLASSES = 2, 64, 1000
EPSILON, MOMENTUM = 1e-5, 0.1

# Errors of f32 roundings compound over 18 layers: the comparison of the
# final results is looser than the per-kernel tests' 1e-4/1e-5.
FINAL_TOLERANCE = {torch.float32: (1e-3, 1e-4),
                   torch.float64: (1e-10, 1e-10)}


def conv_size(size, kernel, stride, padding):
    return (size + 2 * padding - kernel) // stride + 1


class TorchOps:
    def conv(self, x, w, stride, padding):
        return F.conv2d(x, w, stride=stride, padding=padding)

    def batch_norm(self, x, scale, shift):
        mean = torch.zeros(x.shape[1], dtype=x.dtype)
        var = torch.ones(x.shape[1], dtype=x.dtype)
        return F.batch_norm(x, mean, var, scale, shift, training=True,
                            momentum=MOMENTUM, eps=EPSILON)

    def relu(self, x):
        return F.relu(x)

    def add(self, x, y):
        return x + y

    def max_pool(self, x):
        return F.max_pool2d(x, 3, 2, 1)

    def head(self, x, w, b, labels):
        logits = F.linear(torch.flatten(F.adaptive_avg_pool2d(x, 1), 1), w, b)
        return logits, F.cross_entropy(logits, labels)


class KernelOps:
    def __init__(self, kernels):
        self.kernels = kernels

    def conv(self, x, w, stride, padding):
        n, _, h, width = x.shape
        out = torch.empty(n, w.shape[0],
                          conv_size(h, w.shape[2], stride, padding),
                          conv_size(width, w.shape[3], stride, padding),
                          dtype=x.dtype)
        params = api.Conv2dParams([stride] * 2, [padding] * 4, [1, 1], 1)
        self.kernels("fluid_cpu_conv2d", x, w, None, out, params)
        return out

    def batch_norm(self, x, scale, shift):
        channels = x.shape[1]
        out = torch.empty_like(x)
        stats = [torch.empty(channels, dtype=x.dtype) for _ in range(4)]
        self.kernels("fluid_cpu_batch_norm", x, scale, shift,
                     torch.zeros(channels, dtype=x.dtype),
                     torch.ones(channels, dtype=x.dtype), out, *stats,
                     api.BatchNormParams(EPSILON, MOMENTUM))
        return out

    def relu(self, x):
        out = torch.empty_like(x)
        self.kernels("fluid_cpu_relu", x, out)
        return out

    def add(self, x, y):
        out = torch.empty_like(x)
        self.kernels("fluid_cpu_add", x, y, out)
        return out

    def max_pool(self, x):
        n, c, h, w = x.shape
        out = torch.empty(n, c, conv_size(h, 3, 2, 1), conv_size(w, 3, 2, 1),
                          dtype=x.dtype)
        self.kernels("fluid_cpu_max_pool2d", x, out,
                     api.MaxPool2dParams([3, 3], [2, 2], [1, 1, 1, 1],
                                         [1, 1], 0))
        return out

    def head(self, x, w, b, labels):
        n, c = x.shape[:2]
        pooled = torch.empty(n, c, 1, 1, dtype=x.dtype)
        self.kernels("fluid_cpu_global_avg_pool", x, pooled)
        flat = torch.empty(n, c, dtype=x.dtype)
        self.kernels("fluid_cpu_reshape", pooled, flat)
        logits = torch.empty(n, w.shape[0], dtype=x.dtype)
        self.kernels("fluid_cpu_linear", flat, w, b, logits)
        loss = torch.empty((), dtype=x.dtype)
        self.kernels("fluid_cpu_softmax_cross_entropy", logits, labels, loss,
                     api.REDUCTION["mean"])
        return logits, loss


def make_weights(generator, dtype):
    """ResNet-18's parameters, Kaiming-scaled so activations stay O(1)."""
    def conv(out_c, in_c, k):
        std = (2.0 / (in_c * k * k)) ** 0.5
        return torch.randn(out_c, in_c, k, k, generator=generator,
                           dtype=dtype) * std

    def bn(c):
        return (1 + 0.1 * torch.randn(c, generator=generator, dtype=dtype),
                0.1 * torch.randn(c, generator=generator, dtype=dtype))

    weights = {"stem": conv(64, 3, 7), "stem_bn": bn(64), "blocks": []}
    in_c = 64
    for out_c, stride in [(64, 1), (128, 2), (256, 2), (512, 2)]:
        for block_stride in (stride, 1):
            block = {"stride": block_stride,
                     "conv1": conv(out_c, in_c, 3), "bn1": bn(out_c),
                     "conv2": conv(out_c, out_c, 3), "bn2": bn(out_c)}
            if block_stride != 1 or in_c != out_c:
                block["down"] = conv(out_c, in_c, 1)
                block["down_bn"] = bn(out_c)
            weights["blocks"].append(block)
            in_c = out_c
    weights["fc"] = (torch.randn(CLASSES, 512, generator=generator,
                                 dtype=dtype) * 512 ** -0.5,
                     torch.zeros(CLASSES, dtype=dtype))
    return weights


def resnet18(ops, weights, images, labels):
    x = ops.conv(images, weights["stem"], 2, 3)
    x = ops.max_pool(ops.relu(ops.batch_norm(x, *weights["stem_bn"])))
    for block in weights["blocks"]:
        y = ops.conv(x, block["conv1"], block["stride"], 1)
        y = ops.relu(ops.batch_norm(y, *block["bn1"]))
        y = ops.batch_norm(ops.conv(y, block["conv2"], 1, 1), *block["bn2"])
        if "down" in block:
            x = ops.batch_norm(ops.conv(x, block["down"], block["stride"], 0),
                               *block["down_bn"])
        x = ops.relu(ops.add(x, y))
    return ops.head(x, *weights["fc"], labels)


def resnet_case(suite, dtype, timings):
    def body():
        weights = make_weights(suite.generator, dtype)
        images = suite.randn(BATCH, 3, IMAGE, IMAGE, dtype=dtype)
        labels = suite.randint(CLASSES, BATCH)
        want_logits, want_loss = resnet18(TorchOps(), weights, images, labels)
        started = time.monotonic()
        logits, loss = resnet18(KernelOps(suite.kernels), weights, images,
                                labels)
        timings.append(time.monotonic() - started)
        rtol, atol = FINAL_TOLERANCE[dtype]
        torch.testing.assert_close(logits, want_logits, rtol=rtol, atol=atol)
        torch.testing.assert_close(loss, want_loss, rtol=rtol, atol=atol)
    return body


def main():
    suite = api.Suite(sys.argv)
    for dtype, dtype_name in api.FLOAT_DTYPES:
        timings = []
        suite.case(f"resnet18 forward and loss {dtype_name} batch {BATCH} "
                   f"{IMAGE}x{IMAGE}", resnet_case(suite, dtype, timings))
        if timings:
            print(f"  kernels' forward pass: {timings[0]:.2f} s")
    suite.finish()


if __name__ == "__main__":
    main()
