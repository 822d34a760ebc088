//===- GeneratedKernels.h - The compiler's kernels, loaded per context ----===//
//
// The compiler emits, per program, one module of generated kernels (PTX text
// from MLIR's gpu -> NVVM path, or a cubin/fatbin) as a static array, which
// fluid_cuda_load_generated and fluid_cuda_launch_generated (CudaKernels.h)
// load and launch through the CUDA driver API. The runtime does not link
// libcuda: the driver's entry points are obtained from the CUDA runtime
// (cudaGetDriverEntryPointByVersion) once, at the first load, so the library
// still loads on a machine without a driver.
//
// A context owns the modules it loaded (unloaded when it is destroyed) and
// a cache (image address, kernel name) -> kernel of every kernel of those
// modules, filled when a module is loaded: a launch costs one hash lookup,
// and nothing is loaded lazily during CUDA graph capture. Like the rest of
// a context, it is used by one thread at a time and takes no lock.
//
//===----------------------------------------------------------------------===//

#ifndef FLUID_RUNTIME_CUDA_GENERATEDKERNELS_H
#define FLUID_RUNTIME_CUDA_GENERATEDKERNELS_H

#include <cuda.h>
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace fluid::rt::cuda {

/// One kernel of a loaded module, as the launch checks it.
struct GeneratedKernel {
  std::string name;
  CUfunction function = nullptr;
  /// How many parameters the kernel takes, and the first that is not
  /// pointer-sized (-1 when all are: MLIR's bare-pointer convention).
  int64_t parameters = 0;
  int64_t firstNonPointer = -1;
  /// The most threads per block the kernel can be launched with (its
  /// register use may allow fewer than 1024).
  int maxThreadsPerBlock = 0;
};

/// The generated modules of one context.
class GeneratedModules {
public:
  GeneratedModules() = default;
  /// Unloads every module; the context's stream must be idle (the context's
  /// destructor synchronizes it first) and no CUDA graph that launches one
  /// of its kernels may be launched afterwards.
  ~GeneratedModules();
  GeneratedModules(const GeneratedModules &) = delete;
  GeneratedModules &operator=(const GeneratedModules &) = delete;

  /// Loads `image` into the current CUDA context (which must be the one of
  /// `stream`) unless it is loaded already; refused while `stream` is being
  /// captured.
  void load(const char *image, cudaStream_t stream);

  /// The kernel `name` of `image`, loading the module first if needed (as
  /// load does); fails naming the kernel and the module when there is none.
  const GeneratedKernel &kernel(const char *image, const char *name,
                                cudaStream_t stream);

  /// Launches `kernel` on `stream` with `parameters` (cuLaunchKernel's
  /// kernelParams: one pointer to each argument), a 1-D grid, no dynamic
  /// shared memory.
  static void launch(const GeneratedKernel &kernel, unsigned blocks,
                     unsigned threads, cudaStream_t stream, void **parameters);

private:
  /// A loaded module and its kernels; unloads the module when destroyed.
  struct Module {
    Module() = default;
    ~Module();
    Module(const Module &) = delete;
    Module &operator=(const Module &) = delete;

    CUmodule handle = nullptr;
    std::vector<GeneratedKernel> kernels; // complete before being indexed
  };

  /// (image address, kernel name); the name views the kernel's own string.
  struct Key {
    const char *image;
    std::string_view name;
    bool operator==(const Key &other) const {
      return image == other.image && name == other.name;
    }
  };
  struct KeyHash {
    size_t operator()(const Key &key) const {
      const size_t h = std::hash<std::string_view>()(key.name);
      return h ^ (std::hash<const void *>()(key.image) + 0x9e3779b97f4a7c15ULL +
                  (h << 6) + (h >> 2));
    }
  };

  Module &loadModule(const char *image, cudaStream_t stream);
  [[noreturn]] void failUnknown(const char *image, const char *name,
                                const Module &module) const;

  std::unordered_map<const char *, std::unique_ptr<Module>> modules_;
  // Declared after modules_: views into its kernels, destroyed first.
  std::unordered_map<Key, const GeneratedKernel *, KeyHash> kernels_;
};

} // namespace fluid::rt::cuda

#endif // FLUID_RUNTIME_CUDA_GENERATEDKERNELS_H
