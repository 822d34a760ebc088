//===- KernelsOptimizerGroup.cu - Grouped (multi-tensor) optimizer updates ===//
//
// fluid_cuda_{sgd,momentum,adam}_group update every parameter of a group
// in ONE kernel launch, as NVIDIA apex's multi_tensor_apply does: the
// entries' tensor addresses and element counts, and a list of fixed-size
// chunks (entry, first element), make a table in device memory; the grid's
// blocks loop over the chunks. The per-element code is the single-tensor
// kernels' Update structs (OptimizerUpdates.cuh), so each entry gets
// exactly the bits fluid_cuda_<op> would give it, and sgd and momentum the
// cpu's bits. Each thread loads every input of its elements before it
// stores any output, so outputs may be their own entry's inputs.
//
// The table is uploaded once per change, not per step (findDeviceTable and
// uploadDeviceTable of Context.h, keyed by the caller's `site`): the key it
// is cached under holds every descriptor's address, dtype and shape, so a
// call whose key matches the site's last one skips the descriptors' checks
// too (they passed when the table was made) and costs the host one memcmp.
// lr, step and the parameter struct are checked at every call.
//
// Launch shape, for a memory-bound update (momentum moves 20 bytes per f32
// element) on an H200 (132 multiprocessors, ~4.2 TB/s of copy bandwidth):
//  - 512 threads per block, at least one block resident per multiprocessor
//    (up to 128 registers per thread, of which the unrolled loop uses 105
//    to 128, without spills for f32); each thread loads kIlp 16-byte
//    vectors of every input before it computes (momentum: 4 x 3 x 16
//    bytes), about 100 KB in flight per multiprocessor, more than the
//    bandwidth-latency product needs;
//  - chunks of kChunkElements (32768) elements: 655 KB of momentum traffic
//    per f32 chunk, so a block's fixed costs (reading its chunk and entry,
//    the learning rate) stay small next to its streaming, while a large
//    model still makes several chunks per resident block (ResNet-50: 895
//    chunks for 132 resident blocks), which keeps the last wave short; a
//    multiple of every vector width, so chunk starts keep an entry's
//    alignment;
//  - grid = min(chunks, kWaves * resident blocks): up to that size every
//    chunk is its own block and the hardware's block scheduler balances
//    entries of uneven sizes; beyond it blocks loop over the chunks.
// Measured with bench/optimizer-group.py on an H200, ResNet-50's momentum
// update (511 MB) replayed as a graph: 0.129 ms, 94% of the copy
// bandwidth. With 2 vectors per thread and 2 blocks per multiprocessor it
// was 91% (chunks of 32768), 92% (16384), 88% (65536), and 87% with one
// wave of blocks looping over the chunks.
// An entry whose pointers are all 16-byte aligned is processed with
// vector loads and stores (a flag per entry in the table), any other
// element by element.
//
//===----------------------------------------------------------------------===//

#include "KernelUtils.cuh"
#include "OptimizerUpdates.cuh"

#include "fluid/runtime/CudaKernels.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

using namespace fluid::rt;
using namespace fluid::rt::cuda;
using namespace fluid::rt::cuda::optimizer;

namespace {

constexpr int kGroupThreads = 512;
constexpr int kGroupMinBlocksPerSm = 1;
/// Input vectors each thread loads before it computes: about 192 bytes in
/// flight (sgd 6 x 2 inputs, momentum 4 x 3, adam 3 x 4).
template <typename Update>
constexpr int kIlp = Update::kInputs >= 4 ? 3 : 12 / Update::kInputs;
constexpr int64_t kChunkElements = 32768;
constexpr int kWaves = 8;

/// One entry of a group in the device table: NIn input and NOut output
/// tensors of `numel` elements each.
template <int NT> struct GroupEntry {
  void *tensors[NT]; // the inputs, then the outputs
  int64_t numel;
  int64_t vectorized; // 1: every pointer is 16-byte aligned
};

/// Elements [start, min(start + kChunkElements, numel)) of one entry.
struct GroupChunk {
  int64_t entry;
  int64_t start;
};

/// Applies `update` to elements [begin, end) of `entry`, at most one
/// chunk, Vec at a time (begin a multiple of Vec), kIlp<Update> vectors per
/// thread in flight. Indices inside the chunk are 32-bit, which saves
/// registers.
template <int Vec, typename T, typename Update, int NT>
__device__ void updateSpan(const GroupEntry<NT> &entry, int64_t begin,
                           int64_t end, const Update &update,
                           const typename Update::Scalars &scalars) {
  constexpr int NIn = Update::kInputs, NOut = Update::kOutputs;
  using V = Vector<T, Vec>;
  const V *in[NIn];
  V *out[NOut];
#pragma unroll
  for (int k = 0; k < NIn; ++k)
    in[k] = static_cast<const V *>(entry.tensors[k]) + begin / Vec;
#pragma unroll
  for (int k = 0; k < NOut; ++k)
    out[k] = static_cast<V *>(entry.tensors[NIn + k]) + begin / Vec;

  const int vectors = int((end - begin) / Vec);
  for (int first = threadIdx.x; first < vectors;
       first += kIlp<Update> * kGroupThreads) {
    V loaded[kIlp<Update>][NIn];
#pragma unroll
    for (int u = 0; u < kIlp<Update>; ++u) {
      const int v = first + u * kGroupThreads;
      if (v < vectors) {
#pragma unroll
        for (int k = 0; k < NIn; ++k)
          loaded[u][k] = in[k][v];
      }
    }
#pragma unroll
    for (int u = 0; u < kIlp<Update>; ++u) {
      const int v = first + u * kGroupThreads;
      if (v < vectors) {
        V results[NOut];
#pragma unroll
        for (int j = 0; j < Vec; ++j) {
          T values[NIn], computed[NOut];
#pragma unroll
          for (int k = 0; k < NIn; ++k)
            values[k] = loaded[u][k].v[j];
          update.apply(scalars, values, computed);
#pragma unroll
          for (int k = 0; k < NOut; ++k)
            results[k].v[j] = computed[k];
        }
#pragma unroll
        for (int k = 0; k < NOut; ++k)
          out[k][v] = results[k];
      }
    }
  }
  if constexpr (Vec > 1) {
    // An entry's last chunk may end inside a vector.
    const int64_t i = begin + int64_t(vectors) * Vec + threadIdx.x;
    if (i < end) {
      T values[NIn], computed[NOut];
#pragma unroll
      for (int k = 0; k < NIn; ++k)
        values[k] = static_cast<const T *>(entry.tensors[k])[i];
      update.apply(scalars, values, computed);
#pragma unroll
      for (int k = 0; k < NOut; ++k)
        static_cast<T *>(entry.tensors[NIn + k])[i] = computed[k];
    }
  }
}

template <typename T, typename Update, int NT>
__global__ void __launch_bounds__(kGroupThreads, kGroupMinBlocksPerSm)
    groupUpdateKernel(const GroupEntry<NT> *__restrict__ entries,
                      const GroupChunk *__restrict__ chunks, int64_t chunkCount,
                      Update update, DeviceErrorRecord *errors) {
  typename Update::Scalars scalars;
  if (!update.prepare(scalars, errors, blockIdx.x == 0 && threadIdx.x == 0))
    return;
  constexpr int kVec = int(16 / sizeof(T));
  for (int64_t c = blockIdx.x; c < chunkCount; c += gridDim.x) {
    const GroupChunk chunk = chunks[c];
    const GroupEntry<NT> &entry = entries[chunk.entry];
    const int64_t end = min(chunk.start + kChunkElements, entry.numel);
    if (entry.vectorized)
      updateSpan<kVec, T>(entry, chunk.start, end, update, scalars);
    else
      updateSpan<1, T>(entry, chunk.start, end, update, scalars);
  }
}

//===----------------------------------------------------------------------===//
// Host side
//===----------------------------------------------------------------------===//

/// A grouped call's descriptor arrays: the inputs, then the outputs, each
/// of `count` descriptors, named as the entry point's parameters.
template <int NT> struct Group {
  int64_t count;
  const fluid_tensor *arrays[NT];
  const char *names[NT];

  const fluid_tensor &tensor(int j, int64_t k) const { return arrays[j][k]; }
};

/// Fails unless the group has at least one entry and no null array (as
/// Optimizer.cpp's requireGroup).
template <int NT> void requireGroup(const Group<NT> &group) {
  if (group.count < 1)
    fail("count must be >= 1, got " + std::to_string(group.count));
  for (int j = 0; j < NT; ++j)
    if (!group.arrays[j])
      fail(std::string(group.names[j]) + " array is null");
}

/// What the group's table is made from: the entry point, the count, and
/// every descriptor's data, dtype, rank and dimensions, unchecked (rank
/// bounds how many dimensions are read).
template <int NT>
std::vector<int64_t> tableKey(const Group<NT> &group, uint32_t entryPoint) {
  std::vector<int64_t> key;
  key.reserve(size_t(2 + group.count * NT * 4));
  key.push_back(entryPoint);
  key.push_back(group.count);
  for (int64_t k = 0; k < group.count; ++k) {
    for (int j = 0; j < NT; ++j) {
      const fluid_tensor &t = group.tensor(j, k);
      key.push_back(int64_t(reinterpret_cast<uintptr_t>(t.data)));
      key.push_back(int64_t(uint64_t(uint32_t(t.dtype)) << 32 |
                            uint64_t(uint32_t(t.rank))));
      const int32_t rank = t.rank >= 0 && t.rank <= FLUID_MAX_RANK ? t.rank : 0;
      key.insert(key.end(), t.shape, t.shape + rank);
    }
  }
  return key;
}

/// Checks every descriptor of every entry, as fluid_cpu_<op>_group does:
/// each entry as the single-tensor update's operands, with the float dtype
/// of params[0]; a failure's message is prefixed with "entry k: ".
template <int NT>
void checkEntries(fluid_cuda_context *context, const Group<NT> &group) {
  CheckedTensor reference{};
  for (int64_t k = 0; k < group.count; ++k) {
    try {
      std::vector<CheckedTensor> operands;
      operands.reserve(NT);
      for (int j = 0; j < NT; ++j)
        operands.push_back(checkTensor(context, &group.tensor(j, k),
                                       std::string(group.names[j]) + "[" +
                                           std::to_string(k) + "]"));
      const CheckedTensor &param = operands[0];
      if (k > 0)
        cpu::requireDtype(param, reference);
      requireFloatDtype(param);
      for (int j = 1; j < NT; ++j) {
        cpu::requireDtype(operands[j], param);
        cpu::requireShape(operands[j], param.shape);
      }
      if (k == 0)
        reference = operands[0];
    } catch (const Error &e) {
      throw Error(e.status(), "entry " + std::to_string(k) + ": " + e.what());
    }
  }
}

/// The element count of entry k (its descriptors were checked).
template <int NT> int64_t entryNumel(const Group<NT> &group, int64_t k) {
  return fluid_tensor_numel(&group.tensor(0, k));
}

/// The number of chunks of a checked group.
template <int NT> int64_t chunkCount(const Group<NT> &group) {
  int64_t chunks = 0;
  for (int64_t k = 0; k < group.count; ++k)
    chunks += ceilDiv(entryNumel(group, k), kChunkElements);
  return chunks;
}

/// The device table of a checked group: GroupEntry<NT>[count], then
/// GroupChunk[chunkCount(group)].
template <int NT>
std::vector<unsigned char> buildTable(const Group<NT> &group, int64_t chunks) {
  const size_t entryBytes = sizeof(GroupEntry<NT>) * size_t(group.count);
  std::vector<unsigned char> table(entryBytes +
                                   sizeof(GroupChunk) * size_t(chunks));
  GroupChunk *chunk = reinterpret_cast<GroupChunk *>(table.data() + entryBytes);
  for (int64_t k = 0; k < group.count; ++k) {
    GroupEntry<NT> entry{};
    bool aligned = true;
    for (int j = 0; j < NT; ++j) {
      entry.tensors[j] = group.tensor(j, k).data;
      aligned =
          aligned && reinterpret_cast<uintptr_t>(entry.tensors[j]) % 16 == 0;
    }
    entry.numel = entryNumel(group, k);
    entry.vectorized = aligned ? 1 : 0;
    std::memcpy(table.data() + sizeof(GroupEntry<NT>) * size_t(k), &entry,
                sizeof(entry));
    for (int64_t start = 0; start < entry.numel; start += kChunkElements)
      *chunk++ = GroupChunk{k, start};
  }
  return table;
}

/// A group call's device table and chunk count: the site's cached table
/// when the descriptors are those it was made from, else (after checking
/// every entry with `checkRest`, which checks lr, step and the parameter
/// struct, done at every call) a new upload.
struct PreparedGroup {
  const void *table = nullptr;
  int64_t chunks = 0;
};

template <int NT, typename CheckRest>
PreparedGroup prepareGroup(fluid_cuda_context *context, const void *site,
                           const Group<NT> &group, uint32_t entryPoint,
                           CheckRest &&checkRest) {
  requireGroup(group);
  const std::vector<int64_t> key = tableKey(group, entryPoint);
  const size_t keyBytes = key.size() * sizeof(int64_t);
  PreparedGroup prepared;
  prepared.table = findDeviceTable(context, site, key.data(), keyBytes);
  if (!prepared.table)
    checkEntries(context, group);
  checkRest();
  prepared.chunks = chunkCount(group);
  if (!prepared.table && prepared.chunks > 0) {
    const std::vector<unsigned char> table = buildTable(group, prepared.chunks);
    prepared.table = uploadDeviceTable(context, site, key.data(), keyBytes,
                                       table.data(), table.size());
  }
  return prepared;
}

/// Launches `update` over a prepared group of `count` entries.
template <typename T, int NT, typename Update>
void launchGroup(cudaStream_t stream, const PreparedGroup &group, int64_t count,
                 const Update &update, DeviceErrorRecord *errors) {
  static_assert(Update::kInputs + Update::kOutputs == NT,
                "the group's arrays are the update's operands");
  static_assert(kChunkElements % (16 / sizeof(T)) == 0,
                "chunks start at vector boundaries");
  if (group.chunks == 0)
    return;
  const auto *entries = static_cast<const GroupEntry<NT> *>(group.table);
  const auto *chunks = reinterpret_cast<const GroupChunk *>(
      static_cast<const unsigned char *>(group.table) +
      sizeof(GroupEntry<NT>) * size_t(count));
  const int64_t resident =
      int64_t(multiprocessorCount()) * kGroupMinBlocksPerSm;
  const int grid = int(std::min(group.chunks, kWaves * resident));
  groupUpdateKernel<T, Update, NT><<<grid, kGroupThreads, 0, stream>>>(
      entries, chunks, group.chunks, update, errors);
  checkLaunch();
}

} // namespace

extern "C" fluid_status
fluid_cuda_sgd_group(fluid_cuda_context *context, const void *site,
                     int64_t count, const fluid_tensor *params,
                     const fluid_tensor *grads, const fluid_tensor *lrDesc,
                     const fluid_tensor *foundInfDesc, fluid_tensor *newParams,
                     const fluid_sgd_params *p) {
  return guard("fluid_cuda_sgd_group", [&] {
    cudaStream_t stream = streamFor(context);
    const Group<3> group{
        count, {params, grads, newParams}, {"params", "grads", "new_params"}};
    LearningRate lr{};
    const float *foundInf = nullptr;
    const PreparedGroup prepared =
        prepareGroup(context, site, group, kFromSgdGroup, [&] {
          CheckedTensor lrTensor = checkTensor(context, lrDesc, "lr");
          if (!p)
            fail("p is null");
          checkSgdParams(*p);
          lr = checkLearningRate(lrTensor);
          foundInf = checkFoundInf(context, foundInfDesc);
        });
    DeviceErrorRecord *errors = deviceErrorRecord(context);
    cpu::dispatchFloat(params[0].dtype, [&](auto zero) {
      using T = decltype(zero);
      launchGroup<T, 3>(stream, prepared, count,
                        makeSgdUpdate<T>(lr, *p, kFromSgdGroup, foundInf),
                        errors);
    });
  });
}

extern "C" fluid_status fluid_cuda_momentum_group(
    fluid_cuda_context *context, const void *site, int64_t count,
    const fluid_tensor *params, const fluid_tensor *grads,
    const fluid_tensor *velocities, const fluid_tensor *lrDesc,
    const fluid_tensor *foundInfDesc, fluid_tensor *newParams,
    fluid_tensor *newVelocities, const fluid_momentum_params *p) {
  return guard("fluid_cuda_momentum_group", [&] {
    cudaStream_t stream = streamFor(context);
    const Group<5> group{
        count,
        {params, grads, velocities, newParams, newVelocities},
        {"params", "grads", "velocities", "new_params", "new_velocities"}};
    LearningRate lr{};
    const float *foundInf = nullptr;
    const PreparedGroup prepared =
        prepareGroup(context, site, group, kFromMomentumGroup, [&] {
          CheckedTensor lrTensor = checkTensor(context, lrDesc, "lr");
          if (!p)
            fail("p is null");
          checkMomentumParams(*p);
          lr = checkLearningRate(lrTensor);
          foundInf = checkFoundInf(context, foundInfDesc);
        });
    DeviceErrorRecord *errors = deviceErrorRecord(context);
    cpu::dispatchFloat(params[0].dtype, [&](auto zero) {
      using T = decltype(zero);
      launchGroup<T, 5>(
          stream, prepared, count,
          makeMomentumUpdate<T>(lr, *p, kFromMomentumGroup, foundInf), errors);
    });
  });
}

extern "C" fluid_status
fluid_cuda_adam_group(fluid_cuda_context *context, const void *site,
                      int64_t count, const fluid_tensor *params,
                      const fluid_tensor *grads, const fluid_tensor *expAvgs,
                      const fluid_tensor *expAvgSqs, const fluid_tensor *lrDesc,
                      const fluid_tensor *stepDesc,
                      const fluid_tensor *foundInfDesc, fluid_tensor *newParams,
                      fluid_tensor *newExpAvgs, fluid_tensor *newExpAvgSqs,
                      const fluid_adam_params *p) {
  return guard("fluid_cuda_adam_group", [&] {
    cudaStream_t stream = streamFor(context);
    const Group<7> group{count,
                         {params, grads, expAvgs, expAvgSqs, newParams,
                          newExpAvgs, newExpAvgSqs},
                         {"params", "grads", "exp_avgs", "exp_avg_sqs",
                          "new_params", "new_exp_avgs", "new_exp_avg_sqs"}};
    LearningRate lr{};
    const int64_t *step = nullptr;
    const float *foundInf = nullptr;
    const PreparedGroup prepared =
        prepareGroup(context, site, group, kFromAdamGroup, [&] {
          CheckedTensor lrTensor = checkTensor(context, lrDesc, "lr");
          CheckedTensor stepTensor = checkTensor(context, stepDesc, "step");
          if (!p)
            fail("p is null");
          checkAdamParams(*p);
          lr = checkLearningRate(lrTensor);
          step = checkStep(stepTensor);
          foundInf = checkFoundInf(context, foundInfDesc);
        });
    DeviceErrorRecord *errors = deviceErrorRecord(context);
    cpu::dispatchFloat(params[0].dtype, [&](auto zero) {
      using T = decltype(zero);
      launchGroup<T, 7>(
          stream, prepared, count,
          makeAdamUpdate<T>(lr, step, *p, kFromAdamGroup, foundInf), errors);
    });
  });
}

namespace {

/// fluid_cuda_unscale_grads' per-element code: in: grad; out: new grad;
/// a non-finite grad sets the flag (every writer stores the same 1.0, as
/// PyTorch's kernel does).
template <typename T> struct UnscaleUpdate {
  static constexpr int kInputs = 1, kOutputs = 1;
  const float *scale;
  float *foundInf;

  struct Scalars {
    T inverse;
  };

  __device__ bool prepare(Scalars &s, DeviceErrorRecord *, bool) const {
    // PyTorch: inv_scale = scale.double().reciprocal().float().
    s.inverse = T(__double2float_rn(__drcp_rn(double(*scale))));
    return true;
  }

  __device__ void apply(const Scalars &s, const T (&in)[1], T (&out)[1]) const {
    const T g = in[0];
    if (!isfinite(g))
      *foundInf = 1.0f;
    out[0] = math::mulRn(g, s.inverse);
  }
};

/// A rank-0 f32 tensor's device address, after its descriptor's checks.
float *checkF32Scalar(fluid_cuda_context *context, const fluid_tensor *desc,
                      const char *name) {
  CheckedTensor t = checkTensor(context, desc, name);
  cpu::requireRank(t, 0);
  if (t.dtype() != FLUID_F32)
    fail(std::string(name) + " has dtype " + cpu::dtypeName(t.dtype()) +
         "; expected f32");
  return t.data<float>();
}

} // namespace

extern "C" fluid_status
fluid_cuda_unscale_grads(fluid_cuda_context *context, const void *site,
                         int64_t count, const fluid_tensor *grads,
                         const fluid_tensor *scaleDesc, fluid_tensor *newGrads,
                         fluid_tensor *foundInfDesc) {
  return guard("fluid_cuda_unscale_grads", [&] {
    cudaStream_t stream = streamFor(context);
    const Group<2> group{count, {grads, newGrads}, {"grads", "new_grads"}};
    const float *scale = nullptr;
    float *foundInf = nullptr;
    const PreparedGroup prepared =
        prepareGroup(context, site, group, kFromUnscaleGrads, [&] {
          scale = checkF32Scalar(context, scaleDesc, "scale");
          foundInf = checkF32Scalar(context, foundInfDesc, "found_inf");
        });
    FLUID_CUDA_CHECK(cudaMemsetAsync(foundInf, 0, sizeof(float), stream));
    DeviceErrorRecord *errors = deviceErrorRecord(context);
    cpu::dispatchFloat(grads[0].dtype, [&](auto zero) {
      using T = decltype(zero);
      launchGroup<T, 2>(stream, prepared, count,
                        UnscaleUpdate<T>{scale, foundInf}, errors);
    });
  });
}
