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

  // Appends the non-overlapping matches in text (valid UTF-8), left to right; an empty match
  // advances one character (Oniguruma's find_iter). Thread-safe.
  void find_all(std::string_view text, std::vector<Span>& out) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The pattern with \s / \S spelled as Oniguruma's White_Space set (exposed for tests).
std::string rewrite_whitespace_classes(const std::string& pattern);

// A literal string as a PCRE2 pattern.
std::string escape_regex_literal(std::string_view literal);

}  // namespace kvgate::tok
