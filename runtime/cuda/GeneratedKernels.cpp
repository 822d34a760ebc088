//===- GeneratedKernels.cpp - Loading and launching the compiler's kernels ===//
//
// The driver API without libcuda: its entry points come from the CUDA
// runtime (cudaGetDriverEntryPointByVersion), resolved once, at the first
// load of a module in the process; a driver that lacks one makes every load
// fail with a message, and nothing else of the runtime depends on them.
//
// Contexts: cuModuleLoadDataEx loads into the calling thread's current
// driver context. Every entry point makes the context's device current
// (requireContext: cudaSetDevice, which binds the device's primary context,
// the one the runtime API created the context's stream in), and a load
// checks that the current driver context is the stream's before loading, so
// that the module's kernels can be launched on that stream.
//
// A load also enumerates the module's kernels, finishes loading each one
// (cuFuncLoad: under CUDA_MODULE_LOADING=LAZY, the default, a kernel is
// otherwise loaded at its first launch, which may then be inside a CUDA
// graph capture) and records its parameter count and sizes and its
// largest block, so that a launch checks its arguments without asking the
// driver.
//
//===----------------------------------------------------------------------===//

#include "GeneratedKernels.h"

#include "Context.h"

#include "../cpu/TensorChecks.h"

#include "fluid/runtime/CudaCheck.h"
#include "fluid/runtime/CudaKernels.h"
#include "fluid/runtime/Error.h"

#include <cudaTypedefs.h>

#include <climits>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

using namespace fluid::rt;
using namespace fluid::rt::cuda;

namespace {

/// The driver API version whose form of each entry point is asked for:
/// 12.4, the first with cuModuleEnumerateFunctions, cuFuncLoad and
/// cuFuncGetParamInfo. The PFN_ types below are the forms it gives
/// (cuStreamGetCtx with two arguments: 12.5's three-argument form is not
/// given under 12.4).
constexpr unsigned kDriverApiVersion = 12040;

/// The driver entry points used here.
struct DriverApi {
  PFN_cuGetErrorName_v6000 getErrorName = nullptr;
  PFN_cuGetErrorString_v6000 getErrorString = nullptr;
  PFN_cuCtxGetCurrent_v4000 ctxGetCurrent = nullptr;
  PFN_cuStreamGetCtx_v9020 streamGetCtx = nullptr;
  PFN_cuModuleLoadDataEx_v2010 moduleLoadDataEx = nullptr;
  PFN_cuModuleUnload_v2000 moduleUnload = nullptr;
  PFN_cuModuleGetFunctionCount_v12040 moduleGetFunctionCount = nullptr;
  PFN_cuModuleEnumerateFunctions_v12040 moduleEnumerateFunctions = nullptr;
  PFN_cuFuncLoad_v12040 funcLoad = nullptr;
  PFN_cuFuncGetName_v12030 funcGetName = nullptr;
  PFN_cuFuncGetParamInfo_v12040 funcGetParamInfo = nullptr;
  PFN_cuFuncGetAttribute_v2020 funcGetAttribute = nullptr;
  PFN_cuLaunchKernel_v4000 launchKernel = nullptr;
  /// Why the table cannot be used; empty when every entry point was found.
  std::string problem;
};

template <typename Fn>
void resolve(DriverApi &api, const char *symbol, Fn &entry) {
  if (!api.problem.empty())
    return;
  void *address = nullptr;
  cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
  cudaError_t status = cudaGetDriverEntryPointByVersion(
      symbol, &address, kDriverApiVersion, cudaEnableLegacyStream, &found);
  if (status != cudaSuccess) {
    (void)cudaGetLastError();
    api.problem = std::string("cudaGetDriverEntryPointByVersion(\"") + symbol +
                  "\", CUDA " + std::to_string(kDriverApiVersion) +
                  ") failed: " + cudaGetErrorName(status) + ": " +
                  cudaGetErrorString(status);
    return;
  }
  if (found != cudaDriverEntryPointSuccess || !address) {
    api.problem = std::string("the CUDA driver has no ") + symbol +
                  " of CUDA 12.4 or later (" +
                  (found == cudaDriverEntryPointVersionNotSufficent
                       ? "the driver is too old"
                       : "symbol not found") +
                  ")";
    return;
  }
  entry = reinterpret_cast<Fn>(address);
}

/// The driver's entry points, resolved at the first call (thread-safe, as
/// a function-local static).
const DriverApi &driverTable() {
  static const DriverApi api = [] {
    DriverApi a;
    resolve(a, "cuGetErrorName", a.getErrorName);
    resolve(a, "cuGetErrorString", a.getErrorString);
    resolve(a, "cuCtxGetCurrent", a.ctxGetCurrent);
    resolve(a, "cuStreamGetCtx", a.streamGetCtx);
    resolve(a, "cuModuleLoadDataEx", a.moduleLoadDataEx);
    resolve(a, "cuModuleUnload", a.moduleUnload);
    resolve(a, "cuModuleGetFunctionCount", a.moduleGetFunctionCount);
    resolve(a, "cuModuleEnumerateFunctions", a.moduleEnumerateFunctions);
    resolve(a, "cuFuncLoad", a.funcLoad);
    resolve(a, "cuFuncGetName", a.funcGetName);
    resolve(a, "cuFuncGetParamInfo", a.funcGetParamInfo);
    resolve(a, "cuFuncGetAttribute", a.funcGetAttribute);
    resolve(a, "cuLaunchKernel", a.launchKernel);
    return a;
  }();
  return api;
}

/// The table, failing (unsupported) when the driver lacks an entry point.
const DriverApi &driver() {
  const DriverApi &api = driverTable();
  if (!api.problem.empty())
    throw Error(FLUID_ERROR_UNSUPPORTED,
                "generated kernels need the CUDA driver API: " + api.problem);
  return api;
}

/// "CUDA_ERROR_INVALID_PTX: a PTX JIT compilation failed".
std::string resultText(const DriverApi &api, CUresult result) {
  const char *name = nullptr;
  const char *text = nullptr;
  if (api.getErrorName(result, &name) != CUDA_SUCCESS || !name)
    name = nullptr;
  if (api.getErrorString(result, &text) != CUDA_SUCCESS || !text)
    text = nullptr;
  return (name ? std::string(name)
               : "CUresult " + std::to_string(static_cast<int>(result))) +
         ": " + (text ? text : "unknown error");
}

} // namespace

/// Checks a driver call as FLUID_CUDA_CHECK checks a runtime call.
#define FLUID_CU_CHECK(api, call)                                              \
  do {                                                                         \
    CUresult fluidCheckResult = (call);                                        \
    if (fluidCheckResult != CUDA_SUCCESS)                                      \
      ::fluid::rt::detail::throwDeviceError(                                   \
          #call, __FILE__, __LINE__, resultText(api, fluidCheckResult));       \
  } while (0)

namespace {

/// Bytes of each JIT log buffer (the driver caps its logs there).
constexpr unsigned kJitLogBytes = 16384;
/// The most characters of a JIT log kept in a message.
constexpr size_t kJitLogShown = 2000;
/// A kernel's parameters take at most 32764 bytes: a bound on the probing.
constexpr int64_t kMaxParameters = 32768;
/// How many kernel names an unknown-kernel message lists.
constexpr size_t kNamesShown = 16;

std::string pointerText(const void *pointer) {
  std::ostringstream s;
  s << pointer;
  return s.str();
}

std::string moduleText(const char *image) {
  return "the generated module at " + pointerText(image);
}

std::string kernelText(const char *image, const GeneratedKernel &kernel) {
  return "kernel '" + kernel.name + "' of " + moduleText(image);
}

/// A JIT log on one line: its lines trimmed, empty ones dropped, joined by
/// "; ", cut after kJitLogShown characters.
std::string trimLog(const std::vector<char> &buffer) {
  const std::string log(buffer.data(), strnlen(buffer.data(), buffer.size()));
  std::string joined;
  std::istringstream lines(log);
  for (std::string line; std::getline(lines, line);) {
    const size_t first = line.find_first_not_of(" \t\r");
    if (first == std::string::npos)
      continue;
    const size_t last = line.find_last_not_of(" \t\r");
    if (!joined.empty())
      joined += "; ";
    joined += line.substr(first, last - first + 1);
  }
  if (joined.size() > kJitLogShown)
    joined = joined.substr(0, kJitLogShown) + " [...]";
  return joined;
}

} // namespace

//===----------------------------------------------------------------------===//
// GeneratedModules
//===----------------------------------------------------------------------===//

GeneratedModules::Module::~Module() {
  // A module exists only if the table was complete.
  if (handle)
    (void)driverTable().moduleUnload(handle);
}

GeneratedModules::~GeneratedModules() = default;

void GeneratedModules::load(const char *image, cudaStream_t stream) {
  if (modules_.find(image) == modules_.end())
    loadModule(image, stream);
}

GeneratedModules::Module &GeneratedModules::loadModule(const char *image,
                                                       cudaStream_t stream) {
  cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
  FLUID_CUDA_CHECK(cudaStreamIsCapturing(stream, &capture));
  if (capture != cudaStreamCaptureStatusNone)
    fail(moduleText(image) +
         " is not loaded, and cannot be loaded during CUDA graph capture: "
         "load it (fluid_cuda_load_generated) before capturing");
  const DriverApi &api = driver();

  CUcontext current = nullptr;
  CUcontext ofStream = nullptr;
  FLUID_CU_CHECK(api, api.ctxGetCurrent(&current));
  FLUID_CU_CHECK(api, api.streamGetCtx(stream, &ofStream));
  if (!current || current != ofStream)
    throw Error(FLUID_ERROR_DEVICE,
                "cannot load " + moduleText(image) +
                    ": the calling thread's current CUDA context is not the "
                    "one of the context's stream (the device's primary "
                    "context)");

  std::vector<char> errorLog(kJitLogBytes, '\0');
  std::vector<char> infoLog(kJitLogBytes, '\0');
  CUjit_option options[] = {
      CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
      CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES};
  void *values[] = {
      errorLog.data(), reinterpret_cast<void *>(uintptr_t(kJitLogBytes)),
      infoLog.data(), reinterpret_cast<void *>(uintptr_t(kJitLogBytes))};
  auto module = std::make_unique<Module>();
  CUmodule handle = nullptr;
  const CUresult loaded = api.moduleLoadDataEx(
      &handle, image, static_cast<unsigned>(std::size(options)), options,
      values);
  if (loaded != CUDA_SUCCESS) {
    std::string log = trimLog(errorLog);
    if (log.empty())
      log = trimLog(infoLog);
    throw Error(FLUID_ERROR_DEVICE,
                "cannot load " + moduleText(image) +
                    ": cuModuleLoadDataEx failed: " + resultText(api, loaded) +
                    (log.empty() ? "; the driver's JIT log is empty"
                                 : "; the driver's JIT log: " + log));
  }
  module->handle = handle; // unloaded by ~Module from here on

  unsigned count = 0;
  FLUID_CU_CHECK(api, api.moduleGetFunctionCount(&count, handle));
  std::vector<CUfunction> functions(count);
  if (count)
    FLUID_CU_CHECK(
        api, api.moduleEnumerateFunctions(functions.data(), count, handle));
  module->kernels.reserve(count);
  for (CUfunction function : functions) {
    GeneratedKernel kernel;
    kernel.function = function;
    FLUID_CU_CHECK(api, api.funcLoad(function));
    const char *name = nullptr;
    FLUID_CU_CHECK(api, api.funcGetName(&name, function));
    kernel.name = name ? name : "";
    for (; kernel.parameters < kMaxParameters; ++kernel.parameters) {
      size_t offset = 0;
      size_t size = 0;
      const CUresult found = api.funcGetParamInfo(
          function, static_cast<size_t>(kernel.parameters), &offset, &size);
      if (found == CUDA_ERROR_INVALID_VALUE)
        break; // past the last parameter
      FLUID_CU_CHECK(api, found);
      if (size != sizeof(void *) && kernel.firstNonPointer < 0)
        kernel.firstNonPointer = kernel.parameters;
    }
    FLUID_CU_CHECK(api, api.funcGetAttribute(
                            &kernel.maxThreadsPerBlock,
                            CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, function));
    module->kernels.push_back(std::move(kernel));
  }

  // Indexed once complete: the keys view the kernels' names.
  Module &result = *module;
  modules_.emplace(image, std::move(module));
  try {
    for (const GeneratedKernel &kernel : result.kernels)
      kernels_.emplace(Key{image, kernel.name}, &kernel);
  } catch (...) {
    for (const GeneratedKernel &kernel : result.kernels)
      kernels_.erase(Key{image, kernel.name});
    modules_.erase(image);
    throw;
  }
  return result;
}

void GeneratedModules::failUnknown(const char *image, const char *name,
                                   const Module &module) const {
  std::string kernels;
  for (size_t i = 0; i < module.kernels.size() && i < kNamesShown; ++i)
    kernels += (i ? ", " : "") + module.kernels[i].name;
  if (module.kernels.size() > kNamesShown)
    kernels +=
        " and " + std::to_string(module.kernels.size() - kNamesShown) + " more";
  fail("no kernel '" + std::string(name) + "' in " + moduleText(image) +
       (kernels.empty() ? " (it has no kernels)"
                        : " (its kernels: " + kernels + ")"));
}

const GeneratedKernel &GeneratedModules::kernel(const char *image,
                                                const char *name,
                                                cudaStream_t stream) {
  const Key key{image, name};
  auto found = kernels_.find(key);
  if (found != kernels_.end())
    return *found->second;
  auto module = modules_.find(image);
  if (module != modules_.end())
    failUnknown(image, name, *module->second);
  const Module &loaded = loadModule(image, stream);
  found = kernels_.find(key);
  if (found != kernels_.end())
    return *found->second;
  failUnknown(image, name, loaded);
}

void GeneratedModules::launch(const GeneratedKernel &kernel, unsigned blocks,
                              unsigned threads, cudaStream_t stream,
                              void **parameters) {
  const DriverApi &api = driver();
  const CUresult launched =
      api.launchKernel(kernel.function, blocks, 1, 1, threads, 1, 1, 0, stream,
                       parameters, nullptr);
  if (launched != CUDA_SUCCESS)
    throw Error(FLUID_ERROR_DEVICE,
                "cuLaunchKernel of kernel '" + kernel.name + "' (" +
                    std::to_string(blocks) + " blocks of " +
                    std::to_string(threads) +
                    " threads) failed: " + resultText(api, launched));
}

//===----------------------------------------------------------------------===//
// CudaKernels.h
//===----------------------------------------------------------------------===//

extern "C" fluid_status fluid_cuda_load_generated(fluid_cuda_context *context,
                                                  const char *image) {
  return guard("fluid_cuda_load_generated", [&] {
    requireContext(context);
    if (!image)
      fail("image is null");
    generatedModules(context).load(image, streamOf(context));
  });
}

extern "C" fluid_status
fluid_cuda_launch_generated(fluid_cuda_context *context, const char *image,
                            const char *name, int64_t blocks, int32_t threads,
                            const fluid_tensor *const *tensors, int64_t count) {
  return guard("fluid_cuda_launch_generated", [&] {
    requireContext(context);
    if (!image)
      fail("image is null");
    if (!name)
      fail("name is null");
    if (blocks < 1 || blocks > INT32_MAX)
      fail("blocks must be in [1, 2147483647], got " + std::to_string(blocks));
    if (threads < 1 || threads > 1024)
      fail("threads must be in [1, 1024], got " + std::to_string(threads));
    if (count < 0)
      fail("count must be >= 0, got " + std::to_string(count));
    if (count > 0 && !tensors)
      fail("tensors is null");

    cudaStream_t stream = streamOf(context);
    const GeneratedKernel &kernel =
        generatedModules(context).kernel(image, name, stream);
    // Before reading tensors[0..count): count must be the kernel's.
    if (kernel.parameters != count)
      fail(kernelText(image, kernel) + " takes " +
           std::to_string(kernel.parameters) + " parameters, got " +
           std::to_string(count) + " tensors");
    if (kernel.firstNonPointer >= 0)
      throw Error(FLUID_ERROR_UNSUPPORTED,
                  "parameter " + std::to_string(kernel.firstNonPointer) +
                      " of " + kernelText(image, kernel) +
                      " is not a pointer; generated kernels take one pointer "
                      "per tensor");
    if (threads > kernel.maxThreadsPerBlock)
      fail(kernelText(image, kernel) + " can be launched with at most " +
           std::to_string(kernel.maxThreadsPerBlock) +
           " threads per block, got " + std::to_string(threads));

    // cuLaunchKernel's kernelParams point at the arguments: the pointers.
    constexpr int64_t kInline = 16;
    void *inlineData[kInline];
    void *inlineParameters[kInline];
    std::vector<void *> heapData;
    std::vector<void *> heapParameters;
    void **data = inlineData;
    void **parameters = inlineParameters;
    if (count > kInline) {
      heapData.resize(static_cast<size_t>(count));
      heapParameters.resize(static_cast<size_t>(count));
      data = heapData.data();
      parameters = heapParameters.data();
    }
    for (int64_t i = 0; i < count; ++i) {
      const cpu::CheckedTensor t =
          cpu::checkTensor(tensors[i], "tensors[" + std::to_string(i) + "]");
      requireDeviceMemory(context, t);
      data[i] = t.desc->data;
      parameters[i] = &data[i];
    }
    GeneratedModules::launch(kernel, static_cast<unsigned>(blocks),
                             static_cast<unsigned>(threads), stream,
                             parameters);
  });
}
