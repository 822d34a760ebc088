//===- Checkpoint.cpp - Host copies of parameters and safetensors I/O -----===//

#include "Checkpoint.h"

#include "StorageOrder.h"
#include "Text.h"
#include "TrainingRules.h"
#include "fluid/runtime/Error.h"
#include "fluid/runtime/Safetensors.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>

using namespace fluid::rt;
using namespace fluid::rt::driver;

namespace {

[[noreturn]] void failRuntime(const std::string &context) {
  fail(context + ": " + fluid_last_error());
}

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

template <typename T> void fillInteger(void *data, int64_t count, T value) {
  std::fill_n(static_cast<T *>(data), count, value);
}

} // namespace

AlignedBuffer::AlignedBuffer(int64_t bytes) : bytes_(bytes) {
  if (bytes <= 0)
    return;
  // aligned_alloc wants a multiple of the alignment.
  size_t rounded = (static_cast<size_t>(bytes) + 255) / 256 * 256;
  void *memory = std::aligned_alloc(256, rounded);
  if (!memory)
    throw std::bad_alloc();
  std::memset(memory, 0, rounded);
  data_.reset(memory);
}

void AlignedBuffer::Free::operator()(void *p) const { std::free(p); }

HostParameters::HostParameters(const ProgramView &program) : program_(program) {
  values_.reserve(program.numParams());
  for (int64_t i = 0; i < program.numParams(); ++i)
    values_.emplace_back(program.paramBytes(i));
}

fluid_tensor HostParameters::checkpointDescriptor(int64_t i, void *data) const {
  const fluid_program_value &value = program_.param(i).value;
  fluid_tensor t = {};
  t.data = data;
  t.dtype = value.dtype;
  t.rank = value.rank;
  std::copy_n(value.shape, value.rank, t.shape);
  return t;
}

void HostParameters::initialize(uint64_t seed) {
  for (int64_t i = 0; i < program_.numParams(); ++i) {
    const fluid_program_param &param = program_.param(i);
    // A permuted parameter is drawn in its checkpoint order (the fans and
    // the order of the random stream are PyTorch's), then permuted.
    bool permuted = isPermuted(param.value);
    AlignedBuffer scratch(permuted ? bytes(i) : 0);
    fluid_tensor t =
        checkpointDescriptor(i, permuted ? scratch.data() : data(i));
    int64_t count = fluid_tensor_numel(&t);
    switch (param.value.dtype) {
    case FLUID_I32:
      fillInteger(t.data, count, static_cast<int32_t>(param.integer_init));
      break;
    case FLUID_I64:
      fillInteger(t.data, count, param.integer_init);
      break;
    case FLUID_F32:
    case FLUID_F64:
      if (fluid_init_tensor(&t, &param.init, seed,
                            fluid_hash_name(param.value.name)) != FLUID_OK)
        failRuntime(std::string("cannot initialize parameter @") +
                    param.value.name);
      break;
    default:
      fail(std::string("parameter @") + param.value.name + " is " +
           describe(param.value) + ", a dtype the driver cannot initialize");
    }
    if (permuted)
      toStorage(param.value, scratch.data(), data(i));
  }
}

std::vector<std::string> HostParameters::load(const std::string &path) {
  fluid_safetensors_reader *rawReader = nullptr;
  if (fluid_safetensors_open(path.c_str(), &rawReader) != FLUID_OK)
    failRuntime("cannot load parameters");
  std::unique_ptr<fluid_safetensors_reader, ReaderCloser> reader(rawReader);

  for (int64_t i = 0; i < program_.numParams(); ++i) {
    const fluid_program_param &param = program_.param(i);
    const char *name = param.value.name;
    fluid_tensor info = {};
    if (fluid_safetensors_info(reader.get(), name, &info) != FLUID_OK) {
      if (param.optimizer_state)
        continue;
      fail(format("%s has no tensor '%s' for parameter @%s (%s)", path.c_str(),
                  name, name, describe(param.value).c_str()));
    }
    bool sameShape =
        info.rank == param.value.rank &&
        std::equal(info.shape, info.shape + info.rank, param.value.shape);
    if (info.dtype != param.value.dtype || !sameShape)
      fail(format("%s: tensor '%s' is %s but parameter @%s is %s", path.c_str(),
                  name, describe(info.dtype, info.rank, info.shape).c_str(),
                  name, describe(param.value).c_str()));
    // Read in the checkpoint's order; a permuted parameter is stored
    // permuted after.
    bool permuted = isPermuted(param.value);
    AlignedBuffer scratch(permuted ? bytes(i) : 0);
    fluid_tensor destination =
        checkpointDescriptor(i, permuted ? scratch.data() : data(i));
    if (fluid_safetensors_read(reader.get(), name, &destination) != FLUID_OK)
      failRuntime(std::string("cannot load parameter @") + name);
    std::string problem = checkFinite(path, name, destination);
    if (!problem.empty())
      fail(problem);
    if (permuted)
      toStorage(param.value, scratch.data(), data(i));
  }

  std::vector<std::string> unused;
  int64_t count = 0;
  if (fluid_safetensors_count(reader.get(), &count) != FLUID_OK)
    failRuntime("cannot list the tensors of " + path);
  for (int64_t t = 0; t < count; ++t) {
    const char *name = nullptr;
    if (fluid_safetensors_name(reader.get(), t, &name) != FLUID_OK)
      failRuntime("cannot list the tensors of " + path);
    bool known = false;
    for (int64_t i = 0; i < program_.numParams() && !known; ++i)
      known = std::strcmp(program_.param(i).value.name, name) == 0;
    if (!known)
      unused.push_back(name);
  }
  return unused;
}

InitFromResult HostParameters::initFrom(const std::string &path) {
  std::vector<InitFromParam> params(static_cast<size_t>(program_.numParams()));
  for (int64_t i = 0; i < program_.numParams(); ++i) {
    const fluid_program_param &param = program_.param(i);
    params[i].name = param.value.name;
    params[i].type = checkpointDescriptor(i, nullptr);
    params[i].optimizerState = param.optimizer_state != 0;
  }
  // Permuted parameters are read in their checkpoint order, then stored.
  std::vector<AlignedBuffer> scratch(params.size());
  InitFromResult result;
  std::string problem = driver::initFrom(
      path, params,
      [&](size_t i) {
        if (!isPermuted(program_.param(i).value))
          return data(i);
        scratch[i] = AlignedBuffer(bytes(i));
        return scratch[i].data();
      },
      result);
  if (!problem.empty())
    fail(problem);
  for (size_t i = 0; i < params.size(); ++i)
    if (result.loaded[i] && isPermuted(program_.param(i).value))
      toStorage(program_.param(i).value, scratch[i].data(), data(i));
  return result;
}

void HostParameters::save(const std::string &path) const {
  fluid_safetensors_writer *rawWriter = nullptr;
  if (fluid_safetensors_writer_create(&rawWriter) != FLUID_OK)
    failRuntime("cannot save parameters");
  std::unique_ptr<fluid_safetensors_writer, WriterFreer> writer(rawWriter);
  // The writer keeps the descriptors (and the data they point to) until it
  // writes. Permuted parameters are written in their checkpoint order.
  std::vector<fluid_tensor> descriptors;
  std::vector<AlignedBuffer> unpermuted;
  descriptors.reserve(program_.numParams());
  for (int64_t i = 0; i < program_.numParams(); ++i) {
    const fluid_program_value &value = program_.param(i).value;
    void *source = data(i);
    if (isPermuted(value)) {
      unpermuted.emplace_back(bytes(i));
      fromStorage(value, data(i), unpermuted.back().data());
      source = unpermuted.back().data();
    }
    descriptors.push_back(checkpointDescriptor(i, source));
    if (fluid_safetensors_writer_add(writer.get(), program_.param(i).value.name,
                                     &descriptors.back()) != FLUID_OK)
      failRuntime(std::string("cannot save parameter @") +
                  program_.param(i).value.name);
  }
  if (fluid_safetensors_writer_write(writer.get(), path.c_str()) != FLUID_OK)
    failRuntime("cannot save parameters");
}
