#include "harness/tokenizer/added_tokens.h"

#include <algorithm>
#include <cstring>

#include <utf8proc.h>

#include "harness/tokenizer/utf8.h"

namespace kvgate::tok {

namespace {
// Rust regex's Unicode \w: alphabetic, marks, decimal numbers, connector punctuation, join controls.
bool is_word_char(char32_t c) {
  if (c < 0x80) return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
  if (c == 0x200C || c == 0x200D) return true;
  switch (utf8proc_category(static_cast<utf8proc_int32_t>(c))) {
    case UTF8PROC_CATEGORY_LU: case UTF8PROC_CATEGORY_LL: case UTF8PROC_CATEGORY_LT: case UTF8PROC_CATEGORY_LM:
    case UTF8PROC_CATEGORY_LO: case UTF8PROC_CATEGORY_NL: case UTF8PROC_CATEGORY_MN: case UTF8PROC_CATEGORY_MC:
    case UTF8PROC_CATEGORY_ME: case UTF8PROC_CATEGORY_ND: case UTF8PROC_CATEGORY_PC:
      return true;
    default:
      return false;
  }
}

// Unicode White_Space (Rust's char::is_whitespace and regex \s).
bool is_white_space(char32_t c) {
  return (c >= 0x09 && c <= 0x0D) || c == 0x20 || c == 0x85 || c == 0xA0 || c == 0x1680 ||
         (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F || c == 0x3000;
}
}  // namespace

AddedTokenMatcher::AddedTokenMatcher(std::vector<AddedToken> tokens, std::vector<std::string> patterns)
    : tokens_(std::move(tokens)) {
  trie_.emplace_back();
  for (std::size_t t = 0; t < tokens_.size(); ++t) {
    const std::string& p = patterns[t];
    if (p.empty()) continue;
    std::int32_t node = 0;
    for (const char ch : p) {
      const auto b = static_cast<unsigned char>(ch);
      std::int32_t nx = child(node, b);
      if (nx < 0) {
        nx = static_cast<std::int32_t>(trie_.size());
        trie_.emplace_back();
        auto& next = trie_[node].next;
        next.insert(std::lower_bound(next.begin(), next.end(), std::make_pair(b, std::int32_t{-1})), {b, nx});
      }
      node = nx;
    }
    // The first token with this exact pattern wins (the Aho-Corasick build keeps the first).
    if (trie_[node].token < 0) trie_[node].token = static_cast<std::int32_t>(t);
    first_byte_[static_cast<unsigned char>(p[0])] = true;
  }
  int distinct = 0;
  for (int b = 0; b < 256; ++b)
    if (first_byte_[b]) {
      ++distinct;
      single_first_byte_ = b;
    }
  if (distinct != 1) single_first_byte_ = -1;
  if (distinct == 0) tokens_.clear();
}

std::int32_t AddedTokenMatcher::child(std::int32_t node, unsigned char b) const {
  const auto& next = trie_[node].next;
  const auto it = std::lower_bound(next.begin(), next.end(), std::make_pair(b, std::int32_t{-1}));
  return it != next.end() && it->first == b ? it->second : -1;
}

std::int32_t AddedTokenMatcher::longest_at(std::string_view text, std::size_t pos, std::size_t* len) const {
  std::int32_t node = 0, best = -1;
  for (std::size_t i = pos; i < text.size(); ++i) {
    node = child(node, static_cast<unsigned char>(text[i]));
    if (node < 0) break;
    if (trie_[node].token >= 0) {
      best = trie_[node].token;
      *len = i + 1 - pos;
    }
  }
  return best;
}

void AddedTokenMatcher::split(std::string_view text, std::vector<Segment>& out) const {
  if (text.empty()) return;
  if (tokens_.empty()) {
    out.push_back({0, text.size(), -1});
    return;
  }
  std::size_t start_offset = 0;  // end of the last emitted segment
  std::size_t pos = 0;           // where the matcher resumes (Aho-Corasick's non-overlapping scan)
  const std::size_t n = text.size();
  while (pos < n) {
    // Next candidate position.
    if (single_first_byte_ >= 0) {
      const void* hit = std::memchr(text.data() + pos, single_first_byte_, n - pos);
      if (!hit) break;
      pos = static_cast<std::size_t>(static_cast<const char*>(hit) - text.data());
    } else {
      while (pos < n && !first_byte_[static_cast<unsigned char>(text[pos])]) ++pos;
      if (pos >= n) break;
    }
    std::size_t len = 0;
    const std::int32_t t = longest_at(text, pos, &len);
    if (t < 0) {
      ++pos;
      continue;
    }
    std::size_t start = pos, stop = pos + len;
    pos = stop;
    const AddedToken& tok = tokens_[t];
    if (tok.single_word) {
      bool start_space = true, stop_space = true;
      if (start > 0) {
        std::size_t k = start;
        start_space = !is_word_char(prev_codepoint(text, k));
      }
      if (stop < n) {
        std::size_t k = stop;
        stop_space = !is_word_char(next_codepoint(text, k));
      }
      if (!start_space || !stop_space) continue;
    }
    if (tok.lstrip) {
      std::size_t k = start;
      while (k > 0) {
        std::size_t j = k;
        if (!is_white_space(prev_codepoint(text, j))) break;
        k = j;
      }
      start = std::max(k, start_offset);
    }
    if (tok.rstrip) {
      std::size_t k = stop;
      while (k < n) {
        std::size_t j = k;
        if (!is_white_space(next_codepoint(text, j))) break;
        k = j;
      }
      stop = k;
    }
    if (start_offset < start) out.push_back({start_offset, start, -1});
    out.push_back({start, stop, tok.id});
    start_offset = stop;
  }
  if (start_offset < n) out.push_back({start_offset, n, -1});
}

}  // namespace kvgate::tok
