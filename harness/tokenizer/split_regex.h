// A pre-tokenizer regex compiled with PCRE2 (JIT, UTF, Unicode properties). Hugging Face runs these
// patterns with Oniguruma, whose \s is White_Space; PCRE2's also takes U+180E, so \s and \S are
// rewritten to Oniguruma's set before compiling.
#pragma once
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace kvgate::tok {

struct Span {
  std::size_t begin = 0, end = 0;
};

class SplitRegex {
 public:
  // Throws kvgate::Error naming `where` when the pattern does not compile.
  SplitRegex(const std::string& pattern, const std::string& where);
  ~SplitRegex();
  SplitRegex(const SplitRegex&) = delete;
  SplitRegex& operator=(const SplitRegex&) = delete;

  // Calls fn(begin, end) for each non-overlapping match in text (valid UTF-8), left to right; an
  // empty match advances one character (Oniguruma's find_iter). Thread-safe.
  template <typename Fn>
  void for_each_match(std::string_view text, Fn&& fn) const {
    std::size_t pos = 0;
    bool after_empty = false;
    Span m;
    while (next_match(text, pos, after_empty, m)) fn(m.begin, m.end);
  }
  void find_all(std::string_view text, std::vector<Span>& out) const {
    for_each_match(text, [&](std::size_t b, std::size_t e) { out.push_back({b, e}); });
  }

 private:
  // The next match at or after pos; updates pos and after_empty. False when there is none.
  bool next_match(std::string_view text, std::size_t& pos, bool& after_empty, Span& m) const;
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The pattern with \s / \S spelled as Oniguruma's White_Space set (exposed for tests).
std::string rewrite_whitespace_classes(const std::string& pattern);

// A literal string as a PCRE2 pattern.
std::string escape_regex_literal(std::string_view literal);

}  // namespace kvgate::tok
