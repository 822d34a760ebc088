//===- InputGuards.cpp - Checks on untrusted textual input ----------------===//

#include "fluid/Support/InputGuards.h"

#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

std::optional<size_t> mlir::fluid::findExcessiveNesting(llvm::StringRef text,
                                                        unsigned limit) {
  unsigned depth = 0;
  for (size_t i = 0, e = text.size(); i < e; ++i) {
    char c = text[i];
    switch (c) {
    case '"':
      // Skip a string literal, honouring backslash escapes.
      for (++i; i < e && text[i] != '"'; ++i)
        if (text[i] == '\\')
          ++i;
      break;
    case '/':
      if (i + 1 < e && text[i + 1] == '/')
        while (i < e && text[i] != '\n')
          ++i;
      break;
    case '(':
    case '[':
    case '{':
    case '<':
      if (++depth > limit)
        return i;
      break;
    case ')':
    case ']':
    case '}':
      if (depth > 0)
        --depth;
      break;
    case '>':
      // `->` is an arrow, not a closing bracket.
      if (depth > 0 && (i == 0 || text[i - 1] != '-'))
        --depth;
      break;
    default:
      break;
    }
  }
  return std::nullopt;
}

LogicalResult mlir::fluid::checkInputNesting(const llvm::MemoryBuffer &input) {
  std::optional<size_t> offset = findExcessiveNesting(input.getBuffer());
  if (!offset)
    return success();
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBuffer(input.getMemBufferRef(),
                                       /*RequiresNullTerminator=*/false),
      llvm::SMLoc());
  sourceMgr.PrintMessage(
      llvm::errs(),
      llvm::SMLoc::getFromPointer(input.getBufferStart() + *offset),
      llvm::SourceMgr::DK_Error,
      "input nests brackets more than " + llvm::Twine(kMaxInputNesting) +
          " levels deep; refusing to parse it");
  return failure();
}
