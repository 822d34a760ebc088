//===- ParamStore.cpp - The values of a program's parameters --------------===//

#include "fluid/Interpreter/ParamStore.h"
#include "fluid/Dialect/Fluid/IR/EntryPoint.h"
#include "fluid/Dialect/Fluid/IR/FluidOps.h"
#include "fluid/Dialect/Fluid/IR/KernelParams.h"
#include "fluid/runtime/Init.h"
#include "fluid/runtime/Safetensors.h"

#include <memory>

using namespace mlir;
using namespace mlir::fluid;

static llvm::Error runtimeError(const llvm::Twine &context) {
  return llvm::createStringError(
      (context + ": " + fluid_last_error()).str().c_str());
}

/// Integer parameters (step counters) start at 0, 1 or a constant.
template <typename T>
static void fillInteger(const HostTensor &tensor, InitializerAttr init) {
  T value = static_cast<T>(integerInitValue(init));
  std::fill_n(tensor.dataAs<T>(), tensor.getNumElements(), value);
}

llvm::Expected<ParamStore> ParamStore::initialize(ModuleOp module,
                                                  uint64_t seed) {
  ParamStore store;
  for (ParamOp param : module.getOps<ParamOp>()) {
    StringRef name = param.getSymName();
    // The interpreter keeps parameters in their checkpoint layout; a
    // compiled program's driver converts stored permutations.
    if (param.getStorageOrder())
      return llvm::createStringError(
          "parameter @%s is stored permuted (storage_order, "
          "--fluid-permute-storage); run the program before that pass",
          name.str().c_str());
    llvm::Expected<HostTensor> tensor =
        HostTensor::allocate(param.getTensorType(), "parameter @" + name);
    if (!tensor)
      return tensor.takeError();
    InitializerAttr init = param.getInit();
    switch (tensor->getDType()) {
    case FLUID_I32:
      fillInteger<int32_t>(*tensor, init);
      break;
    case FLUID_I64:
      fillInteger<int64_t>(*tensor, init);
      break;
    default: {
      fluid_init_spec spec = initSpec(init);
      fluid_tensor descriptor = tensor->descriptor();
      if (fluid_init_tensor(&descriptor, &spec, seed,
                            fluid_hash_name(name.str().c_str())) != FLUID_OK)
        return runtimeError("cannot initialize parameter @" + name);
    }
    }
    store.values[name] = *tensor;
    store.order.push_back(name.str());
    if (param->hasAttr(kOptimizerStateAttrName))
      store.optimizerState.insert(name);
  }
  return store;
}

namespace {
struct ReaderCloser {
  void operator()(fluid_safetensors_reader *r) const {
    fluid_safetensors_close(r);
  }
};
struct WriterFreer {
  void operator()(fluid_safetensors_writer *w) const {
    fluid_safetensors_writer_free(w);
  }
};
} // namespace

llvm::Error ParamStore::load(StringRef path,
                             SmallVectorImpl<std::string> &ignored) {
  fluid_safetensors_reader *rawReader = nullptr;
  std::string pathString = path.str();
  if (fluid_safetensors_open(pathString.c_str(), &rawReader) != FLUID_OK)
    return runtimeError("cannot load parameters");
  std::unique_ptr<fluid_safetensors_reader, ReaderCloser> reader(rawReader);

  for (const std::string &name : order) {
    HostTensor &value = values[name];
    fluid_tensor info;
    if (fluid_safetensors_info(reader.get(), name.c_str(), &info) != FLUID_OK) {
      if (optimizerState.contains(name))
        continue;
      return llvm::createStringError(
          "%s has no tensor '%s' for parameter @%s (%s)", pathString.c_str(),
          name.c_str(), name.c_str(),
          describe(value.getDType(), value.getShape()).c_str());
    }
    ArrayRef<int64_t> fileShape(info.shape, info.rank);
    if (info.dtype != value.getDType() || fileShape != value.getShape())
      return llvm::createStringError(
          "%s: tensor '%s' is %s but parameter @%s is %s", pathString.c_str(),
          name.c_str(),
          describe(static_cast<fluid_dtype>(info.dtype), fileShape).c_str(),
          name.c_str(), describe(value.getDType(), value.getShape()).c_str());
    // Read into fresh storage: earlier readers of the old value keep it.
    llvm::Expected<HostTensor> fresh = HostTensor::allocate(
        value.getDType(), value.getShape(), "parameter @" + name);
    if (!fresh)
      return fresh.takeError();
    fluid_tensor destination = fresh->descriptor();
    if (fluid_safetensors_read(reader.get(), name.c_str(), &destination) !=
        FLUID_OK)
      return runtimeError("cannot load parameter @" + name);
    value = *fresh;
  }

  int64_t count = 0;
  if (fluid_safetensors_count(reader.get(), &count) != FLUID_OK)
    return runtimeError("cannot list the tensors of " + path);
  for (int64_t i = 0; i < count; ++i) {
    const char *name = nullptr;
    if (fluid_safetensors_name(reader.get(), i, &name) != FLUID_OK)
      return runtimeError("cannot list the tensors of " + path);
    if (!values.count(name))
      ignored.push_back(name);
  }
  return llvm::Error::success();
}

llvm::Error ParamStore::save(StringRef path) const {
  fluid_safetensors_writer *rawWriter = nullptr;
  if (fluid_safetensors_writer_create(&rawWriter) != FLUID_OK)
    return runtimeError("cannot save parameters");
  std::unique_ptr<fluid_safetensors_writer, WriterFreer> writer(rawWriter);
  // The writer keeps the descriptors until it writes.
  std::vector<fluid_tensor> descriptors;
  descriptors.reserve(order.size());
  for (const std::string &name : order) {
    descriptors.push_back(values.lookup(name).descriptor());
    if (fluid_safetensors_writer_add(writer.get(), name.c_str(),
                                     &descriptors.back()) != FLUID_OK)
      return runtimeError("cannot save parameter @" + name);
  }
  if (fluid_safetensors_writer_write(writer.get(), path.str().c_str()) !=
      FLUID_OK)
    return runtimeError("cannot save parameters");
  return llvm::Error::success();
}
