//===- HostTensor.h - Tensors in host memory for the interpreter ----------===//
//
// A dense row-major tensor in host memory, handed to the runtime as a
// fluid_tensor descriptor. Copies share storage: the interpreter runs
// value-semantic IR, whose kernels never write into their inputs.
//
//===----------------------------------------------------------------------===//

#ifndef FLUID_INTERPRETER_HOSTTENSOR_H
#define FLUID_INTERPRETER_HOSTTENSOR_H

#include "fluid/runtime/Tensor.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/Error.h"

#include <memory>
#include <string>

namespace mlir::fluid {

class HostTensor {
public:
  HostTensor() = default;

  /// A zero-filled tensor, or an error naming `what` if the memory cannot be
  /// had (absurd sizes are refused before the allocator is asked).
  static llvm::Expected<HostTensor>
  allocate(fluid_dtype dtype, ArrayRef<int64_t> shape, const llvm::Twine &what);
  /// A zero-filled tensor of a fluid tensor type.
  static llvm::Expected<HostTensor> allocate(RankedTensorType type,
                                             const llvm::Twine &what);
  /// Takes over a tensor that fluid_npy_read filled; its buffer is released
  /// with fluid_npy_free when the last copy goes.
  static HostTensor adoptNpy(const fluid_tensor &descriptor);

  bool isNull() const { return !storage; }
  fluid_dtype getDType() const { return dtype; }
  ArrayRef<int64_t> getShape() const { return shape; }
  int64_t getNumElements() const;
  int64_t getByteSize() const;
  void *data() const { return storage.get(); }
  template <typename T> T *dataAs() const { return static_cast<T *>(data()); }

  /// The same storage seen with another shape of equal element count.
  HostTensor withShape(ArrayRef<int64_t> newShape) const;
  /// Part of this tensor's bytes, from `byteOffset`, seen as a tensor of
  /// `dtype` and `shape` (which the caller checked fit): a view of an
  /// arena. It shares the storage.
  HostTensor viewBytes(int64_t byteOffset, fluid_dtype dtype,
                       ArrayRef<int64_t> shape) const;
  /// Fills the bytes with 0xFF: NaN in every floating-point type, -1 in
  /// the integers (the interpreter's poison for freed and reused memory).
  void poison() const;

  /// The runtime's descriptor of this tensor.
  fluid_tensor descriptor() const;

  /// Whether this tensor has `type`'s element type and shape.
  bool matches(RankedTensorType type) const;

private:
  fluid_dtype dtype = FLUID_F32;
  SmallVector<int64_t, 4> shape;
  std::shared_ptr<void> storage;
};

/// "f32", "i64", ...
StringRef getDTypeName(fluid_dtype dtype);
/// "[2,3,4] f32"
std::string describe(fluid_dtype dtype, ArrayRef<int64_t> shape);

} // namespace mlir::fluid

#endif // FLUID_INTERPRETER_HOSTTENSOR_H
