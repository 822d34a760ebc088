"""ctypes bindings of the dataset API (Data.h) and a handle wrapper."""

import ctypes

import numpy as np

import fluidrt

TENSOR = ctypes.POINTER(fluidrt.FluidTensor)
INT64_P = ctypes.POINTER(ctypes.c_int64)


def load(path):
    """fluidrt.load, with the signatures of Data.h's entry points."""
    lib = fluidrt.load(path)
    lib.fluid_dataset_open_idx.argtypes = [ctypes.c_char_p, ctypes.c_char_p,
                                           ctypes.POINTER(ctypes.c_void_p)]
    lib.fluid_dataset_synthetic.argtypes = [ctypes.c_int64] * 5 + [
        ctypes.c_uint64, ctypes.POINTER(ctypes.c_void_p)]
    lib.fluid_dataset_free.argtypes = [ctypes.c_void_p]
    lib.fluid_dataset_free.restype = None
    lib.fluid_dataset_info.argtypes = [ctypes.c_void_p, INT64_P, INT64_P,
                                       INT64_P]
    lib.fluid_dataset_batch.argtypes = [ctypes.c_void_p, INT64_P,
                                        ctypes.c_int64, TENSOR, TENSOR,
                                        ctypes.c_double, ctypes.c_double]
    lib.fluid_dataset_batch_ordered.argtypes = [
        ctypes.c_void_p, INT64_P, ctypes.c_int64, TENSOR, TENSOR,
        ctypes.c_double, ctypes.c_double, ctypes.POINTER(ctypes.c_int32)]
    lib.fluid_shuffle.argtypes = [INT64_P, ctypes.c_int64, ctypes.c_uint64,
                                  ctypes.c_uint64]
    return lib


class Dataset:
    """A dataset handle, freed on exit. `create(out)` makes it: a call of
    fluid_dataset_open_idx or fluid_dataset_synthetic storing into `out`."""

    image_dtype = np.float32  # batch()'s default

    def __init__(self, lib, create):
        self.lib = lib
        self.handle = ctypes.c_void_p()
        fluidrt.check(lib, create(ctypes.byref(self.handle)))

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.lib.fluid_dataset_free(self.handle)

    def info(self):
        count, shape, classes = (ctypes.c_int64(), (ctypes.c_int64 * 3)(),
                                 ctypes.c_int64())
        fluidrt.check(self.lib, self.lib.fluid_dataset_info(
            self.handle, ctypes.byref(count), shape, ctypes.byref(classes)))
        return count.value, tuple(shape), classes.value

    def batch(self, indices, image_dtype=None, label_dtype=np.int64,
              mean=0.0, std=1.0):
        """(images, labels) of `indices`, in new arrays first filled with NaN
        and -1."""
        indices = np.ascontiguousarray(indices, dtype=np.int64)
        _, shape, _ = self.info()
        images = np.full((len(indices),) + shape, np.nan,
                         image_dtype or self.image_dtype)
        labels = np.full(len(indices), -1, label_dtype)
        fluidrt.check(self.lib, self.call(indices, images, labels, mean, std))
        return images, labels

    def call_ordered(self, indices, images, labels, order, mean=0.0,
                     std=1.0):
        """fluid_dataset_batch_ordered's status, into existing arrays."""
        t_images, t_labels = fluidrt.tensor(images), fluidrt.tensor(labels)
        return self.lib.fluid_dataset_batch_ordered(
            self.handle, indices.ctypes.data_as(INT64_P), len(indices),
            ctypes.byref(t_images), ctypes.byref(t_labels), mean, std,
            (ctypes.c_int32 * 4)(*order))

    def call(self, indices, images, labels, mean=0.0, std=1.0):
        """fluid_dataset_batch's status, into existing arrays."""
        t_images, t_labels = fluidrt.tensor(images), fluidrt.tensor(labels)
        return self.lib.fluid_dataset_batch(
            self.handle, indices.ctypes.data_as(INT64_P), len(indices),
            ctypes.byref(t_images), ctypes.byref(t_labels), mean, std)
