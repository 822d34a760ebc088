# RUN: rm -rf %t && mkdir -p %t
# RUN: %python %s %fluid_runtime_lib %t
"""Image datasets (Data.h) against PIL and torchvision, on JPEG and PNG files
written here: fluid_image_decode's pixels equal PIL's convert("RGB") for every
color type (grayscale and CMYK JPEGs; palette, gray, 16-bit and alpha PNGs);
corrupt, truncated and foreign files are errors naming them (PIL refuses them
too), and damaged files never crash; fluid_image_resize equals PIL's bilinear
resize exactly; an image folder lists what torchvision's ImageFolder lists,
in its order (links followed, loops cut), its evaluation batches equal
Resize + CenterCrop + ToTensor + Normalize within one intensity level, its
training batches torchvision's resized_crop and hflip at the documented
crops; the crops follow RandomResizedCrop.get_params's distribution
(two-sample Kolmogorov-Smirnov tests); batches depend on (seed, epoch, index)
only; bad images are skipped deterministically when asked; list files, .npy
pairs and every listing error.
"""

import ctypes
import math
import os
import sys
import warnings
import zlib

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "lib"))
import cases  # noqa: E402
import fluidrt  # noqa: E402
import images  # noqa: E402
from cases import case  # noqa: E402
from fluidrt import INVALID_ARGUMENT, IO, OK, UNSUPPORTED  # noqa: E402
from images import EVAL, IMAGENET_MEAN, IMAGENET_STD, TRAIN  # noqa: E402
from PIL import Image  # noqa: E402

# PIL's advice on palette transparency, irrelevant to RGB conversion.
warnings.filterwarnings("ignore", "Palette images with Transparency")
lib = images.load(sys.argv[1])
ROOT = sys.argv[2]
RNG = np.random.default_rng(20261206)
GALLERY = images.gallery(RNG)
GALLERY_DIR = os.path.join(ROOT, "gallery")
for name, content in GALLERY.items():
    images.write(GALLERY_DIR, name, content)

# An image folder as ImageFolder reads it: classes sorted by byte order
# ("Zebra" before "cat"), images at any depth, other files ignored.
FOLDER = os.path.join(ROOT, "folder")
LAYOUT = {
    "Zebra": ["rgb420.jpg", "gray16.png", "cmyk.jpg", "tiny.jpg"],
    "cat": ["rgb444.JPG", "palette8.png", "wide.jpg", "gray2.png",
            "rgba16.png"],
    "dog": ["large.jpg", "tall.Jpeg", "graya16.png", "interlaced-rgb.png"],
    "dog/puppies": ["progressive.jpg", "palette4-trns.png", "gray.jpg"],
    "dog/puppies b": ["rgb8.png"],
}
for folder, names in LAYOUT.items():
    for name in names:
        images.write(os.path.join(FOLDER, folder), name, GALLERY[name])
images.write(FOLDER, "README.txt", b"not a class")
images.write(os.path.join(FOLDER, "cat"), "notes.txt", b"not an image")
images.write(os.path.join(FOLDER, "cat"), "thumbs.gif", b"GIF89a")

# Kolmogorov-Smirnov: the critical value of the two-sample statistic at
# p = 0.001 is 1.949 * sqrt((n + m) / (n m)).
KS_C_001 = 1.949


def expect_error(status, expected, fragments):
    fluidrt.expect_status(lib, status, expected, fragments)


def pil_refuses(path):
    try:
        images.pil_rgb(path)
    except Exception:  # PIL's errors differ by format
        return True
    return False


def image_folder_samples(root):
    import torchvision.datasets
    return torchvision.datasets.ImageFolder(root).samples


def levels_apart(got, want, std=IMAGENET_STD):
    """The largest difference between normalized images, in intensity levels
    (1/255 before normalization), channel by channel."""
    scale = 255.0 * np.asarray(std, np.float64).reshape(3, 1, 1)
    return float(np.max(np.abs(got.astype(np.float64) - want) * scale))


def ks_statistic(a, b):
    a, b = np.sort(a), np.sort(b)
    values = np.concatenate([a, b])
    return float(np.max(np.abs(np.searchsorted(a, values, "right") / len(a) -
                               np.searchsorted(b, values, "right") /
                               len(b))))


@case
def decodes_every_kind_like_pil():
    modes = set()
    for name in GALLERY:
        path = os.path.join(GALLERY_DIR, name)
        want = np.asarray(images.pil_rgb(path))
        got = images.decode(lib, path)
        assert got.shape == want.shape, (name, got.shape, want.shape)
        assert np.array_equal(got, want), \
            f"{name}: {np.count_nonzero(got != want)} samples differ"
        modes.add(Image.open(path).mode)
    assert modes == {"RGB", "L", "CMYK", "I", "1", "P", "LA", "RGBA"}, modes
    return f"{len(GALLERY)} files, PIL modes {', '.join(sorted(modes))}"


@case
def bad_files_are_errors_naming_them():
    jpeg, png = GALLERY["rgb420.jpg"], GALLERY["pil.png"]
    ihdr_crc = bytearray(png)
    ihdr_crc[20] ^= 1
    idat = bytearray(png)
    at = png.find(b"IDAT")
    for i in range(at + 10, at + 40):
        idat[i] ^= 0x55
    table = [
        ("truncated.jpg", jpeg[:len(jpeg) * 3 // 5], INVALID_ARGUMENT,
         "truncated JPEG file: the file ends before its image data does"),
        ("no-eoi.jpg", jpeg[:-2], INVALID_ARGUMENT,
         "truncated JPEG file: the file ends before its image data does"),
        ("header.jpg", jpeg[:2] + b"\xff\xc0\x00\x05\x00\x00" + jpeg[20:],
         INVALID_ARGUMENT, "corrupt JPEG file: Bogus marker length"),
        ("truncated.png", png[:len(png) // 2], INVALID_ARGUMENT,
         "truncated PNG file: the file ends before its image data does"),
        ("crc.png", bytes(ihdr_crc), INVALID_ARGUMENT,
         "corrupt PNG file: IHDR: CRC error"),
        ("idat.png", bytes(idat), INVALID_ARGUMENT,
         "corrupt PNG file: IDAT: "),
        ("text.jpg", b"just some text\n", UNSUPPORTED,
         "not a JPEG or PNG image"),
        ("gif.png", b"GIF89a" + bytes(30), UNSUPPORTED,
         "not a JPEG or PNG image"),
        ("empty.png", b"", UNSUPPORTED,
         "an empty file, not a JPEG or PNG image"),
        ("bomb.png", images.png_header(16384, 16384, 0, 8) +
         images.png_chunk(b"IDAT", zlib.compress(b"")) +
         images.png_chunk(b"IEND", b""),
         INVALID_ARGUMENT,
         "an image of 16384x16384 pixels, more than 178956970 (PIL's "
         "decompression-bomb limit)"),
    ]
    for name, content, status, message in table:
        path = images.write(os.path.join(ROOT, "bad-files"), name, content)
        assert pil_refuses(path), f"PIL decodes {name}"
        expect_error(images.decode_status(lib, path)[0], status,
                     [f"fluid_image_decode: {path}: {message}"])
    missing = os.path.join(ROOT, "bad-files", "missing.jpg")
    expect_error(images.decode_status(lib, missing)[0], IO,
                 [f"{missing}: cannot open: No such file or directory"])
    return f"{len(table) + 1} files"


@case
def damaged_files_never_crash():
    """Flipped bytes, cuts and insertions anywhere in every file: each
    decodes or is an error, never a crash or a hang."""
    rng = np.random.default_rng(5)
    folder = os.path.join(ROOT, "damaged")
    statuses = {}
    for number in range(400):
        name = sorted(GALLERY)[number % len(GALLERY)]
        content = bytearray(GALLERY[name])
        for _ in range(rng.integers(1, 4)):
            at = int(rng.integers(0, len(content)))
            kind = rng.integers(0, 3)
            if kind == 0:
                content[at] ^= int(rng.integers(1, 256))
            elif kind == 1:
                content = content[:at]
            else:
                content[at:at] = rng.bytes(int(rng.integers(1, 9)))
        path = images.write(folder, f"{number}-{name}", bytes(content))
        status = images.decode_status(lib, path)[0]
        assert status in (OK, INVALID_ARGUMENT, UNSUPPORTED), (path, status)
        statuses[status] = statuses.get(status, 0) + 1
    return (f"{statuses.get(OK, 0)} decoded, "
            f"{statuses.get(INVALID_ARGUMENT, 0)} corrupt, "
            f"{statuses.get(UNSUPPORTED, 0)} unsupported")


def without_tables(jpeg):
    """The JPEG file without its DQT and DHT segments: an abbreviated image
    that uses tables some earlier file defined."""
    out, at = bytearray(jpeg[:2]), 2
    while jpeg[at] == 0xFF and jpeg[at + 1] != 0xDA:
        length = 2 + int.from_bytes(jpeg[at + 2:at + 4], "big")
        if jpeg[at + 1] not in (0xDB, 0xC4):
            out += jpeg[at:at + length]
        at += length
    return bytes(out + jpeg[at:])


@case
def each_file_decodes_on_its_own():
    """A JPEG file without its own tables is corrupt, whichever file was
    decoded before it: the decoder keeps nothing from one file to the next
    (a reused TurboJPEG handle kept the last file's tables)."""
    full = os.path.join(GALLERY_DIR, "rgb420.jpg")
    path = images.write(os.path.join(ROOT, "abbreviated"), "no-tables.jpg",
                        without_tables(GALLERY["rgb420.jpg"]))
    assert pil_refuses(path), "PIL decodes a JPEG file without tables"
    for before in (None, full, path, full):
        if before:
            images.decode_status(lib, before)
        expect_error(images.decode_status(lib, path)[0], INVALID_ARGUMENT,
                     [f"fluid_image_decode: {path}: corrupt JPEG file: "])


@case
def resize_equals_pil_exactly():
    sizes = [(1, 1, 7, 5), (5, 3, 32, 32), (240, 310, 37, 48),
             (100, 100, 100, 37), (64, 64, 64, 64), (3, 500, 2, 50)]
    sizes += [tuple(RNG.integers(1, 160, 4)) for _ in range(120)]
    for height, width, out_height, out_width in sizes:
        rgb = images.photo(RNG, height, width)
        got = images.resize(lib, rgb, out_height, out_width)
        want = np.asarray(Image.fromarray(rgb).resize(
            (int(out_width), int(out_height)), Image.BILINEAR))
        assert np.array_equal(got, want), (
            (height, width, out_height, out_width),
            np.count_nonzero(got != want))
    return f"{len(sizes)} sizes"


@case
def folder_lists_what_image_folder_lists():
    samples = image_folder_samples(FOLDER)
    with images.open_images(lib, FOLDER, 16, EVAL) as dataset:
        count, shape, classes = dataset.info()
        assert (count, shape, classes) == (len(samples), (3, 16, 16), 3)
        _, labels = dataset.epoch_batch(range(count))
        assert labels.tolist() == [label for _, label in samples]
        # The order of the files: each item is its sample's image.
        pixels, _ = dataset.pixels(range(count))
        for index, (path, _) in enumerate(samples):
            want = images.eval_reference(path, 16, (0, 0, 0), (1, 1, 1))
            assert levels_apart(pixels[index] / 255.0, want,
                                (1, 1, 1)) <= 1, path
    return f"{len(samples)} images in 3 classes"


@case
def evaluation_equals_torchvision():
    samples = image_folder_samples(FOLDER)
    worst, exact = 0.0, 0
    for size in (32, 24):
        with images.open_images(lib, FOLDER, size, EVAL) as dataset:
            got, _ = dataset.epoch_batch(range(len(samples)), 0,
                                         IMAGENET_MEAN, IMAGENET_STD)
            for index, (path, _) in enumerate(samples):
                apart = levels_apart(got[index],
                                     images.eval_reference(path, size))
                assert apart <= 1.0 + 1e-3, (path, size, apart)
                worst = max(worst, apart)
                exact += apart < 1e-3
    return (f"{exact} of {2 * len(samples)} images exact, the largest "
            f"difference {worst:.3f} levels")


@case
def training_equals_torchvision_at_its_crops():
    samples = image_folder_samples(FOLDER)
    seed, size = 7, 32
    flips = set()
    with images.open_images(lib, FOLDER, size, TRAIN, seed) as dataset:
        for epoch in (0, 5):
            got, labels = dataset.epoch_batch(range(len(samples)), epoch,
                                              IMAGENET_MEAN, IMAGENET_STD)
            for index, (path, label) in enumerate(samples):
                height, width = images.decode(lib, path).shape[:2]
                box, flip = images.random_resized_crop(lib, seed, epoch,
                                                       index, height, width)
                want = images.train_reference(path, size, box, flip)
                apart = levels_apart(got[index], want)
                assert apart <= 1.0 + 1e-3, (path, epoch, box, flip, apart)
                assert labels[index] == label
                flips.add(flip)
    assert flips == {0, 1}, flips


@case
def crops_follow_torchvision_distribution():
    import torch
    import torchvision.transforms as T
    n = 4000
    limit = KS_C_001 * math.sqrt(2.0 / n)

    def features(boxes, height, width):
        boxes = np.asarray(boxes, np.float64)
        top, left, h, w = boxes.T
        return {"area": h * w / (height * width), "log ratio": np.log(w / h),
                "top": (top + 0.5) / (height - h + 1),
                "left": (left + 0.5) / (width - w + 1)}

    def torchvision_boxes(height, width, scale=(0.08, 1.0)):
        torch.manual_seed(0)
        image = torch.empty(1, height, width)
        return [T.RandomResizedCrop.get_params(image, scale,
                                               (3.0 / 4.0, 4.0 / 3.0))
                for _ in range(n)]

    notes = []
    for height, width in ((375, 500), (64, 64), (20, 200), (300, 7)):
        ours, flips = [], 0
        for index in range(n):
            box, flip = images.random_resized_crop(lib, 11, index % 3,
                                                   index, height, width)
            ours.append(box)
            flips += flip
        theirs = torchvision_boxes(height, width)
        mine, reference = (features(ours, height, width),
                           features(theirs, height, width))
        worst = 0.0
        for name in mine:
            statistic = ks_statistic(mine[name], reference[name])
            assert statistic < limit, (height, width, name, statistic, limit)
            worst = max(worst, statistic)
        # Flips: binomial(n, 1/2) within 3.29 standard deviations.
        assert abs(flips - n / 2) < 3.29 * math.sqrt(n) / 2, flips
        notes.append(f"{height}x{width} D <= {worst:.3f}")
    # The test has power: a scale range of (0.25, 1) is told apart.
    wrong = features(torchvision_boxes(375, 500, (0.25, 1.0)), 375, 500)
    ours = features([images.random_resized_crop(lib, 11, 0, i, 375, 500)[0]
                     for i in range(n)], 375, 500)
    assert ks_statistic(ours["area"], wrong["area"]) > 3 * limit
    return f"n = {n}, D < {limit:.4f}: " + ", ".join(notes)


@case
def batches_depend_on_seed_epoch_and_index_only():
    count = len(image_folder_samples(FOLDER))
    everything = np.arange(count)
    with images.open_images(lib, FOLDER, 24, TRAIN, 3) as first, \
            images.open_images(lib, FOLDER, 24, TRAIN, 3) as same, \
            images.open_images(lib, FOLDER, 24, TRAIN, 4) as other, \
            images.open_images(lib, FOLDER, 24, EVAL, 3) as evaluation:
        epoch2 = first.pixels(everything, 2)[0]
        assert np.array_equal(epoch2, same.pixels(everything, 2)[0])
        assert not np.array_equal(epoch2, first.pixels(everything, 3)[0])
        assert not np.array_equal(epoch2, other.pixels(everything, 2)[0])
        # Per item too: different crops nearly everywhere.
        assert sum(np.array_equal(a, b) for a, b in
                   zip(epoch2, other.pixels(everything, 2)[0])) <= 2
        assert np.array_equal(evaluation.pixels(everything, 0)[0],
                              evaluation.pixels(everything, 9)[0])

        # Any subset, in any order, on any thread.
        def worker(number):
            rng = np.random.default_rng(number)
            for _ in range(3):
                indices = rng.integers(0, count, size=5)
                pixels, _ = first.pixels(indices, 2)
                assert np.array_equal(pixels, epoch2[indices])

        cases.in_threads(worker, 4)
        # Channels-last batches hold the same values.
        nchw, _ = first.epoch_batch(everything, 2, IMAGENET_MEAN,
                                    IMAGENET_STD)
        nhwc, _ = first.epoch_batch(everything, 2, IMAGENET_MEAN,
                                    IMAGENET_STD, (0, 2, 3, 1))
        assert np.array_equal(nhwc, nchw.transpose(0, 2, 3, 1))


def bad_folder():
    """a: good, corrupt, good; b: truncated, good (sorted by name)."""
    root = os.path.join(ROOT, "bad-folder")
    jpeg, png = GALLERY["rgb420.jpg"], GALLERY["rgb8.png"]
    images.write(os.path.join(root, "a"), "0-good.png", png)
    images.write(os.path.join(root, "a"), "1-corrupt.jpg",
                 jpeg[:2] + b"\xff\xc0\x00\x05\x00\x00" + jpeg[20:])
    images.write(os.path.join(root, "a"), "2-good.jpg", GALLERY["wide.jpg"])
    images.write(os.path.join(root, "b"), "0-truncated.png",
                 png[:len(png) // 2])
    images.write(os.path.join(root, "b"), "1-good.jpg", jpeg)
    return root


@case
def bad_images_fail_or_are_skipped():
    root = bad_folder()
    corrupt = os.path.join(root, "a", "1-corrupt.jpg")
    with images.open_images(lib, root, 16, EVAL) as dataset:
        dataset.pixels([0, 2, 4])
        expect_error(dataset.call_epoch(
            np.array([0, 1], np.int64), 0, np.zeros((2, 3, 16, 16),
                                                    np.float32),
            np.zeros(2, np.int64), (0.0,), (1.0,)), INVALID_ARGUMENT,
            [f"fluid_dataset_epoch_batch: {corrupt}: corrupt JPEG file"])
        assert dataset.bad_images() == (0, "")
    with images.open_images(lib, root, 16, EVAL, skip=True) as dataset:
        pixels, labels = dataset.pixels([0, 1, 2, 3, 4, 1])
        # The next readable image stands in, with its label.
        assert np.array_equal(pixels[1], pixels[2])
        assert np.array_equal(pixels[3], pixels[4])
        assert labels.tolist() == [0, 0, 0, 1, 1, 0]
        count, latest = dataset.bad_images()
        assert count == 2, count
        assert latest.startswith(os.path.join(root, "a", "1-corrupt.jpg")) \
            or latest.startswith(os.path.join(root, "b", "0-truncated.png"))
    # Training: the stand-in is cropped as the item asked for would be.
    with images.open_images(lib, root, 16, TRAIN, 5, skip=True) as dataset:
        got, _ = dataset.epoch_batch([1], 4, IMAGENET_MEAN, IMAGENET_STD)
        stand_in = os.path.join(root, "a", "2-good.jpg")
        height, width = images.decode(lib, stand_in).shape[:2]
        box, flip = images.random_resized_crop(lib, 5, 4, 1, height, width)
        assert levels_apart(got[0], images.train_reference(
            stand_in, 16, box, flip)) <= 1.0 + 1e-3
    # Nothing readable at all.
    hopeless = os.path.join(ROOT, "hopeless")
    images.write(os.path.join(hopeless, "x"), "a.jpg", b"text")
    images.write(os.path.join(hopeless, "x"), "b.png", b"")
    with images.open_images(lib, hopeless, 8, EVAL, skip=True) as dataset:
        expect_error(dataset.call_epoch(
            np.array([1], np.int64), 0, np.zeros((1, 3, 8, 8), np.float32),
            np.zeros(1, np.int64), (0.0,), (1.0,)), INVALID_ARGUMENT,
            [f"{hopeless}: every image is unreadable (the latest: "])


@case
def links_are_followed_but_loops_cut():
    root = os.path.join(ROOT, "links")
    images.write(os.path.join(root, "a"), "x.png", GALLERY["rgb8.png"])
    os.symlink(".", os.path.join(root, "a", "loop"))
    elsewhere = os.path.join(ROOT, "linked-class")
    images.write(elsewhere, "y.png", GALLERY["gray8.png"])
    os.symlink(elsewhere, os.path.join(root, "b"))
    with images.open_images(lib, root, 8, EVAL) as dataset:
        assert dataset.info() == (2, (3, 8, 8), 2)
        assert dataset.epoch_batch([0, 1])[1].tolist() == [0, 1]


@case
def list_files():
    folder = os.path.join(ROOT, "listed")
    images.write(os.path.join(folder, "sub dir"), "a b.png",
                 GALLERY["rgb8.png"])
    images.write(folder, "c.jpg", GALLERY["large.jpg"])
    absolute = images.write(os.path.join(ROOT, "elsewhere"), "d.png",
                            GALLERY["palette8.png"])
    list_file = images.write(folder, "list.txt", (
        "sub dir/a b.png 4\n\n  c.jpg\t0  \r\n" + absolute + " 2\n"
    ).encode())
    expected = [(os.path.join(folder, "sub dir", "a b.png"), 4),
                (os.path.join(folder, "c.jpg"), 0), (absolute, 2)]
    with images.open_images(lib, list_file, 20, EVAL) as dataset:
        assert dataset.info() == (3, (3, 20, 20), 5)
        got, labels = dataset.epoch_batch(range(3), 0, IMAGENET_MEAN,
                                          IMAGENET_STD)
        assert labels.tolist() == [label for _, label in expected]
        for index, (path, _) in enumerate(expected):
            assert levels_apart(got[index], images.eval_reference(
                path, 20)) <= 1.0 + 1e-3, path


@case
def listing_errors():
    def status_of(path):
        return images.open_images_status(lib, path, 8, EVAL)

    root = os.path.join(ROOT, "errors")
    empty = os.path.join(root, "empty-class")
    images.write(os.path.join(empty, "a"), "x.png", GALLERY["rgb8.png"])
    os.makedirs(os.path.join(empty, "b", "deeper"))
    images.write(os.path.join(empty, "b"), "notes.txt", b"")
    expect_error(status_of(empty), INVALID_ARGUMENT, [
        f"fluid_dataset_open_images: {empty}/b: the class folder holds no "
        "images (.jpg, .jpeg or .png files)"])
    flat = os.path.join(root, "flat")
    images.write(flat, "x.png", GALLERY["rgb8.png"])
    expect_error(status_of(flat), INVALID_ARGUMENT, [
        f"{flat}: no class folders: an image folder holds one folder of "
        "images per class"])
    for number, (text, problem) in enumerate([
            ("a.png 1\nb.png\n", ":2: expected 'PATH LABEL', got 'b.png'"),
            ("a.png 1\n\nb.png -1\n",
             ":3: the label '-1' is not an integer from 0 to 2147483647"),
            ("a.png 2147483648\n", ":1: the label '2147483648' is not an "
             "integer from 0 to 2147483647"),
            ("a.png 1x\n", ":1: the label '1x' is not an integer"),
            ("a.png 1\nb\0.png 2\n", ":2: the line holds a NUL byte"),
            (" \n\t\n", ": the list file names no images")]):
        path = images.write(root, f"list{number}.txt", text.encode())
        expect_error(status_of(path), INVALID_ARGUMENT, [path + problem])
    missing = os.path.join(root, "missing")
    expect_error(status_of(missing), IO,
                 [f"{missing}: cannot open: No such file or directory"])
    options = images.ImageOptions(8, 8, 7, 0, 0)
    handle = ctypes.c_void_p(0x1234)
    expect_error(lib.fluid_dataset_open_images(
        empty.encode(), ctypes.byref(options), ctypes.byref(handle)),
        INVALID_ARGUMENT, ["options->transform must be FLUID_IMAGE_TRAIN (0) "
                           "or FLUID_IMAGE_EVAL (1), got 7"])
    options = images.ImageOptions(0, 8, 0, 0, 0)
    expect_error(lib.fluid_dataset_open_images(
        empty.encode(), ctypes.byref(options), ctypes.byref(handle)),
        INVALID_ARGUMENT, ["options->height must be from 1 to 32768, got 0"])
    assert handle.value == 0x1234


@case
def npy_pairs():
    folder = os.path.join(ROOT, "npy")
    os.makedirs(folder)

    def save(name, array):
        path = os.path.join(folder, name)
        np.save(path, array)
        return path

    pixels = RNG.integers(0, 256, (6, 3, 5, 4), dtype=np.uint8)
    labels = np.array([0, 3, 1, 1, 2, 0], np.int64)
    images_u8, labels_path = save("u8.npy", pixels), save("l.npy", labels)
    mean, std = (0.5, 0.25, 0.125), (0.2, 0.3, 0.4)
    with images.open_npy(lib, images_u8, labels_path) as dataset:
        assert dataset.info() == (6, (3, 5, 4), 4)
        got, got_labels = dataset.epoch_batch([5, 0, 2], 3, mean, std)
        want = ((pixels[[5, 0, 2]] / 255.0 -
                 np.reshape(mean, (3, 1, 1))) /
                np.reshape(std, (3, 1, 1))).astype(np.float32)
        assert got.tobytes() == want.tobytes()
        assert got_labels.tolist() == [0, 0, 1]
    values = RNG.standard_normal((6, 3, 5, 4)).astype(np.float32)
    with images.open_npy(lib, save("f32.npy", values), labels_path) as dataset:
        got, _ = dataset.epoch_batch(range(6), 0, mean, std)
        assert got.tobytes() == values.tobytes()

    def status_of(images_path, labels_path):
        handle = ctypes.c_void_p()
        return lib.fluid_dataset_open_npy(images_path.encode(),
                                          labels_path.encode(),
                                          ctypes.byref(handle))

    f64 = save("f64.npy", values.astype(np.float64))
    expect_error(status_of(f64, labels_path), UNSUPPORTED, [
        f"fluid_dataset_open_npy: {f64}: images must be u8 or f32, got f64 "
        "[6, 3, 5, 4]"])
    flat = save("flat.npy", pixels[0])
    expect_error(status_of(flat, labels_path), INVALID_ARGUMENT, [
        f"{flat}: images must be [N, C, H, W] with no dimension 0, got u8 "
        "[3, 5, 4]"])
    nan = values.copy()
    nan.flat[7] = np.nan
    nan_path = save("nan.npy", nan)
    expect_error(status_of(nan_path, labels_path), INVALID_ARGUMENT,
                 [f"{nan_path}: element 7 is nan; the images must be finite"])
    short = save("short.npy", labels[:5])
    expect_error(status_of(images_u8, short), INVALID_ARGUMENT, [
        f"{images_u8} holds 6 images but {short} holds 5 labels"])
    negative = save("negative.npy", np.array([0, 1, -2, 0, 0, 0]))
    expect_error(status_of(images_u8, negative), INVALID_ARGUMENT, [
        f"{negative}: label 2 is -2; labels must be from 0 to 2147483647"])
    floats = save("floats.npy", labels.astype(np.float32))
    expect_error(status_of(images_u8, floats), UNSUPPORTED, [
        f"{floats}: labels must be i64 (or i32) [N], got f32 [6]"])
    missing = os.path.join(folder, "missing.npy")
    expect_error(status_of(missing, labels_path), IO, [missing])


@case
def per_channel_normalization_is_checked():
    with images.open_images(lib, FOLDER, 8, EVAL) as dataset:
        batch = np.zeros((1, 3, 8, 8), np.float32)
        labels = np.zeros(1, np.int64)
        index = np.array([0], np.int64)
        expect_error(dataset.call_epoch(index, 0, batch, labels,
                                        (0.5, math.nan, 0.5), (1.0,)),
                     INVALID_ARGUMENT,
                     ["mean of channel 1 must be finite, got nan"])
        expect_error(dataset.call_epoch(index, 0, batch, labels, (0.5,),
                                        (1.0, 1.0, 0.0)),
                     INVALID_ARGUMENT,
                     ["std of channel 2 must be finite and > 0, got 0"])
        assert dataset.call_epoch(index, 0, batch, labels, (0.5,),
                                  (1.0,)) == OK


if __name__ == "__main__":
    sys.exit(cases.main())
