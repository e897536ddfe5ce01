#include "harness/tokenizer/byte_level.h"

#include <array>

#include "harness/tokenizer/utf8.h"

namespace kvgate::tok {

namespace {
struct Tables {
  std::array<char32_t, 256> to_char{};
  std::array<int, 0x144> to_byte{};  // the alphabet ends at U+0143
  Tables() {
    to_byte.fill(-1);
    char32_t next = 0x100;
    for (int b = 0; b < 256; ++b) {
      const bool printable = (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || (b >= 174 && b <= 255);
      to_char[b] = printable ? static_cast<char32_t>(b) : next++;
      to_byte[to_char[b]] = b;
    }
  }
};
const Tables& tables() {
  static const Tables t;
  return t;
}
}  // namespace

char32_t byte_to_char(unsigned char b) { return tables().to_char[b]; }

int char_to_byte(char32_t c) { return c < 0x144 ? tables().to_byte[c] : -1; }

bool byte_level_to_bytes(std::string_view token, std::string& out) {
  const std::size_t mark = out.size();
  std::size_t i = 0;
  while (i < token.size()) {
    if (find_invalid_utf8(token.substr(i, utf8_seq_len(static_cast<unsigned char>(token[i])))) != kValidUtf8) {
      out.resize(mark);
      return false;
    }
    const int b = char_to_byte(next_codepoint(token, i));
    if (b < 0) {
      out.resize(mark);
      return false;
    }
    out += static_cast<char>(b);
  }
  return true;
}

std::string bytes_to_byte_level(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size() * 2);
  for (const char c : bytes) append_utf8(out, byte_to_char(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace kvgate::tok
