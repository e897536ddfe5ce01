#include "datasets/common/edit_distance.h"

#include <utf8proc.h>

#include <algorithm>
#include <cstdint>
#include <unordered_map>
#include <vector>

namespace kvgate {

namespace {

std::vector<std::int32_t> code_points(std::string_view s) {
  std::vector<std::int32_t> out;
  out.reserve(s.size());
  const auto* p = reinterpret_cast<const utf8proc_uint8_t*>(s.data());
  utf8proc_ssize_t left = static_cast<utf8proc_ssize_t>(s.size());
  while (left > 0) {
    utf8proc_int32_t cp = 0;
    utf8proc_ssize_t n = utf8proc_iterate(p, left, &cp);
    if (n <= 0) {  // an invalid byte: a distinct symbol of its own, outside the Unicode range
      cp = 0x110000 + *p;
      n = 1;
    }
    out.push_back(cp);
    p += n;
    left -= n;
  }
  return out;
}

// Myers' bit-vector step for one 64-row block (as in edlib's calculateBlock): vertical delta vectors
// Pv/Mv of the block, the match mask Eq of the text character, the horizontal delta entering at the
// block's top row (-1, 0, +1). Returns the horizontal delta leaving at row `out_bit`.
int advance_block(std::uint64_t& Pv, std::uint64_t& Mv, std::uint64_t Eq, int hin, int out_bit) {
  const std::uint64_t hin_neg = hin < 0 ? 1 : 0, hin_pos = hin > 0 ? 1 : 0;
  const std::uint64_t Xv = Eq | Mv;
  Eq |= hin_neg;
  const std::uint64_t Xh = (((Eq & Pv) + Pv) ^ Pv) | Eq;
  std::uint64_t Ph = Mv | ~(Xh | Pv);
  std::uint64_t Mh = Pv & Xh;
  int hout = 0;
  if ((Ph >> out_bit) & 1) hout = 1;
  if ((Mh >> out_bit) & 1) hout = -1;
  Ph = (Ph << 1) | hin_pos;
  Mh = (Mh << 1) | hin_neg;
  Pv = Mh | ~(Xv | Ph);
  Mv = Ph & Xv;
  return hout;
}

std::size_t distance(const std::vector<std::int32_t>& pattern, const std::vector<std::int32_t>& text) {
  const std::size_t m = pattern.size();
  if (m == 0) return text.size();
  if (text.empty()) return m;
  const std::size_t blocks = (m + 63) / 64;
  // Peq: for each character of the pattern, which rows hold it.
  std::unordered_map<std::int32_t, std::vector<std::uint64_t>> peq;
  for (std::size_t i = 0; i < m; ++i) {
    auto& bits = peq[pattern[i]];
    if (bits.empty()) bits.assign(blocks, 0);
    bits[i / 64] |= std::uint64_t{1} << (i % 64);
  }
  const std::vector<std::uint64_t> none(blocks, 0);
  // Byte-range characters (most of any text) through a flat table, the rest through the map.
  std::vector<const std::uint64_t*> low(256, none.data());
  for (const auto& [c, bits] : peq)
    if (c >= 0 && c < 256) low[static_cast<std::size_t>(c)] = bits.data();
  std::vector<std::uint64_t> Pv(blocks, ~std::uint64_t{0}), Mv(blocks, 0);
  const int last_bit = static_cast<int>((m - 1) % 64);
  std::size_t score = m;
  for (std::int32_t c : text) {
    const std::uint64_t* eq = none.data();
    if (c >= 0 && c < 256) {
      eq = low[static_cast<std::size_t>(c)];
    } else if (auto it = peq.find(c); it != peq.end()) {
      eq = it->second.data();
    }
    int h = 1;  // the top row D[0][j] = j grows by one per column
    for (std::size_t b = 0; b + 1 < blocks; ++b) h = advance_block(Pv[b], Mv[b], eq[b], h, 63);
    h = advance_block(Pv[blocks - 1], Mv[blocks - 1], eq[blocks - 1], h, last_bit);
    score = static_cast<std::size_t>(static_cast<long long>(score) + h);
  }
  return score;
}

}  // namespace

std::size_t levenshtein_distance(std::string_view a, std::string_view b) {
  if (a == b) return 0;
  std::vector<std::int32_t> x = code_points(a), y = code_points(b);
  // Common prefix and suffix do not change the distance; trimming them makes near-identical outputs cheap.
  std::size_t pre = 0;
  while (pre < x.size() && pre < y.size() && x[pre] == y[pre]) ++pre;
  std::size_t suf = 0;
  while (suf < x.size() - pre && suf < y.size() - pre && x[x.size() - 1 - suf] == y[y.size() - 1 - suf]) ++suf;
  x = std::vector<std::int32_t>(x.begin() + pre, x.end() - suf);
  y = std::vector<std::int32_t>(y.begin() + pre, y.end() - suf);
  return x.size() <= y.size() ? distance(x, y) : distance(y, x);
}

double normalized_edit_distance(std::string_view a, std::string_view b) {
  const std::size_t la = code_points(a).size(), lb = code_points(b).size();
  const std::size_t longest = std::max(la, lb);
  if (longest == 0) return 0.0;
  return static_cast<double>(levenshtein_distance(a, b)) / static_cast<double>(longest);
}

}  // namespace kvgate
