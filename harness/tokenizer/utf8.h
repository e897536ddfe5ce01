// UTF-8 helpers of the tokenizer: strict validation, code point iteration, and the lossy decoding
// Hugging Face applies to decoded bytes (one U+FFFD per maximal invalid subpart, as Rust's
// String::from_utf8_lossy and Python's errors="replace").
#pragma once
#include <cstddef>
#include <string>
#include <string_view>

namespace kvgate::tok {

inline constexpr std::size_t kValidUtf8 = static_cast<std::size_t>(-1);

// Byte offset of the first invalid sequence (overlong, surrogate, > U+10FFFF, truncated), or
// kValidUtf8.
std::size_t find_invalid_utf8(std::string_view s);

// Length in bytes of the sequence whose lead byte is `lead` (1 for ASCII and invalid leads).
inline std::size_t utf8_seq_len(unsigned char lead) {
  if (lead < 0xC0) return 1;
  if (lead < 0xE0) return 2;
  if (lead < 0xF0) return 3;
  return 4;
}

// Decodes the code point at s[i] of valid UTF-8 and advances i past it.
inline char32_t next_codepoint(std::string_view s, std::size_t& i) {
  const auto c = static_cast<unsigned char>(s[i]);
  if (c < 0x80) {
    ++i;
    return c;
  }
  const std::size_t n = utf8_seq_len(c);
  char32_t cp = c & (0xFF >> (n + 1));
  for (std::size_t k = 1; k < n; ++k) cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3F);
  i += n;
  return cp;
}

// Decodes the code point that ends at s[i-1] of valid UTF-8 and moves i back to its start.
char32_t prev_codepoint(std::string_view s, std::size_t& i);

void append_utf8(std::string& out, char32_t cp);

// Bytes to text, each maximal invalid subpart replaced by U+FFFD.
std::string utf8_lossy(std::string_view bytes);

// Length of the longest prefix that does not end inside an incomplete (but so far valid)
// sequence: what a streaming decoder may emit now.
std::size_t complete_utf8_prefix(std::string_view bytes);

}  // namespace kvgate::tok
