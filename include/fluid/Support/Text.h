//===- Text.h - Text the tools print about programs
//------------------------===//

#ifndef FLUID_SUPPORT_TEXT_H
#define FLUID_SUPPORT_TEXT_H

#include "mlir/IR/Location.h"

#include <cstdint>
#include <string>

namespace mlir::fluid {

/// The location of `loc` as one line of text: a name, or file:line:col
/// (the first of a fused location's that has one), or "" when it has none.
/// Emitted programs name their launches by it, and the memory report its
/// buffers; the text is the input's, so callers escape it.
std::string locationText(Location loc);

/// 1234567 as "1,234,567".
std::string withThousands(int64_t value);

} // namespace mlir::fluid

#endif // FLUID_SUPPORT_TEXT_H
