#include "datasets/mrcr/sequence_matcher.h"

#include <algorithm>
#include <tuple>

namespace kvgate {

std::u32string decode_code_points(std::string_view s) {
  std::u32string out;
  out.reserve(s.size());
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const std::size_t n = s.size();
  auto cont = [&](std::size_t k) { return k < n && (p[k] & 0xC0) == 0x80; };
  for (std::size_t i = 0; i < n;) {
    const unsigned char c = p[i];
    char32_t cp = 0;
    std::size_t len = 0;
    if (c < 0x80) {
      cp = c, len = 1;
    } else if (c >= 0xC2 && c <= 0xDF && cont(i + 1)) {
      cp = (char32_t(c & 0x1F) << 6) | (p[i + 1] & 0x3F), len = 2;
    } else if (c >= 0xE0 && c <= 0xEF && cont(i + 1) && cont(i + 2)) {
      cp = (char32_t(c & 0x0F) << 12) | (char32_t(p[i + 1] & 0x3F) << 6) | (p[i + 2] & 0x3F);
      if (cp >= 0x800 && (cp < 0xD800 || cp > 0xDFFF)) len = 3;  // no overlongs, no surrogates
    } else if (c >= 0xF0 && c <= 0xF4 && cont(i + 1) && cont(i + 2) && cont(i + 3)) {
      cp = (char32_t(c & 0x07) << 18) | (char32_t(p[i + 1] & 0x3F) << 12) | (char32_t(p[i + 2] & 0x3F) << 6) |
           (p[i + 3] & 0x3F);
      if (cp >= 0x10000 && cp <= 0x10FFFF) len = 4;
    }
    if (len == 0) {  // surrogateescape: this byte alone
      out.push_back(0xDC00 + c);
      ++i;
    } else {
      out.push_back(cp);
      i += len;
    }
  }
  return out;
}

SequenceMatcher::SequenceMatcher(std::u32string_view a, std::u32string_view b, bool autojunk)
    : a_(a), b_(b), ascii_b2j_(128) {
  // __chain_b: b2j[elt] = ascending indices of elt in b.
  for (std::size_t j = 0; j < b.size(); ++j) {
    const char32_t c = b[j];
    (c < 128 ? ascii_b2j_[c] : other_b2j_[c]).push_back(static_cast<int>(j));
  }
  // Purge popular elements: more than n // 100 + 1 occurrences, only when n >= 200.
  const std::size_t n = b.size();
  if (autojunk && n >= 200) {
    const std::size_t ntest = n / 100 + 1;
    for (auto& v : ascii_b2j_)
      if (v.size() > ntest) v.clear(), v.shrink_to_fit(), ++popular_;
    for (auto it = other_b2j_.begin(); it != other_b2j_.end();) {
      if (it->second.size() > ntest) it = other_b2j_.erase(it), ++popular_;
      else ++it;
    }
  }
  j2len_.assign(n, 0);
  newj2len_.assign(n, 0);
}

const std::vector<int>* SequenceMatcher::positions(char32_t c) const {
  if (c < 128) return ascii_b2j_[c].empty() ? nullptr : &ascii_b2j_[c];
  auto it = other_b2j_.find(c);
  return it == other_b2j_.end() ? nullptr : &it->second;
}

SequenceMatcher::Match SequenceMatcher::find_longest_match(std::size_t alo, std::size_t ahi, std::size_t blo,
                                                           std::size_t bhi) const {
  std::size_t besti = alo, bestj = blo, bestsize = 0;
  // j2len[j]: length of the match ending at a[i-1] and b[j]; only entries of the previous row
  // exist (the touched lists clear the rest), exactly like Python's per-row dict.
  touched_.clear();
  for (std::size_t i = alo; i < ahi; ++i) {
    new_touched_.clear();
    if (const std::vector<int>* js = positions(a_[i])) {
      for (int jj : *js) {
        const std::size_t j = static_cast<std::size_t>(jj);
        if (j < blo) continue;
        if (j >= bhi) break;
        const int k = (j > 0 ? j2len_[j - 1] : 0) + 1;
        newj2len_[j] = k;
        new_touched_.push_back(jj);
        if (static_cast<std::size_t>(k) > bestsize) {
          besti = i - k + 1;
          bestj = j - k + 1;
          bestsize = static_cast<std::size_t>(k);
        }
      }
    }
    for (int j : touched_) j2len_[j] = 0;
    std::swap(j2len_, newj2len_);
    std::swap(touched_, new_touched_);
  }
  for (int j : touched_) j2len_[j] = 0;
  touched_.clear();
  // Extend over equal elements on both ends (isjunk is None: nothing is junk, popular elements
  // included). The two junk-extension loops of the original never run without isjunk.
  while (besti > alo && bestj > blo && a_[besti - 1] == b_[bestj - 1]) --besti, --bestj, ++bestsize;
  while (besti + bestsize < ahi && bestj + bestsize < bhi && a_[besti + bestsize] == b_[bestj + bestsize]) ++bestsize;
  return {besti, bestj, bestsize};
}

template <class Fn>
void SequenceMatcher::for_each_block(Fn&& fn) const {
  struct Range {
    std::size_t alo, ahi, blo, bhi;
  };
  std::vector<Range> queue{{0, a_.size(), 0, b_.size()}};
  while (!queue.empty()) {  // LIFO, as Python's list.pop()
    const Range r = queue.back();
    queue.pop_back();
    const Match m = find_longest_match(r.alo, r.ahi, r.blo, r.bhi);
    if (m.size == 0) continue;
    fn(m);
    if (r.alo < m.a && r.blo < m.b) queue.push_back({r.alo, m.a, r.blo, m.b});
    if (m.a + m.size < r.ahi && m.b + m.size < r.bhi) queue.push_back({m.a + m.size, r.ahi, m.b + m.size, r.bhi});
  }
}

std::vector<SequenceMatcher::Match> SequenceMatcher::matching_blocks() const {
  std::vector<Match> blocks;
  for_each_block([&](const Match& m) { blocks.push_back(m); });
  std::sort(blocks.begin(), blocks.end(),
            [](const Match& x, const Match& y) { return std::tie(x.a, x.b, x.size) < std::tie(y.a, y.b, y.size); });
  std::vector<Match> merged;
  Match cur;
  for (const Match& m : blocks) {
    if (cur.a + cur.size == m.a && cur.b + cur.size == m.b) {
      cur.size += m.size;
    } else {
      if (cur.size) merged.push_back(cur);
      cur = m;
    }
  }
  if (cur.size) merged.push_back(cur);
  merged.push_back({a_.size(), b_.size(), 0});
  return merged;
}

std::size_t SequenceMatcher::matches() const {
  std::size_t total = 0;
  for_each_block([&](const Match& m) { total += m.size; });
  return total;
}

double SequenceMatcher::ratio() const {
  const std::size_t length = a_.size() + b_.size();
  if (length == 0) return 1.0;
  return 2.0 * static_cast<double>(matches()) / static_cast<double>(length);
}

double sequence_ratio(std::string_view a_utf8, std::string_view b_utf8) {
  const std::u32string a = decode_code_points(a_utf8), b = decode_code_points(b_utf8);
  return SequenceMatcher(a, b).ratio();
}

}  // namespace kvgate
