#!/usr/bin/env python3
"""GPU decoding with nvJPEG, the alternative to the host loader (issue 16):
images/s of nvJPEG (through torchvision.io.decode_jpeg on a CUDA device,
which calls nvJPEG's batched decoder) on the folder bench/loader.py writes,
and the GPU time that decoding and the training transform take per batch,
so that it can be set against a training step's.

The files are read into host memory first (the page cache and the read are
not what is measured). For every timed batch of --batch files:
- decode: decode_jpeg(list of encoded files, device="cuda"), RGB, uint8
  [3, H, W] per image, timed to a device synchronization;
- decode + transform: the same, then per image a RandomResizedCrop box
  (torchvision's own get_params, scale 0.08-1, ratio 3/4-4/3), a bilinear
  antialiased resize of the box to --size, a random flip, ImageNet's mean
  and std, written into one channels-last f32 [N, size, size, 3] batch (what
  the host loader writes into the pinned slot);
One untimed batch first, then --batches timed ones; images/s per batch,
median (min-max). Then one more batch of each under torch.profiler: the
sum of its GPU kernels' and copies' durations, the device time that
decoding would take from a training step running beside it.

Prints a Markdown table and exits non-zero when nvJPEG cannot be used (no
CUDA device, torchvision without GPU decoding): it says why.

  usage: nvjpeg.py DIR [--batch 128] [--batches 10] [--size 224]
"""

import argparse
import os
import statistics
import sys
import time

MEAN = (0.485, 0.456, 0.406)
STD = (0.229, 0.224, 0.225)


def files_of(root):
    paths = []
    for folder, _, names in sorted(os.walk(root)):
        paths += [os.path.join(folder, n) for n in sorted(names)
                  if n.lower().endswith((".jpg", ".jpeg"))]
    return paths


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("dir")
    p.add_argument("--batch", type=int, default=128)
    p.add_argument("--batches", type=int, default=10)
    p.add_argument("--size", type=int, default=224)
    p.add_argument("--seed", type=int, default=1)
    args = p.parse_args()

    try:
        import torch
        import torchvision
        from torchvision.io import decode_jpeg, ImageReadMode
        from torchvision.transforms import RandomResizedCrop
        import torch.nn.functional as F
        from torch.profiler import profile, ProfilerActivity
    except ImportError as e:
        sys.exit("nvjpeg.py: needs PyTorch and torchvision: %s" % e)
    if not torch.cuda.is_available():
        sys.exit("nvjpeg.py: no CUDA device")

    paths = files_of(args.dir)
    if len(paths) < args.batch:
        sys.exit("nvjpeg.py: %s holds %d JPEG files, fewer than a batch (%d)"
                 % (args.dir, len(paths), args.batch))
    encoded = []
    for path in paths:
        with open(path, "rb") as f:
            encoded.append(torch.frombuffer(bytearray(f.read()),
                                            dtype=torch.uint8))
    device = torch.device("cuda")
    print("torch %s, torchvision %s, %s; %d files (%.1f MB) read into memory"
          % (torch.__version__, torchvision.__version__,
             torch.cuda.get_device_name(0), len(encoded),
             sum(e.numel() for e in encoded) / 1e6))

    generator = torch.Generator().manual_seed(args.seed)
    mean = torch.tensor(MEAN, device=device).view(1, 1, 3)
    std = torch.tensor(STD, device=device).view(1, 1, 3)
    out = torch.empty((args.batch, args.size, args.size, 3),
                      dtype=torch.float32, device=device)

    def decode(chunk):
        try:
            return decode_jpeg(chunk, mode=ImageReadMode.RGB, device=device)
        except RuntimeError as e:
            sys.exit("nvjpeg.py: decode_jpeg on the GPU failed: %s" % e)

    def transform(decoded):
        for i, image in enumerate(decoded):
            top, left, h, w = RandomResizedCrop.get_params(
                image, scale=(0.08, 1.0), ratio=(3.0 / 4.0, 4.0 / 3.0))
            box = image[:, top:top + h, left:left + w].unsqueeze(0).float()
            resized = F.interpolate(box, size=(args.size, args.size),
                                    mode="bilinear", align_corners=False,
                                    antialias=True)[0]
            if torch.rand((), generator=generator) < 0.5:
                resized = resized.flip(-1)
            out[i] = (resized.permute(1, 2, 0) / 255.0 - mean) / std

    results = {}
    for name, with_transform in (("decode", False),
                                 ("decode + transform", True)):
        rates = []

        def one_batch(b):
            first = (b * args.batch) % (len(encoded) - args.batch + 1)
            decoded = decode(encoded[first:first + args.batch])
            if with_transform:
                transform(decoded)
            torch.cuda.synchronize()

        for b in range(args.batches + 1):
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            one_batch(b)
            if b > 0:
                rates.append(args.batch / (time.perf_counter() - t0))
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            one_batch(args.batches + 1)
        device_us = sum(e.self_device_time_total for e in prof.key_averages())
        results[name] = (rates, device_us / 1000.0)

    print()
    print("| nvJPEG, batch %d | images/s median (min-max) | wall ms per batch "
          "| GPU kernel ms per batch (profiler) |" % args.batch)
    print("| --- | --- | ---: | ---: |")
    for name, (rates, device_ms) in results.items():
        median = statistics.median(rates)
        print("| %s | %.0f (%.0f-%.0f) | %.2f | %.2f |" % (
            name, median, min(rates), max(rates),
            1000.0 * args.batch / median, device_ms))


if __name__ == "__main__":
    main()
