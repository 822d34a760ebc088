//===- HostTensor.cpp - Tensors in host memory for the interpreter --------===//

#include "fluid/Interpreter/HostTensor.h"
#include "fluid/Dialect/Fluid/IR/KernelParams.h"
#include "fluid/runtime/Npy.h"

#include "llvm/Support/CheckedArithmetic.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>
#include <cstring>
#include <unistd.h>

using namespace mlir;
using namespace mlir::fluid;

StringRef mlir::fluid::getDTypeName(fluid_dtype dtype) {
  const char *name = fluid_dtype_name(dtype);
  return name ? name : "unknown";
}

std::string mlir::fluid::describe(fluid_dtype dtype, ArrayRef<int64_t> shape) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << "[";
  llvm::interleave(shape, os, ",");
  os << "] " << getDTypeName(dtype);
  return s;
}

/// Physical memory: no single tensor may be larger.
static int64_t physicalMemoryBytes() {
  long pages = sysconf(_SC_PHYS_PAGES), pageSize = sysconf(_SC_PAGESIZE);
  if (pages <= 0 || pageSize <= 0)
    return INT64_MAX;
  return static_cast<int64_t>(pages) * pageSize;
}

llvm::Expected<HostTensor> HostTensor::allocate(fluid_dtype dtype,
                                                ArrayRef<int64_t> shape,
                                                const llvm::Twine &what) {
  if (shape.size() > FLUID_MAX_RANK)
    return llvm::createStringError("%s has rank %zu; at most %d is supported",
                                   what.str().c_str(), shape.size(),
                                   FLUID_MAX_RANK);
  std::optional<int64_t> bytes = fluid_dtype_size(dtype);
  for (int64_t dim : shape) {
    if (dim < 0)
      return llvm::createStringError("%s has a negative dimension",
                                     what.str().c_str());
    bytes = llvm::checkedMul<int64_t>(*bytes, dim);
    if (!bytes)
      return llvm::createStringError("%s (%s) is larger than 2^63 bytes",
                                     what.str().c_str(),
                                     describe(dtype, shape).c_str());
  }
  if (*bytes > physicalMemoryBytes())
    return llvm::createStringError(
        "%s (%s) needs %lld bytes, more than this machine's memory",
        what.str().c_str(), describe(dtype, shape).c_str(),
        static_cast<long long>(*bytes));
  // calloc, not new: without exceptions a failed new would abort.
  void *memory = std::calloc(std::max<int64_t>(*bytes, 1), 1);
  if (!memory)
    return llvm::createStringError("cannot allocate %lld bytes for %s",
                                   static_cast<long long>(*bytes),
                                   what.str().c_str());
  HostTensor tensor;
  tensor.dtype = dtype;
  tensor.shape.assign(shape.begin(), shape.end());
  tensor.storage = std::shared_ptr<void>(memory, std::free);
  return tensor;
}

llvm::Expected<HostTensor> HostTensor::allocate(RankedTensorType type,
                                                const llvm::Twine &what) {
  std::optional<fluid_dtype> dtype = fluid::getDType(type.getElementType());
  if (!dtype) {
    std::string typeName;
    llvm::raw_string_ostream(typeName) << type;
    return llvm::createStringError("%s has type %s, which the runtime does "
                                   "not support",
                                   what.str().c_str(), typeName.c_str());
  }
  return allocate(*dtype, type.getShape(), what);
}

HostTensor HostTensor::adoptNpy(const fluid_tensor &descriptor) {
  HostTensor tensor;
  tensor.dtype = static_cast<fluid_dtype>(descriptor.dtype);
  tensor.shape.assign(descriptor.shape, descriptor.shape + descriptor.rank);
  tensor.storage = std::shared_ptr<void>(descriptor.data, [](void *data) {
    fluid_tensor owned;
    std::memset(&owned, 0, sizeof(owned));
    owned.data = data;
    fluid_npy_free(&owned);
  });
  return tensor;
}

int64_t HostTensor::getNumElements() const {
  int64_t count = 1;
  for (int64_t dim : shape)
    count *= dim;
  return count;
}

int64_t HostTensor::getByteSize() const {
  return getNumElements() * fluid_dtype_size(dtype);
}

HostTensor HostTensor::withShape(ArrayRef<int64_t> newShape) const {
  HostTensor view = *this;
  view.shape.assign(newShape.begin(), newShape.end());
  return view;
}

HostTensor HostTensor::viewBytes(int64_t byteOffset, fluid_dtype newDtype,
                                 ArrayRef<int64_t> newShape) const {
  HostTensor view;
  view.dtype = newDtype;
  view.shape.assign(newShape.begin(), newShape.end());
  // The aliasing constructor: the view keeps the whole storage alive.
  view.storage = std::shared_ptr<void>(
      storage, static_cast<char *>(storage.get()) + byteOffset);
  return view;
}

void HostTensor::poison() const {
  if (storage)
    std::memset(storage.get(), 0xFF, static_cast<size_t>(getByteSize()));
}

fluid_tensor HostTensor::descriptor() const {
  fluid_tensor t;
  std::memset(&t, 0, sizeof(t));
  t.data = storage.get();
  t.dtype = dtype;
  t.rank = static_cast<int32_t>(shape.size());
  for (auto [i, dim] : llvm::enumerate(shape))
    t.shape[i] = dim;
  return t;
}

bool HostTensor::matches(RankedTensorType type) const {
  std::optional<fluid_dtype> expected = fluid::getDType(type.getElementType());
  return expected && *expected == dtype && type.getShape() == getShape();
}
