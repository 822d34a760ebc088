#!/usr/bin/env python3
"""The image loader alone (issue 16): images/s of libfluid_runtime.so's
image-folder dataset by number of host threads, on a folder of JPEGs it
writes first if it is missing.

The folder: --count JPEG files (default 5,000) of --width x --height pixels
(500 x 375, about an ImageNet photo), in --classes class folders; smooth
color gradients with noise (test/Runtime/lib/images.py's photo(), quality
90), written by a process pool. Nothing is rewritten if DIR/DONE exists.

The measurement: the dataset opened as the training executables open
--data DIR (fluid_dataset_open_images, FLUID_IMAGE_TRAIN: RandomResizedCrop
to --size and a random flip, ImageNet's mean and std), batches of --batch
images written channels-last in f32 (what a channels-last program reads),
each batch split among T Python threads that take --chunk images at a time
from a shared counter and call fluid_dataset_epoch_batch on them (ctypes
lets go of the GIL during the call, so the threads decode in parallel, as
the driver's prefetch pool does). For each T of --threads: one untimed
batch, then --batches timed batches; images/s per batch, median (min-max).
The batches cycle through the epoch's images so the page cache holds the
files after the first pass (the folder is read once before timing).

  usage: loader.py LIBFLUID_RUNTIME DIR [--threads 1,2,4,8,12,16] ...
"""

import argparse
import ctypes
import os
import statistics
import sys
import threading
import time
from concurrent.futures import ProcessPoolExecutor

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "test", "Runtime", "lib"))
import fluidrt  # noqa: E402
import images  # noqa: E402


def write_shard(args):
    root, first, last, classes, height, width = args
    from PIL import Image
    rng = np.random.default_rng(first)
    total = 0
    for i in range(first, last):
        folder = os.path.join(root, "class%03d" % (i % classes))
        os.makedirs(folder, exist_ok=True)
        path = os.path.join(folder, "img%06d.jpg" % i)
        Image.fromarray(images.photo(rng, height, width)).save(
            path, "JPEG", quality=90)
        total += os.path.getsize(path)
    return total


def generate(root, count, classes, height, width, processes):
    done = os.path.join(root, "DONE")
    if os.path.exists(done):
        print("folder %s exists (%s)" % (root, open(done).read().strip()))
        return
    os.makedirs(root, exist_ok=True)
    step = max(1, count // (processes * 4))
    shards = [(root, i, min(i + step, count), classes, height, width)
              for i in range(0, count, step)]
    t0 = time.time()
    with ProcessPoolExecutor(processes) as pool:
        total = sum(pool.map(write_shard, shards))
    note = "%d JPEGs of %dx%d in %d classes, %.1f KB each on average" % (
        count, width, height, classes, total / count / 1024)
    with open(done, "w") as f:
        f.write(note + "\n")
    print("wrote %s in %.1f s" % (note, time.time() - t0))


def read_all(root):
    """Reads every file once so that the timed passes find them cached."""
    total = 0
    for folder, _, files in os.walk(root):
        for name in files:
            with open(os.path.join(folder, name), "rb") as f:
                total += len(f.read())
    return total


def timed_batches(lib, dataset, count, batch, size, threads, chunk,
                  batches):
    order = (0, 2, 3, 1)  # channels-last [N, H, W, C]
    out = np.empty((batch, size, size, 3), np.float32)
    labels = np.empty(batch, np.int64)
    mean = (ctypes.c_double * 3)(*images.IMAGENET_MEAN)
    std = (ctypes.c_double * 3)(*images.IMAGENET_STD)
    order_c = (ctypes.c_int32 * 4)(*order)
    rates = []
    for b in range(batches + 1):
        first = (b * batch) % max(1, count - batch)
        lock = threading.Lock()
        cursor = [0]
        errors = []

        def work():
            while True:
                with lock:
                    k = cursor[0]
                    cursor[0] += chunk
                if k >= batch:
                    return
                n = min(chunk, batch - k)
                idx = np.arange(first + k, first + k + n, dtype=np.int64)
                t_images = fluidrt.tensor(out[k:k + n])
                t_labels = fluidrt.tensor(labels[k:k + n])
                status = lib.fluid_dataset_epoch_batch(
                    dataset, 0, idx.ctypes.data_as(images.INT64_P), n,
                    ctypes.byref(t_images), ctypes.byref(t_labels), mean,
                    std, order_c)
                if status != fluidrt.OK:
                    errors.append(status)
                    return

        t0 = time.perf_counter()
        pool = [threading.Thread(target=work) for _ in range(threads)]
        for t in pool:
            t.start()
        for t in pool:
            t.join()
        elapsed = time.perf_counter() - t0
        if errors:
            fluidrt.check(lib, errors[0])
        if b > 0:
            rates.append(batch / elapsed)
    return rates


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("lib")
    p.add_argument("dir")
    p.add_argument("--count", type=int, default=5000)
    p.add_argument("--classes", type=int, default=10)
    p.add_argument("--width", type=int, default=500)
    p.add_argument("--height", type=int, default=375)
    p.add_argument("--size", type=int, default=224)
    p.add_argument("--batch", type=int, default=128)
    p.add_argument("--batches", type=int, default=8)
    p.add_argument("--chunk", type=int, default=1)
    p.add_argument("--threads", default="1,2,4,8,12,16")
    p.add_argument("--processes", type=int, default=os.cpu_count() or 1)
    args = p.parse_args()

    generate(args.dir, args.count, args.classes, args.height, args.width,
             args.processes)
    print("read %.1f MB into the page cache" % (read_all(args.dir) / 1e6))
    lib = images.load(args.lib)
    dataset = images.open_images(lib, args.dir, args.size, images.TRAIN,
                                 seed=1)
    count = dataset.info()[0]
    print("dataset: %d images, %d x %d crops, batch %d, host threads: %d" %
          (count, args.size, args.size, args.batch, os.cpu_count() or 0))
    print()
    print("| threads | images/s median (min-max) | per thread |")
    print("| ---: | --- | ---: |")
    for threads in [int(t) for t in args.threads.split(",")]:
        rates = timed_batches(lib, dataset.handle, count, args.batch,
                              args.size, threads, args.chunk, args.batches)
        median = statistics.median(rates)
        print("| %d | %.0f (%.0f-%.0f) | %.0f |" % (
            threads, median, min(rates), max(rates), median / threads),
            flush=True)


if __name__ == "__main__":
    main()
