//===- BufferLiveness.h - Lifetimes of a training step's buffers ----------===//
//
// The buffer level (after --fluid-bufferize) of one function: which memory
// each buffer value is (its root: a memref.alloc, a view of an arena, a
// parameter's buffer or an argument), which roots must outlive the step
// (parameters, arguments, results, constants, arenas) and, for every other
// root (a temporary), the first and the last launch that touches it
// through any of its aliases (fluid_rt.view and memref.view chains).
//
// Positions count the function's ops in program order. A temporary is live
// from its first use to its last use, both included; two temporaries may
// share memory exactly when their intervals do not intersect. Frees,
// views and allocations are not uses. (mlir::Liveness answers whether one
// SSA value is live; here the question is about memory reached through
// several values, so the uses of every alias are scanned: in one block
// that is exact and linear.)
//
//===----------------------------------------------------------------------===//

#ifndef FLUID_ANALYSIS_BUFFERLIVENESS_H
#define FLUID_ANALYSIS_BUFFERLIVENESS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"

#include <optional>

namespace mlir::fluid {

class BufferLiveness {
public:
  /// Why a root is not a temporary.
  enum class Kind {
    Temporary, ///< freed and reused within the step
    Parameter, ///< fluid_rt.param_ref: lives across steps
    Argument,  ///< the function's argument: the caller's memory
    Result,    ///< returned: read by the caller after the step
    Constant,  ///< written once by the program's initializer
    Arena,     ///< an arena (a memref.alloc viewed by memref.view)
  };

  struct Buffer {
    /// The root value: a memref.alloc, a memref.view of an arena, a
    /// fluid_rt.param_ref or a block argument.
    Value root;
    Kind kind;
    /// Bytes of the root's type (the arena's size for an arena).
    int64_t bytes;
    /// For a view of an arena: the arena and the byte offset in it.
    Value arena;
    int64_t arenaOffset = 0;
    /// Positions of the first and last ops other than allocations, views
    /// and frees that use the root or an alias (first == last == -1: none).
    int64_t first = -1, last = -1;
    /// The op that first writes the buffer (a launch or copy output), or
    /// the first user; null when unused.
    Operation *producer = nullptr;
    /// The root and every view of it.
    SmallVector<Value, 2> aliases;

    bool isTemporary() const { return kind == Kind::Temporary; }
    bool isLive(int64_t position) const {
      return first >= 0 && first <= position && position <= last;
    }
  };

  /// Analyzes a single-block function of the buffer level. Ops it does not
  /// know count as uses of their operands.
  explicit BufferLiveness(func::FuncOp func);

  func::FuncOp getFunction() const { return func; }
  /// Every root, in program order of definition (arguments first).
  ArrayRef<Buffer> getBuffers() const { return buffers; }
  /// The buffer `value` is a view of (itself, for a root); null if `value`
  /// is not a memref of this function.
  const Buffer *lookup(Value value) const;
  /// The position of `op` in the function's block.
  int64_t getPosition(Operation *op) const { return positions.lookup(op); }
  Operation *getOp(int64_t position) const { return ops[position]; }
  int64_t getNumOps() const { return static_cast<int64_t>(ops.size()); }

  /// Bytes of temporaries live at `position`, each rounded up to
  /// `alignment`.
  int64_t liveBytesAt(int64_t position, int64_t alignment = 1) const;
  /// The largest liveBytesAt over the function and the first position
  /// where it occurs (-1 when the function has no temporaries): no
  /// assignment of offsets can need fewer bytes.
  std::pair<int64_t, int64_t> peak(int64_t alignment = 1) const;
  /// Bytes of roots that are not temporaries, by kind (arenas excluded).
  int64_t persistentBytes(Kind kind) const;

  /// Whether `op` is one the analysis treats as an allocation, a view or a
  /// free (not a use).
  static bool isAllocationOrView(Operation *op);

private:
  func::FuncOp func;
  SmallVector<Operation *> ops;
  DenseMap<Operation *, int64_t> positions;
  SmallVector<Buffer> buffers;
  DenseMap<Value, unsigned> bufferOf;
};

/// Runs `fn` on every function of `module` that has a body; a function of
/// several blocks is an error "--PASS handles single-block functions only".
LogicalResult
forEachBufferFunction(ModuleOp module, StringRef pass,
                      function_ref<LogicalResult(func::FuncOp)> fn);

/// "temporary", "parameter", ...
StringRef stringifyBufferKind(BufferLiveness::Kind kind);

/// `bytes` rounded up to a multiple of `alignment` (> 0).
inline int64_t alignBytes(int64_t bytes, int64_t alignment) {
  return (bytes + alignment - 1) / alignment * alignment;
}

} // namespace mlir::fluid

#endif // FLUID_ANALYSIS_BUFFERLIVENESS_H
