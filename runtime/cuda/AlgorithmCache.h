//===- AlgorithmCache.h - cuDNN convolution algorithms, chosen once -------===//
//
// cudnnFind times every algorithm of a convolution, which takes far longer
// than the convolution itself, so its answer is kept per convolution
// problem (flashlight's lesson: search once per shape, not per step). The
// key is the full problem as cuDNN sees it: the pass (forward, backward
// data, backward filter), input [N,C,H,W], filter [K,C/groups,R,S] (sizes
// by meaning; the layout, nchw or nhwc, says how they are stored),
// strides, padding, dilation, groups, dtype, layout and math type. The
// choices persist in a small text file, so that a second run of the same
// program searches nothing.
//
// A workspace limit (fluid_cuda_set_workspace_limit) leaves algorithms
// out of a search, so each choice records the limit it was searched under:
// the most workspace its algorithm could have, or none when no algorithm
// was left out for its workspace. A choice found under limit S is the
// fastest of the algorithms needing at most S, so it is also the fastest
// under any limit L with workspace(choice) <= L <= S; under any other
// limit (a smaller one it does not fit, or a larger one under which a
// faster algorithm may fit) the problem is searched again and the new
// choice replaces it.
//
// The file: a header line naming the format, the cuDNN version and the
// device's compute capability (choices of another cuDNN or GPU are not
// reused), then one line per key, sorted, e.g.
//   fwd n=2 c=3 h=8 w=8 k=4 c/g=3 r=3 s=3 stride=1,1 pad=1,1 dilation=1,1
//   groups=1 dtype=f32 layout=nchw math=fma -> algo=1 algo_math=fma
//   workspace_limit=none
// (one line in the file; workspace_limit is a byte count or none). It is
// written to a temporary file renamed over the old one, so a crash never leaves
// half a file; a file that does not parse is ignored with a warning on stderr,
// never trusted in part.
//
//===----------------------------------------------------------------------===//

#ifndef FLUID_RUNTIME_CUDA_ALGORITHMCACHE_H
#define FLUID_RUNTIME_CUDA_ALGORITHMCACHE_H

#include <cudnn.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <tuple>

namespace fluid::rt::cuda {

/// Which of cuDNN's three convolution computations a choice is for.
enum class ConvPass { Forward, BackwardData, BackwardFilter };

/// A convolution problem exactly as it is handed to cuDNN (after any
/// explicit padding of the input: see CudnnConv.cpp), so two problems with
/// the same key run the same kernels.
struct ConvAlgoKey {
  ConvPass pass = ConvPass::Forward;
  int64_t batch = 0, inChannels = 0, inHeight = 0, inWidth = 0;
  int64_t outChannels = 0, inChannelsPerGroup = 0;
  int64_t kernelHeight = 0, kernelWidth = 0;
  int64_t strideHeight = 0, strideWidth = 0;
  int64_t padHeight = 0, padWidth = 0; // symmetric, as cuDNN pads
  int64_t dilationHeight = 0, dilationWidth = 0;
  int64_t groups = 0;
  int32_t dtype = 0; // a fluid_dtype
  cudnnTensorFormat_t layout = CUDNN_TENSOR_NCHW;
  cudnnMathType_t mathType = CUDNN_DEFAULT_MATH; // as requested

  /// The key's text in the cache file (the part before " -> ").
  std::string toString() const;

  /// Every field, for comparisons.
  auto tie() const {
    return std::tie(pass, batch, inChannels, inHeight, inWidth, outChannels,
                    inChannelsPerGroup, kernelHeight, kernelWidth, strideHeight,
                    strideWidth, padHeight, padWidth, dilationHeight,
                    dilationWidth, groups, dtype, layout, mathType);
  }
  bool operator<(const ConvAlgoKey &other) const { return tie() < other.tie(); }
};

/// What cudnnFind chose: the algorithm (a cudnnConvolution{Fwd,BwdData,
/// BwdFilter}Algo_t, by the key's pass) and the math type to run it with.
struct ConvAlgoChoice {
  int algorithm = 0;
  cudnnMathType_t mathType = CUDNN_DEFAULT_MATH;
  /// The workspace the algorithm needs for this problem, asked of cuDNN
  /// once per process (not persisted): unset for a choice loaded from the
  /// file until its first use confirms that cuDNN accepts it.
  std::optional<size_t> workspaceBytes;
  /// The most workspace an algorithm could have in the search that chose
  /// this one; none when the search left no algorithm out for its
  /// workspace (see the file comment).
  std::optional<size_t> searchLimit;

  /// Whether this choice is what a search under `limit` (none: no limit)
  /// would choose. Needs workspaceBytes.
  bool validUnder(std::optional<size_t> limit) const {
    if (limit && *workspaceBytes > *limit)
      return false;
    return !searchLimit || (limit && *limit <= *searchLimit);
  }
};

/// The choices of one context, loaded from and saved to one file.
class ConvAlgoCache {
public:
  /// An empty cache kept in memory only.
  ConvAlgoCache() = default;

  /// Loads `path` if it exists ("" keeps the cache in memory only). The
  /// file is used only if its header matches `fingerprint` (cuDNN version
  /// and compute capability) and every line parses; otherwise it is
  /// ignored with one warning on stderr, and overwritten on save.
  ConvAlgoCache(std::string path, std::string fingerprint);

  /// The choice for `key`, or null (the pointer is valid until the next
  /// insert or erase). Counts nothing: see recordHit.
  ConvAlgoChoice *lookup(const ConvAlgoKey &key);
  /// Counts one choice served from the cache.
  void recordHit() { ++hits_; }
  /// Stores the result of one cudnnFind (replacing an earlier choice for
  /// the key), counted as a search.
  ConvAlgoChoice &insert(const ConvAlgoKey &key, const ConvAlgoChoice &choice);
  /// Drops a choice that cuDNN no longer accepts.
  void erase(const ConvAlgoKey &key);

  /// Writes the file (temporary file, then rename) if the choices changed
  /// since loading; a no-op without a path. Throws Error(FLUID_ERROR_IO).
  void save();

  int64_t searches() const { return searches_; }
  int64_t hits() const { return hits_; }
  size_t size() const { return choices_.size(); }

private:
  void load();

  std::string path_;
  std::string fingerprint_;
  std::map<ConvAlgoKey, ConvAlgoChoice> choices_;
  bool dirty_ = false;
  int64_t searches_ = 0;
  int64_t hits_ = 0;
};

} // namespace fluid::rt::cuda

#endif // FLUID_RUNTIME_CUDA_ALGORITHMCACHE_H
