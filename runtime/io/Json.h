//===- Json.h - The restricted JSON of safetensors headers ----------------===//
//
// A safetensors header uses only objects, arrays, strings and non-negative
// integers, so this reader implements exactly those (RFC 8259 syntax, strict:
// no trailing commas, no leading zeros) and reports any departure as a format
// error naming the file and the byte offset. Callers drive it with the schema
// they expect, which gives precise messages ("expected an array") and no
// intermediate document tree.
//
//===----------------------------------------------------------------------===//

#ifndef FLUID_RUNTIME_IO_JSON_H
#define FLUID_RUNTIME_IO_JSON_H

#include <cstdint>
#include <string>
#include <string_view>

namespace fluid::rt::io {

class JsonReader {
public:
  /// `path` names the file in messages; `text` must outlive the reader.
  JsonReader(const std::string &path, std::string_view text)
      : path_(path), text_(text) {}

  /// Reads an object, calling `onMember(key)` once per member; `onMember`
  /// must read the member's value.
  template <typename OnMember> void readObject(OnMember &&onMember) {
    expect('{', "an object");
    if (consume('}'))
      return;
    do {
      std::string key = readString();
      expect(':', "':'");
      onMember(key);
    } while (consume(','));
    expect('}', "',' or '}'");
  }

  /// Reads an array, calling `onElement()` once per element; `onElement`
  /// must read the element.
  template <typename OnElement> void readArray(OnElement &&onElement) {
    expect('[', "an array");
    if (consume(']'))
      return;
    do
      onElement();
    while (consume(','));
    expect(']', "',' or ']'");
  }

  std::string readString();
  int64_t readNonNegativeInteger();

  /// Requires that only whitespace remains.
  void expectEnd();

  /// Fails with "malformed header JSON at byte <offset>: <problem>".
  [[noreturn]] void error(const std::string &problem) const;

private:
  void skipWhitespace();
  bool consume(char c);
  void expect(char c, const char *description);
  uint32_t readHexQuad();

  const std::string &path_;
  std::string_view text_;
  std::string::size_type position_ = 0;
};

/// `text` as a JSON string literal, quotes included.
std::string jsonQuote(std::string_view text);

} // namespace fluid::rt::io

#endif // FLUID_RUNTIME_IO_JSON_H
