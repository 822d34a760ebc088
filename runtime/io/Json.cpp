//===- Json.cpp - The restricted JSON of safetensors headers --------------===//

#include "Json.h"

#include "File.h"

namespace fluid::rt::io {

void JsonReader::error(const std::string &problem) const {
  failFormat(path_, "malformed header JSON at byte " +
                        std::to_string(position_) + ": " + problem);
}

void JsonReader::skipWhitespace() {
  while (position_ < text_.size() &&
         (text_[position_] == ' ' || text_[position_] == '\t' ||
          text_[position_] == '\n' || text_[position_] == '\r'))
    ++position_;
}

bool JsonReader::consume(char c) {
  skipWhitespace();
  if (position_ < text_.size() && text_[position_] == c) {
    ++position_;
    return true;
  }
  return false;
}

void JsonReader::expect(char c, const char *description) {
  if (consume(c))
    return;
  error(std::string("expected ") + description +
        (position_ < text_.size() ? "" : ", found the end of the header"));
}

void JsonReader::expectEnd() {
  skipWhitespace();
  if (position_ != text_.size())
    error("unexpected text after the top-level object");
}

uint32_t JsonReader::readHexQuad() {
  uint32_t value = 0;
  for (int i = 0; i < 4; ++i, ++position_) {
    char c = position_ < text_.size() ? text_[position_] : '\0';
    uint32_t digit;
    if (c >= '0' && c <= '9')
      digit = uint32_t(c - '0');
    else if (c >= 'a' && c <= 'f')
      digit = uint32_t(c - 'a' + 10);
    else if (c >= 'A' && c <= 'F')
      digit = uint32_t(c - 'A' + 10);
    else
      error("expected 4 hex digits after \\u");
    value = value << 4 | digit;
  }
  return value;
}

namespace {
void appendUtf8(std::string &out, uint32_t codePoint) {
  if (codePoint < 0x80) {
    out += char(codePoint);
  } else if (codePoint < 0x800) {
    out += char(0xC0 | codePoint >> 6);
    out += char(0x80 | (codePoint & 0x3F));
  } else if (codePoint < 0x10000) {
    out += char(0xE0 | codePoint >> 12);
    out += char(0x80 | (codePoint >> 6 & 0x3F));
    out += char(0x80 | (codePoint & 0x3F));
  } else {
    out += char(0xF0 | codePoint >> 18);
    out += char(0x80 | (codePoint >> 12 & 0x3F));
    out += char(0x80 | (codePoint >> 6 & 0x3F));
    out += char(0x80 | (codePoint & 0x3F));
  }
}
} // namespace

std::string JsonReader::readString() {
  expect('"', "a string");
  std::string value;
  while (true) {
    if (position_ >= text_.size())
      error("unterminated string");
    char c = text_[position_++];
    if (c == '"')
      return value;
    if (static_cast<unsigned char>(c) < 0x20)
      error("control character in a string");
    if (c != '\\') {
      value += c;
      continue;
    }
    char escape = position_ < text_.size() ? text_[position_++] : '\0';
    switch (escape) {
    case '"':
    case '\\':
    case '/':
      value += escape;
      break;
    case 'b':
      value += '\b';
      break;
    case 'f':
      value += '\f';
      break;
    case 'n':
      value += '\n';
      break;
    case 'r':
      value += '\r';
      break;
    case 't':
      value += '\t';
      break;
    case 'u': {
      uint32_t codePoint = readHexQuad();
      if (codePoint >= 0xDC00 && codePoint <= 0xDFFF)
        error("unpaired low surrogate in \\u escape");
      if (codePoint >= 0xD800 && codePoint <= 0xDBFF) {
        if (text_.substr(position_, 2) != "\\u")
          error("unpaired high surrogate in \\u escape");
        position_ += 2;
        uint32_t low = readHexQuad();
        if (low < 0xDC00 || low > 0xDFFF)
          error("unpaired high surrogate in \\u escape");
        codePoint = 0x10000 + ((codePoint - 0xD800) << 10) + (low - 0xDC00);
      }
      appendUtf8(value, codePoint);
      break;
    }
    default:
      --position_;
      error("invalid escape sequence in a string");
    }
  }
}

int64_t JsonReader::readNonNegativeInteger() {
  skipWhitespace();
  auto isDigit = [&](std::string::size_type at) {
    return at < text_.size() && text_[at] >= '0' && text_[at] <= '9';
  };
  if (position_ < text_.size() && text_[position_] == '-')
    error("expected a non-negative integer, found a negative number");
  if (!isDigit(position_))
    error("expected a non-negative integer");
  if (text_[position_] == '0' && isDigit(position_ + 1))
    error("leading zeros are not allowed in JSON numbers");
  int64_t value = 0;
  for (; isDigit(position_); ++position_)
    if (__builtin_mul_overflow(value, 10, &value) ||
        __builtin_add_overflow(value, text_[position_] - '0', &value))
      error("integer overflows int64");
  if (position_ < text_.size() &&
      (text_[position_] == '.' || text_[position_] == 'e' ||
       text_[position_] == 'E'))
    error("expected an integer, found a fraction or exponent");
  return value;
}

std::string jsonQuote(std::string_view text) {
  static const char hexDigits[] = "0123456789abcdef";
  std::string quoted = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') {
      quoted += '\\';
      quoted += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      quoted += "\\u00";
      quoted += hexDigits[c >> 4];
      quoted += hexDigits[c & 0xF];
    } else {
      quoted += c;
    }
  }
  return quoted + "\"";
}

} // namespace fluid::rt::io
