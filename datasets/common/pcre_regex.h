// Regular expressions with Python `re` semantics where graders need them (lm-eval's filters are Python
// regexes, and users write theirs for Python): PCRE2 in UTF mode with Unicode properties, so `.`,
// `\d`, `\w` and `\s` work on characters as in Python 3. Subjects with invalid UTF-8 (a model can emit
// a cut-off character) are matched, never rejected.
#pragma once
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace kvgate {

struct RegexOptions {
  bool ignore_case = false;  // re.IGNORECASE
  bool dotall = false;       // re.DOTALL
};

struct RegexMatch {
  std::size_t begin = 0, end = 0;   // byte offsets of the whole match
  std::vector<std::string> groups{};  // groups 1..n ("" for a group that did not take part)
  std::string text{};                 // the whole match
};

class Regex {
 public:
  // Throws Error("regex \"...\": <PCRE2 message> at offset N") for a bad pattern; callers add context.
  explicit Regex(std::string_view pattern, const RegexOptions& options = {});
  ~Regex();
  Regex(Regex&&) noexcept;
  Regex& operator=(Regex&&) noexcept;

  const std::string& pattern() const { return pattern_; }
  int group_count() const { return groups_; }

  // All non-overlapping matches, left to right (re.finditer).
  std::vector<RegexMatch> find_all(std::string_view subject) const;
  // The first match at or after `from` (re.search), or false.
  bool search(std::string_view subject, RegexMatch& match, std::size_t from = 0) const;
  // re.sub(pattern, "", subject): every match removed.
  std::string remove_all(std::string_view subject) const;

 private:
  bool search_impl(std::string_view subject, RegexMatch& match, std::size_t from, bool not_empty_at_start) const;
  struct Code;
  std::unique_ptr<Code> code_{};
  std::string pattern_{};
  int groups_ = 0;
};

// A compiled pattern from a per-thread cache (graders see the same few patterns on every trial; per
// thread, so no lock). Throws as the constructor does. A Regex itself may be used from any thread.
const Regex& cached_regex(std::string_view pattern, const RegexOptions& options = {});

// Python's re.findall, then lm-eval's RegexFilter on one response: the match at `group_select`
// (0 first, -1 last, Python indexing); with several groups the first non-empty one; stripped;
// `fallback` when nothing matched or the index is out of range.
std::string regex_filter(const Regex& regex, std::string_view response, int group_select,
                         std::string_view fallback = "[invalid]");

}  // namespace kvgate
