//===- FusedKernels.h - Kernels generated from fused regions --------------===//
//
// A `fluid.fusion` region (docs/FUSION.md) becomes one kernel: for the cpu
// backend a C++ loop nest in the emitted program, for the cuda backend a
// gpu.func (lib/Target/GpuKernels.cpp). Both read each input through the
// same access: its element strides over the region's iteration space.
//
//===----------------------------------------------------------------------===//

#ifndef FLUID_TARGET_FUSEDKERNELS_H
#define FLUID_TARGET_FUSEDKERNELS_H

#include "fluid/Dialect/Fluid/IR/FluidOps.h"

#include <optional>
#include <string>

namespace mlir::fluid {

/// The element strides of a dense row-major tensor of `shape`.
SmallVector<int64_t> contiguousStrides(ArrayRef<int64_t> shape);

/// The block argument `value` is, or is a view of (isFusibleView); null
/// for a value the body computes.
BlockArgument viewedArgument(Value value);

/// Every operand of a body op (not a view) that reads `arg` or a view of
/// it: the places where the generated code loads from `arg`'s buffer.
SmallVector<OpOperand *> fusedAccesses(BlockArgument arg);

/// The element strides, over `fusion`'s iteration space, at which the op
/// owning `use` reads the buffer of the block argument that `use` holds or
/// views: 0 along every dimension the op broadcasts the value over (NumPy
/// broadcasting, or axis 1 only for fluid.batch_norm_apply's per-channel
/// operands), and a view's strides in the argument's buffer.
SmallVector<int64_t> fusedAccessStrides(FusionOp fusion, OpOperand &use);

/// A C++ function `static void NAME(const fluid_tensor *const *in,
/// fluid_tensor *const *out)` that computes `fusion` in one loop nest over
/// its iteration space: each op's expression is the cpu kernel's own (same
/// operations, same types), so the results are bitwise the unfused ones.
/// Every element's inputs are read before its outputs are written.
FailureOr<std::string> emitCpuFusedKernel(FusionOp fusion, StringRef name);

/// Regions without sums of at most this many elements get no vector
/// kernel (fusedVectorWidth is 1).
constexpr int64_t kScalarRegionElements = 2048;

/// The elements one step of the generated GPU kernel handles: 16 bytes'
/// worth of the narrowest element type (4 f32, 8 bf16) when the element
/// count allows it, else 1; 1 for a region without sums of at most
/// kScalarRegionElements elements.
int64_t fusedVectorWidth(FusionOp fusion);

/// Per input, then per result: whether the vector kernel moves it as
/// 16-byte vectors (an input some op reads at every element, each result),
/// so that its address must be 16-byte aligned for that kernel.
SmallVector<bool> fusedVectorOperands(FusionOp fusion);

/// Per input: how many of its elements the region reads at most, its
/// element count unless every access goes through views that select fewer
/// (batch norm's shift reads one row of its input through slices), so that
/// a kernel's traffic can be told from its operands (bench/fused-kernels.py).
SmallVector<int64_t> fusedInputElementsRead(FusionOp fusion);

/// Whether the vector kernel reads `use` (not at the element computed) by
/// one vector load per step: its lanes read consecutive elements from an
/// offset that is a multiple of fusedVectorWidth. A per-channel input of a
/// channels-last region ([C] or [N, 1, 1, C]) is read so; its buffer must
/// be aligned as the full-size ones are.
bool isLaneContiguousAccess(FusionOp fusion, OpOperand &use);

/// Whether result `output` of `fusion` may be written into the buffer of
/// input `input`: the result is elementwise (not a sum), has the input's
/// type, and the body reads the input only element by element at the
/// element being computed (every generated kernel reads an element's
/// inputs before it writes that element's outputs).
bool fusedOutputMayOverwrite(FusionOp fusion, unsigned output, unsigned input);

/// The fewest elements a block of a channels-last sum adds, by default,
/// and the range column-min-elements may set.
constexpr int64_t kColumnMinElements = 16384;
constexpr int64_t kColumnMinElementsLow = 256, kColumnMinElementsHigh = 1 << 30;
/// The most rows a channels-last sum's loop may take per step
/// (column-unroll).
constexpr int64_t kMaxColumnUnroll = 8;

/// The blocks per channel (per tile of channels, isChannelsLastSum) of a
/// region with sums (its generated kernel runs fusedReductionBlocks blocks
/// of kReductionThreads threads): enough blocks to
/// fill an H200 (16 per SM), at least 8192 elements per block. With one split
/// each block stores its channel's sums; with more the last block of a
/// channel to finish sums the blocks' partial sums in a fixed order
/// (FusedSumScratch). A channels-last region's blocks sum at least
/// `columnMinElements` elements each (column-min-elements).
int64_t fusedReductionSplits(FusionOp fusion,
                             int64_t columnMinElements = kColumnMinElements);
constexpr int64_t kReductionThreads = 256;
/// The blocks a region with sums aims for (16 per SM of an H200), and so
/// the most splits fusedReductionSplits gives.
constexpr int64_t kReductionTargetBlocks = 2112;

/// Whether `fusion` sums per channel along the last axis of a rank-4
/// iteration space (a channels-last program's batch-norm sums). Its kernel
/// walks [rows, C]: each block takes a tile of fusedColumnTileChannels
/// channels (one vector of them per thread, consecutive threads on
/// consecutive vectors, so that a warp reads whole 128-byte lines of its
/// narrowest type: 32 channels of f32, 64 of bf16 or f16) and one split
/// of the rows; it runs tiles * splits blocks. The last block of a tile
/// sums tile * reductions * splits partial sums, so tiles are narrow (more
/// tiles, fewer splits for the same number of blocks) and the splits
/// capped (kColumnPartialsPerThread).
bool isChannelsLastSum(FusionOp fusion);
/// The vectors of a tile's row: 8 of 16 bytes, one 128-byte line.
constexpr int64_t kColumnTileVectors = 8;
/// The partial sums each thread of a tile's last block reads, at most, per
/// 32 channels of the tile (a 64-channel 16-bit tile reads twice as many,
/// so that it runs as many blocks as a 32-channel f32 tile).
constexpr int64_t kColumnPartialsPerThread = 64;
/// min(C, kColumnTileVectors vectors of fusedVectorWidth channels), 32
/// channels where the width is 1.
int64_t fusedColumnTileChannels(FusionOp fusion);

/// The blocks of the generated kernel of a region with sums split `splits`
/// ways: channels * splits, or tiles * splits for a channels-last region.
int64_t fusedReductionBlocks(FusionOp fusion, int64_t splits);

/// What the generated kernel of a region with several blocks per channel
/// combines their sums through (fluid_cuda_sum_scratch; the kernel's last
/// two operands): a 32-bit counter per channel, and a partial sum of
/// `element` per block and reduction.
struct FusedSumScratch {
  int64_t counters;
  int64_t partials;
  Type element;
};
/// None for a region without sums or with one block per channel (`splits`
/// 1).
std::optional<FusedSumScratch> fusedSumScratch(FusionOp fusion, int64_t splits);

/// The gpu.module that holds the generated kernels, and the suffix of a
/// kernel's vector variant (the plain name is the scalar one, for operands
/// that are not 16-byte aligned).
constexpr const char *kGpuKernelModuleName = "fluid_kernels";
constexpr const char *kVectorSuffix = "_v";

/// A one-line summary of the region: its ops by name ("add, relu").
std::string describeFusion(FusionOp fusion);

} // namespace mlir::fluid

#endif // FLUID_TARGET_FUSEDKERNELS_H
