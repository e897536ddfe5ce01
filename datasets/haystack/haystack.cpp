#include "datasets/haystack/haystack.h"

#include <algorithm>
#include <numeric>

namespace kvgate::haystack {

HaystackBuilder::HaystackBuilder(SentenceSource& source, std::size_t short_fills, std::size_t ordinary_fills)
    : source_(source), ordinary_fills_(ordinary_fills) {
  fills_.reserve(short_fills + ordinary_fills);
  for (std::size_t i = 0; i < short_fills; ++i) fills_.push_back(source_.next_short());
  for (std::size_t i = 0; i < ordinary_fills; ++i) fills_.push_back(source_.next().text);
  std::stable_sort(fills_.begin(), fills_.end(), [](const std::string& a, const std::string& b) { return a.size() < b.size(); });
}

std::int64_t HaystackBuilder::separator(std::size_t index) const {
  if (index == 0) return 0;
  return stream_[index].paragraph_start ? 2 : 1;
}

void HaystackBuilder::draw_until(std::int64_t bytes) {
  while (cum_.back() <= bytes) {
    stream_.push_back(source_.next());
    const std::size_t i = stream_.size() - 1;
    cum_.push_back(cum_.back() + separator(i) + static_cast<std::int64_t>(stream_[i].text.size()));
  }
}

HaystackSelection HaystackBuilder::select(std::int64_t budget) {
  HaystackSelection sel;
  if (budget < 0) budget = 0;
  draw_until(budget);  // now cum_.back() > budget
  // The longest prefix within the budget.
  const auto it = std::upper_bound(cum_.begin(), cum_.end(), budget);
  sel.sentences = static_cast<std::size_t>(it - cum_.begin()) - 1;
  sel.bytes = cum_[sel.sentences];
  // Top up from the pool: the largest sentence that fits, then the best pair for what is left
  // (fewest bytes left over; ties to the earliest in the pool).
  auto cost = [&](std::size_t f, std::int64_t bytes_so_far) {
    return (bytes_so_far > 0 ? 1 : 0) + static_cast<std::int64_t>(fills_[f].size());
  };
  std::size_t first = fills_.size();
  for (std::size_t f = 0; f < fills_.size() && sel.bytes + cost(f, sel.bytes) <= budget; ++f) first = f;
  if (first == fills_.size()) return sel;
  sel.fillers.push_back(first);
  sel.bytes += cost(first, sel.bytes);
  std::int64_t best_left = budget - sel.bytes;
  std::vector<std::size_t> best;
  for (std::size_t a = 0; a < fills_.size(); ++a) {
    if (a == first) continue;
    const std::int64_t after_a = sel.bytes + cost(a, sel.bytes);
    if (after_a > budget) break;  // sorted by size
    if (budget - after_a < best_left) {
      best_left = budget - after_a;
      best = {a};
    }
    for (std::size_t b = a + 1; b < fills_.size(); ++b) {
      if (b == first) continue;
      const std::int64_t after_b = after_a + cost(b, after_a);
      if (after_b > budget) break;
      if (budget - after_b < best_left) {
        best_left = budget - after_b;
        best = {a, b};
      }
    }
  }
  for (std::size_t f : best) {
    sel.fillers.push_back(f);
    sel.bytes += cost(f, sel.bytes);
  }
  return sel;
}

HaystackSelection HaystackBuilder::compose(std::size_t sentences, std::vector<std::size_t> fillers) const {
  HaystackSelection sel;
  sel.sentences = sentences;
  sel.bytes = cum_.at(sentences);
  for (std::size_t f : fillers) sel.bytes += (sel.bytes > 0 ? 1 : 0) + static_cast<std::int64_t>(fills_.at(f).size());
  sel.fillers = std::move(fillers);
  return sel;
}

std::vector<PlacedInsertion> HaystackBuilder::render(const HaystackSelection& sel, std::span<const Insertion> insertions,
                                                     std::string& out) const {
  const std::size_t n = sel.sentences, items = n + sel.fillers.size();
  auto text = [&](std::size_t k) -> const std::string& { return k < n ? stream_[k].text : fills_[sel.fillers[k - n]]; };
  auto paragraph_start = [&](std::size_t k) { return k < n && k > 0 && stream_[k].paragraph_start; };
  // off[k]: bytes of the haystack before boundary k (boundary k is just before item k).
  std::vector<std::int64_t> off(cum_.begin(), cum_.begin() + static_cast<std::ptrdiff_t>(n + 1));
  for (std::size_t k = n; k < items; ++k)
    off.push_back(off.back() + (k == 0 ? 0 : 1) + static_cast<std::int64_t>(text(k).size()));
  const double total = static_cast<double>(sel.bytes);

  // The nearest boundary to each asked depth (ties to the earlier one).
  std::vector<std::size_t> boundary(insertions.size());
  for (std::size_t i = 0; i < insertions.size(); ++i) {
    const double want = std::clamp(insertions[i].depth, 0.0, 1.0) * total;
    const auto it = std::lower_bound(off.begin(), off.end(), want, [](std::int64_t o, double w) { return static_cast<double>(o) < w; });
    std::size_t k = static_cast<std::size_t>(it - off.begin());
    if (k == off.size()) k = off.size() - 1;
    if (k > 0 && want - static_cast<double>(off[k - 1]) <= static_cast<double>(off[k]) - want) --k;
    boundary[i] = k;
  }
  std::vector<std::size_t> order(insertions.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return boundary[a] < boundary[b]; });

  std::size_t extra = 0;
  for (const Insertion& ins : insertions) extra += ins.text.size() + 2;
  out.reserve(out.size() + static_cast<std::size_t>(sel.bytes) + extra);
  std::vector<PlacedInsertion> placed(insertions.size());
  bool emitted = false;
  std::size_t next = 0;
  for (std::size_t k = 0; k <= items; ++k) {
    while (next < order.size() && boundary[order[next]] == k) {
      const std::size_t i = order[next++];
      if (emitted) out.push_back(' ');
      placed[i] = {out.size(), total > 0 ? static_cast<double>(off[k]) / total : 0.0};
      out.append(insertions[i].text);
      emitted = true;
    }
    if (k == items) break;
    if (emitted) out.append(paragraph_start(k) ? "\n\n" : " ");
    out.append(text(k));
    emitted = true;
  }
  return placed;
}

}  // namespace kvgate::haystack
