#include "harness/tokenizer/utf8.h"

#include <cstdint>
#include <cstring>

namespace kvgate::tok {

namespace {
// Length of the valid sequence at s[i] (1..4), or 0 with *consumed set to the length of the
// maximal invalid subpart (at least 1).
std::size_t valid_seq_at(std::string_view s, std::size_t i, std::size_t* consumed) {
  const auto c = static_cast<unsigned char>(s[i]);
  if (c < 0x80) return 1;
  std::size_t n = 0;
  unsigned char lo = 0x80, hi = 0xBF;  // allowed range of the second byte
  if (c >= 0xC2 && c <= 0xDF) {
    n = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    n = 3;
    if (c == 0xE0) lo = 0xA0;
    if (c == 0xED) hi = 0x9F;  // no surrogates
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4;
    if (c == 0xF0) lo = 0x90;
    if (c == 0xF4) hi = 0x8F;
  } else {
    *consumed = 1;
    return 0;
  }
  std::size_t k = 1;
  for (; k < n; ++k) {
    if (i + k >= s.size()) break;
    const auto b = static_cast<unsigned char>(s[i + k]);
    const unsigned char l = k == 1 ? lo : 0x80, h = k == 1 ? hi : 0xBF;
    if (b < l || b > h) break;
  }
  if (k == n) return n;
  *consumed = k;
  return 0;
}
}  // namespace

std::size_t find_invalid_utf8(std::string_view s) {
  std::size_t i = 0;
  const std::size_t n = s.size();
  while (i < n) {
    // ASCII fast path, eight bytes at a time.
    while (i + 8 <= n) {
      std::uint64_t w;
      std::memcpy(&w, s.data() + i, 8);
      if (w & 0x8080808080808080ULL) break;
      i += 8;
    }
    if (i >= n) break;
    if (static_cast<unsigned char>(s[i]) < 0x80) {
      ++i;
      continue;
    }
    std::size_t consumed = 0;
    const std::size_t len = valid_seq_at(s, i, &consumed);
    if (len == 0) return i;
    i += len;
  }
  return kValidUtf8;
}

char32_t prev_codepoint(std::string_view s, std::size_t& i) {
  std::size_t j = i - 1;
  while (j > 0 && (static_cast<unsigned char>(s[j]) & 0xC0) == 0x80) --j;
  std::size_t k = j;
  const char32_t cp = next_codepoint(s, k);
  i = j;
  return cp;
}

void append_utf8(std::string& out, char32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

std::string utf8_lossy(std::string_view s) {
  if (find_invalid_utf8(s) == kValidUtf8) return std::string(s);
  std::string out;
  out.reserve(s.size() + 8);
  std::size_t i = 0;
  while (i < s.size()) {
    std::size_t consumed = 0;
    const std::size_t len = valid_seq_at(s, i, &consumed);
    if (len) {
      out.append(s.data() + i, len);
      i += len;
    } else {
      out += "\xEF\xBF\xBD";
      i += consumed;
    }
  }
  return out;
}

std::size_t complete_utf8_prefix(std::string_view s) {
  // Only the last (up to) 3 bytes can be an unfinished sequence.
  const std::size_t n = s.size();
  for (std::size_t back = 1; back <= 3 && back <= n; ++back) {
    const auto c = static_cast<unsigned char>(s[n - back]);
    if ((c & 0xC0) == 0x80) continue;  // a continuation byte: keep looking for the lead
    if (c < 0xC2 || c > 0xF4) return n;  // ASCII or not a lead byte: nothing pending
    std::size_t consumed = 0;
    const std::size_t need = utf8_seq_len(c);
    if (back >= need) return n;  // complete (valid or not)
    // Incomplete: hold it back only while it is still a valid prefix.
    if (valid_seq_at(s, n - back, &consumed) == 0 && consumed == back) return n - back;
    return n;
  }
  return n;
}

}  // namespace kvgate::tok
