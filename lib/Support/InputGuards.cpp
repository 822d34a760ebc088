//===- InputGuards.cpp - Checks on untrusted textual input ----------------===//

#include "fluid/Support/InputGuards.h"

#include "llvm/Support/MemoryBuffer.h"
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

/// Prints "NAME:LINE:COL: error: MESSAGE" for byte `offset` of `input`,
/// without echoing the source line, which may be megabytes long.
static LogicalResult reportAt(const llvm::MemoryBuffer &input, size_t offset,
                              const llvm::Twine &message) {
  llvm::StringRef before = input.getBuffer().take_front(offset);
  size_t line = before.count('\n') + 1;
  size_t lineStart = before.rfind('\n');
  size_t column =
      lineStart == llvm::StringRef::npos ? offset + 1 : offset - lineStart;
  llvm::errs() << input.getBufferIdentifier() << ":" << line << ":" << column
               << ": error: " << message << "\n";
  return failure();
}

LogicalResult mlir::fluid::checkTextInput(const llvm::MemoryBuffer &input) {
  llvm::StringRef text = input.getBuffer();
  size_t nul = text.find('\0');
  if (nul != llvm::StringRef::npos)
    return reportAt(input, nul,
                    "input contains a NUL byte; expected MLIR text, not a "
                    "binary file");
  if (std::optional<size_t> offset = findExcessiveNesting(text))
    return reportAt(input, *offset,
                    "input nests brackets more than " +
                        llvm::Twine(kMaxInputNesting) +
                        " levels deep; refusing to parse it");
  return success();
}
