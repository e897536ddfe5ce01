// An exact port of CPython's difflib.SequenceMatcher(None, a, b) (isjunk=None, autojunk=True),
// the metric of the official MRCR grader: ratio() returns the identical double for any pair.
// Elements are Unicode code points, as in Python's str. The details that decide the numbers:
// b2j built over b only; with len(b) >= 200, elements occurring more than len(b)//100 + 1 times
// in b are "popular" and left out of b2j (so ratio(a, b) != ratio(b, a) in general);
// find_longest_match keeps the first longest core match (strict >), then extends it over equal
// elements (popular ones included) backwards and forwards.
#pragma once
#include <cstddef>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace kvgate {

// UTF-8 to code points. A byte that is not part of a valid UTF-8 sequence becomes U+DC80 + byte,
// as Python's "surrogateescape" decodes it (distinct bytes stay distinct; valid text is unchanged).
std::u32string decode_code_points(std::string_view utf8);

class SequenceMatcher {
 public:
  struct Match {
    std::size_t a = 0, b = 0, size = 0;
    bool operator==(const Match&) const = default;
  };

  // Both views must outlive the matcher.
  SequenceMatcher(std::u32string_view a, std::u32string_view b, bool autojunk = true);

  // Python's find_longest_match(alo, ahi, blo, bhi).
  Match find_longest_match(std::size_t alo, std::size_t ahi, std::size_t blo, std::size_t bhi) const;
  // Python's get_matching_blocks(): sorted, adjacent blocks merged, ending with (len(a), len(b), 0).
  std::vector<Match> matching_blocks() const;
  // Sum of the sizes of the matching blocks (without sorting or merging, which do not change it).
  std::size_t matches() const;
  // 2.0 * matches / (len(a) + len(b)), or 1.0 when both are empty: Python's ratio() bit for bit.
  double ratio() const;

  // Elements left out of b2j as popular (for tests and explanations).
  std::size_t popular_count() const { return popular_; }

 private:
  const std::vector<int>* positions(char32_t c) const;
  template <class Fn>
  void for_each_block(Fn&& fn) const;

  std::u32string_view a_, b_;
  std::vector<std::vector<int>> ascii_b2j_;                  // code points < 128: direct index
  std::unordered_map<char32_t, std::vector<int>> other_b2j_;  // the rest
  std::size_t popular_ = 0;
  // Scratch for find_longest_match (Python's j2len / newj2len dicts as arrays + touched lists).
  mutable std::vector<int> j2len_, newj2len_;
  mutable std::vector<int> touched_, new_touched_;
};

// SequenceMatcher(None, a, b).ratio() on UTF-8 strings.
double sequence_ratio(std::string_view a_utf8, std::string_view b_utf8);

}  // namespace kvgate
