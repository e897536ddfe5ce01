#include "datasets/haystack/haystack_fine_step.h"

#include <algorithm>
#include <string>
#include <vector>

namespace kvgate::haystack {

namespace {

// One ending: the stream's prefix less `dropped` sentences, then `fillers` (increasing pool indices).
struct Choice {
  std::size_t dropped = 0;
  std::vector<std::size_t> fillers;
  std::int64_t predicted = 0;
  bool tried = false;
};

std::int64_t count_of(const TokenCounter& counter, const std::string& text) {
  return static_cast<std::int64_t>(counter.count_text(text));
}

}  // namespace

FineStepResult fine_step(const HaystackBuilder& builder, const HaystackSelection& start, std::int64_t start_tokens,
                         const TokenCounter& counter, const FineStepOptions& o,
                         const std::function<std::int64_t(const HaystackSelection&)>& count) {
  FineStepResult out;
  const std::vector<Sentence>& stream = builder.stream();
  const std::vector<std::string>& pool = builder.fill_sentences();
  const std::size_t n = start.sentences;

  // Each piece's own count, with the separator render() puts before it (none for the first item,
  // which a filler is only when the ending may drop every stream sentence).
  const bool may_lead = n <= o.max_dropped;
  std::vector<std::int64_t> fill_joined(pool.size()), fill_alone(may_lead ? pool.size() : 0);
  for (std::size_t f = 0; f < pool.size(); ++f) {
    fill_joined[f] = count_of(counter, " " + pool[f]);
    if (may_lead) fill_alone[f] = count_of(counter, pool[f]);
  }
  auto sentence = [&](std::size_t i) {
    if (i == 0) return count_of(counter, stream[i].text);
    return count_of(counter, (stream[i].paragraph_start ? "\n\n" : " ") + stream[i].text);
  };

  // The count without the start's fillers, then without each of its last sentences in turn.
  std::int64_t base = start_tokens;
  for (std::size_t k = 0; k < start.fillers.size(); ++k)
    base -= (n == 0 && k == 0) ? fill_alone[start.fillers[k]] : fill_joined[start.fillers[k]];

  // Every ending predicted near the window (corrections move predictions by a few tokens).
  const std::int64_t slack = std::max<std::int64_t>(8, o.highest - o.lowest);
  std::vector<Choice> choices;
  std::vector<std::size_t> picked;
  for (std::size_t dropped = 0; dropped <= std::min(o.max_dropped, n); ++dropped) {
    if (dropped > 0) base -= sentence(n - dropped);
    const bool first_alone = n == dropped;  // no stream sentence left: the first filler has no separator
    auto visit = [&](auto&& self, std::size_t from, std::int64_t tokens) -> void {
      if (tokens >= o.lowest - slack && tokens <= o.highest + slack)
        choices.push_back({.dropped = dropped, .fillers = picked, .predicted = tokens});
      if (picked.size() == o.max_fillers) return;
      for (std::size_t f = from; f < pool.size(); ++f) {
        const std::int64_t piece = (first_alone && picked.empty()) ? fill_alone[f] : fill_joined[f];
        picked.push_back(f);
        self(self, f + 1, tokens + piece);
        picked.pop_back();
      }
    };
    visit(visit, 0, base);
  }

  // Closest to the middle first; then fewer sentences dropped, fewer fillers, enumeration order.
  const std::int64_t aim = o.lowest + (o.highest - o.lowest + 1) / 2;
  std::vector<std::int64_t> correction(std::min(o.max_dropped, n) + 1, 0);  // per prefix: the latest miss
  auto corrected = [&](const Choice& c) { return c.predicted + correction[c.dropped]; };
  for (const Choice& c : choices)
    if (corrected(c) >= o.lowest && corrected(c) <= o.highest) ++out.choices;
  while (out.counts < o.max_counts) {
    Choice* best = nullptr;
    auto key = [&](const Choice& c) {
      const std::int64_t p = corrected(c);
      return std::make_tuple(p > aim ? p - aim : aim - p, c.dropped, c.fillers.size());
    };
    for (Choice& c : choices) {
      if (c.tried || corrected(c) < o.lowest || corrected(c) > o.highest) continue;
      if (!best || key(c) < key(*best)) best = &c;
    }
    if (!best) break;
    best->tried = true;
    HaystackSelection sel = builder.compose(n - best->dropped, best->fillers);
    const std::int64_t tokens = count(sel);
    ++out.counts;
    if (tokens >= o.lowest && tokens <= o.highest) {
      out.found = true;
      out.selection = std::move(sel);
      out.tokens = tokens;
      return out;
    }
    correction[best->dropped] = tokens - best->predicted;
  }
  return out;
}

}  // namespace kvgate::haystack
