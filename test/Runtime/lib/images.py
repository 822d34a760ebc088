"""Image datasets for the runtime's tests: ctypes bindings of Data.h's image
entry points, a PNG writer that reaches every color type and bit depth PIL
cannot write, a gallery of JPEG and PNG files made here, and torchvision's
transforms as the oracle of the runtime's."""

import ctypes
import io
import os
import struct
import zlib

import numpy as np

import datasets
import fluidrt

INT64_P = ctypes.POINTER(ctypes.c_int64)
DOUBLE_P = ctypes.POINTER(ctypes.c_double)
TRAIN, EVAL = 0, 1
IMAGENET_MEAN = (0.485, 0.456, 0.406)
IMAGENET_STD = (0.229, 0.224, 0.225)


class ImageOptions(ctypes.Structure):
    _fields_ = [("height", ctypes.c_int64), ("width", ctypes.c_int64),
                ("transform", ctypes.c_int32),
                ("skip_bad_images", ctypes.c_int32),
                ("seed", ctypes.c_uint64)]


def load(path):
    """datasets.load, with the signatures of the image entry points."""
    lib = datasets.load(path)
    lib.fluid_dataset_open_images.argtypes = [
        ctypes.c_char_p, ctypes.POINTER(ImageOptions),
        ctypes.POINTER(ctypes.c_void_p)]
    lib.fluid_dataset_open_npy.argtypes = [ctypes.c_char_p, ctypes.c_char_p,
                                           ctypes.POINTER(ctypes.c_void_p)]
    lib.fluid_dataset_epoch_batch.argtypes = [
        ctypes.c_void_p, ctypes.c_uint64, INT64_P, ctypes.c_int64,
        datasets.TENSOR, datasets.TENSOR, DOUBLE_P, DOUBLE_P,
        ctypes.POINTER(ctypes.c_int32)]
    lib.fluid_dataset_bad_images.argtypes = [ctypes.c_void_p, INT64_P,
                                             ctypes.c_char_p, ctypes.c_int64]
    lib.fluid_image_decode.argtypes = [ctypes.c_char_p, ctypes.c_void_p,
                                       ctypes.c_int64, INT64_P, INT64_P]
    lib.fluid_image_resize.argtypes = [ctypes.c_void_p, ctypes.c_int64,
                                       ctypes.c_int64, ctypes.c_void_p,
                                       ctypes.c_int64, ctypes.c_int64]
    lib.fluid_random_resized_crop.argtypes = [
        ctypes.c_uint64, ctypes.c_uint64, ctypes.c_int64, ctypes.c_int64,
        ctypes.c_int64, INT64_P, ctypes.POINTER(ctypes.c_int32)]
    return lib


def open_images_status(lib, path, size, transform, seed=0, skip=False,
                       handle=None):
    """fluid_dataset_open_images's status."""
    options = ImageOptions(size, size, transform, int(skip), seed)
    out = handle if handle is not None else ctypes.c_void_p()
    return lib.fluid_dataset_open_images(str(path).encode(),
                                         ctypes.byref(options),
                                         ctypes.byref(out))


class Dataset(datasets.Dataset):
    """A dataset handle with fluid_dataset_epoch_batch's batches."""

    def epoch_batch(self, indices, epoch=0, mean=(0.0,), std=(1.0,),
                    order=(0, 1, 2, 3)):
        indices = np.ascontiguousarray(indices, dtype=np.int64)
        _, shape, _ = self.info()
        dims = (len(indices),) + shape
        images = np.full([dims[d] for d in order], np.nan, np.float32)
        labels = np.full(len(indices), -1, np.int64)
        fluidrt.check(self.lib, self.call_epoch(indices, epoch, images,
                                                labels, mean, std, order))
        return images, labels

    def call_epoch(self, indices, epoch, images, labels, mean, std,
                   order=(0, 1, 2, 3)):
        channels = self.info()[1][0]
        mean = [mean[0]] * channels if len(mean) == 1 else list(mean)
        std = [std[0]] * channels if len(std) == 1 else list(std)
        t_images, t_labels = fluidrt.tensor(images), fluidrt.tensor(labels)
        return self.lib.fluid_dataset_epoch_batch(
            self.handle, epoch, indices.ctypes.data_as(INT64_P),
            len(indices), ctypes.byref(t_images), ctypes.byref(t_labels),
            (ctypes.c_double * channels)(*mean),
            (ctypes.c_double * channels)(*std),
            (ctypes.c_int32 * 4)(*order))

    def pixels(self, indices, epoch=0):
        """The u8 pixels of items, recovered exactly from an f32 batch
        normalized by mean 0 and std 1/255 (so the values are the pixels)."""
        images, labels = self.epoch_batch(indices, epoch,
                                          std=(1.0 / 255.0,))
        pixels = np.rint(images).astype(np.uint8)
        assert np.array_equal(pixels, images), "not whole pixel values"
        return pixels, labels

    def bad_images(self):
        count = ctypes.c_int64()
        latest = ctypes.create_string_buffer(1024)
        fluidrt.check(self.lib, self.lib.fluid_dataset_bad_images(
            self.handle, ctypes.byref(count), latest, len(latest)))
        return count.value, latest.value.decode()


def open_images(lib, path, size, transform, seed=0, skip=False):
    options = ImageOptions(size, size, transform, int(skip), seed)
    return Dataset(lib, lambda out: lib.fluid_dataset_open_images(
        str(path).encode(), ctypes.byref(options), out))


def open_npy(lib, images, labels):
    return Dataset(lib, lambda out: lib.fluid_dataset_open_npy(
        str(images).encode(), str(labels).encode(), out))


def decode_status(lib, path):
    """(status, image or None): fluid_image_decode of `path`."""
    height, width = ctypes.c_int64(), ctypes.c_int64()
    status = lib.fluid_image_decode(str(path).encode(), None, 0,
                                    ctypes.byref(height), ctypes.byref(width))
    if status != fluidrt.OK:
        return status, None
    rgb = np.zeros((height.value, width.value, 3), np.uint8)
    fluidrt.check(lib, lib.fluid_image_decode(
        str(path).encode(), rgb.ctypes.data, rgb.size, ctypes.byref(height),
        ctypes.byref(width)))
    return status, rgb


def decode(lib, path):
    status, rgb = decode_status(lib, path)
    fluidrt.check(lib, status)
    return rgb


def resize(lib, rgb, height, width):
    rgb = np.ascontiguousarray(rgb, np.uint8)
    out = np.zeros((height, width, 3), np.uint8)
    fluidrt.check(lib, lib.fluid_image_resize(
        rgb.ctypes.data, rgb.shape[0], rgb.shape[1], out.ctypes.data, height,
        width))
    return out


def random_resized_crop(lib, seed, epoch, index, height, width):
    """(top, left, crop height, crop width), flip."""
    box, flip = (ctypes.c_int64 * 4)(), ctypes.c_int32()
    fluidrt.check(lib, lib.fluid_random_resized_crop(
        seed, epoch, index, height, width, box, ctypes.byref(flip)))
    return tuple(box), flip.value


# Files ---------------------------------------------------------------------

def png_chunk(kind, data):
    return (struct.pack(">I", len(data)) + kind + data +
            struct.pack(">I", zlib.crc32(kind + data)))


def png_header(width, height, color_type, bit_depth):
    """The signature and IHDR of a PNG file, and nothing else."""
    return b"\x89PNG\r\n\x1a\n" + png_chunk(b"IHDR", struct.pack(
        ">IIBBBBB", width, height, bit_depth, color_type, 0, 0, 0))


def png_bytes(samples, color_type, bit_depth, palette=None, trns=None,
              interlace=False):
    """A PNG file of `samples` ([H, W] or [H, W, channels] integers below
    2^bit_depth), written chunk by chunk: any color type and bit depth,
    Adam7 interlacing too."""
    samples = np.asarray(samples)
    if samples.ndim == 2:
        samples = samples[:, :, None]
    height, width, channels = samples.shape

    def scanlines(image):
        rows = b""
        for row in image:
            flat = row.reshape(-1).astype(np.uint32)
            if bit_depth == 16:
                packed = flat.astype(">u2").tobytes()
            elif bit_depth == 8:
                packed = flat.astype(np.uint8).tobytes()
            else:
                per_byte = 8 // bit_depth
                padded = np.zeros(-(-len(flat) // per_byte) * per_byte,
                                  np.uint32)
                padded[:len(flat)] = flat
                groups = padded.reshape(-1, per_byte)
                shifts = bit_depth * np.arange(per_byte - 1, -1, -1)
                packed = (groups << shifts).sum(axis=1).astype(
                    np.uint8).tobytes()
            rows += b"\0" + packed
        return rows

    if interlace:
        passes = ((0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4),
                  (0, 2, 2, 4), (1, 0, 2, 2), (0, 1, 1, 2))
        raw = b""
        for x0, y0, dx, dy in passes:
            part = samples[y0::dy, x0::dx]
            if part.shape[0] and part.shape[1]:
                raw += scanlines(part)
    else:
        raw = scanlines(samples)

    header = struct.pack(">IIBBBBB", width, height, bit_depth, color_type, 0,
                         0, 1 if interlace else 0)
    out = b"\x89PNG\r\n\x1a\n" + png_chunk(b"IHDR", header)
    if palette is not None:
        out += png_chunk(b"PLTE", np.asarray(palette, np.uint8).tobytes())
    if trns is not None:
        out += png_chunk(b"tRNS", trns)
    return (out + png_chunk(b"IDAT", zlib.compress(raw)) +
            png_chunk(b"IEND", b""))


def photo(rng, height, width, channels=3):
    """Smooth gradients with noise, as photographs have (resizing white
    noise alone would hide little)."""
    y, x = np.mgrid[0:height, 0:width]
    phase = rng.uniform(0, 6.28, channels)
    base = [127 + 100 * np.sin(x / (3 + 2 * c) + y / (5 + c) + phase[c])
            for c in range(channels)]
    image = np.stack(base, axis=-1) + rng.normal(0, 12, (height, width,
                                                         channels))
    return np.clip(np.rint(image), 0, 255).astype(np.uint8)


def jpeg_bytes(image, **options):
    buffer = io.BytesIO()
    image.save(buffer, "JPEG", **options)
    return buffer.getvalue()


def gallery(rng):
    """{file name: bytes}: JPEG and PNG files of every kind the decoders
    handle, at sizes and aspect ratios that make resizing shrink, grow and
    both."""
    from PIL import Image
    files = {}
    rgb = lambda h, w: Image.fromarray(photo(rng, h, w))  # noqa: E731
    files["rgb420.jpg"] = jpeg_bytes(rgb(67, 45), quality=90)
    files["rgb444.JPG"] = jpeg_bytes(rgb(40, 64), quality=95, subsampling=0)
    files["rgb422.jpeg"] = jpeg_bytes(rgb(33, 51), subsampling=1)
    files["progressive.jpg"] = jpeg_bytes(rgb(150, 120), progressive=True)
    files["large.jpg"] = jpeg_bytes(rgb(240, 310), quality=85)
    files["tiny.jpg"] = jpeg_bytes(rgb(5, 3))
    files["gray.jpg"] = jpeg_bytes(rgb(45, 31).convert("L"))
    files["cmyk.jpg"] = jpeg_bytes(Image.fromarray(photo(rng, 30, 41, 4),
                                                   "CMYK"))
    files["wide.jpg"] = jpeg_bytes(rgb(20, 200))
    files["tall.Jpeg"] = jpeg_bytes(rgb(120, 25))

    def samples(h, w, channels, bits):
        image = photo(rng, h, w, channels).astype(np.uint32)
        if bits == 16:
            return np.minimum(image * 257 + rng.integers(0, 257, image.shape),
                              65535)
        return image >> (8 - bits)

    files["rgb8.png"] = png_bytes(samples(48, 56, 3, 8), 2, 8)
    files["rgba8.png"] = png_bytes(samples(36, 36, 4, 8), 6, 8)
    files["gray8.png"] = png_bytes(samples(30, 60, 1, 8), 0, 8)
    for bits in (1, 2, 4):
        files[f"gray{bits}.png"] = png_bytes(samples(27, 35, 1, bits), 0,
                                             bits)
    # 16-bit gray from 0 to 765: PIL clips what passes 255.
    files["gray16.png"] = png_bytes(samples(40, 40, 1, 8) * 3, 0, 16)
    files["graya8.png"] = png_bytes(samples(33, 22, 2, 8), 4, 8)
    files["graya16.png"] = png_bytes(samples(33, 22, 2, 16), 4, 16)
    files["rgb16.png"] = png_bytes(samples(41, 39, 3, 16), 2, 16)
    files["rgba16.png"] = png_bytes(samples(25, 47, 4, 16), 6, 16)
    palette = rng.integers(0, 256, (200, 3))
    files["palette8.png"] = png_bytes(rng.integers(0, 200, (50, 44)), 3, 8,
                                      palette=palette)
    files["palette4-trns.png"] = png_bytes(
        rng.integers(0, 16, (29, 31)), 3, 4, palette=palette[:16],
        trns=bytes(range(0, 256, 32)))
    files["gray8-trns.png"] = png_bytes(samples(26, 26, 1, 8), 0, 8,
                                        trns=struct.pack(">H", 128))
    files["interlaced-rgb.png"] = png_bytes(samples(45, 37, 3, 8), 2, 8,
                                            interlace=True)
    files["interlaced-palette2.png"] = png_bytes(
        rng.integers(0, 4, (19, 23)), 3, 2, palette=palette[:4],
        interlace=True)
    buffer = io.BytesIO()
    rgb(64, 48).save(buffer, "PNG")
    files["pil.png"] = buffer.getvalue()
    # Decoded by content, whatever the name says.
    files["png-named.jpg"] = png_bytes(samples(21, 17, 3, 8), 2, 8)
    return files


def write(folder, name, content):
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, name)
    with open(path, "wb") as f:
        f.write(content)
    return path


# torchvision, the oracle ---------------------------------------------------

def pil_rgb(path):
    """torchvision's default loader: PIL's convert("RGB")."""
    from PIL import Image
    with open(path, "rb") as f:
        return Image.open(f).convert("RGB")


def eval_reference(path, size, mean=IMAGENET_MEAN, std=IMAGENET_STD):
    """Resize(round(size * 256 / 224)), CenterCrop(size), ToTensor,
    Normalize: [3, size, size] f32."""
    import torchvision.transforms as T
    transform = T.Compose([T.Resize(round(size * 256 / 224)),
                           T.CenterCrop(size), T.ToTensor(),
                           T.Normalize(mean, std)])
    return transform(pil_rgb(path)).numpy()


def train_reference(path, size, box, flip, mean=IMAGENET_MEAN,
                    std=IMAGENET_STD):
    """resized_crop at `box`, hflip if `flip`, ToTensor, Normalize."""
    import torchvision.transforms as T
    import torchvision.transforms.functional as F
    image = F.resized_crop(pil_rgb(path), *box, [size, size],
                           T.InterpolationMode.BILINEAR)
    if flip:
        image = F.hflip(image)
    return F.normalize(F.to_tensor(image), mean, std).numpy()
