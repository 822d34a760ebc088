//===- InputGuards.h - Checks on untrusted textual input ------------------===//

#ifndef FLUID_SUPPORT_INPUTGUARDS_H
#define FLUID_SUPPORT_INPUTGUARDS_H

#include "mlir/Support/LLVM.h"
#include "llvm/ADT/StringRef.h"

namespace llvm {
class MemoryBuffer;
} // namespace llvm

namespace mlir::fluid {

/// The deepest bracket nesting accepted in textual IR. Real programs stay
/// below 20; MLIR's recursive-descent parser overflows the stack somewhere
/// in the tens of thousands.
constexpr unsigned kMaxInputNesting = 256;

/// Finds the first point where `text` nests `(`, `[`, `{` or `<` deeper than
/// `limit` (outside string literals and comments). Returns its byte offset.
std::optional<size_t> findExcessiveNesting(llvm::StringRef text,
                                           unsigned limit = kMaxInputNesting);

/// Checks textual IR before MLIR's parser sees it: reports
/// "FILE:LINE:COL: error: ..." on standard error and fails if `input`
/// contains a NUL byte (a binary file; the lexer would skip it silently) or
/// nests too deeply to be parsed safely.
LogicalResult checkTextInput(const llvm::MemoryBuffer &input);

} // namespace mlir::fluid

#endif // FLUID_SUPPORT_INPUTGUARDS_H
