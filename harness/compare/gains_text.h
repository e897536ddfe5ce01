// The pinning differences and "what you gain" as sentences, shared by the text table and the
// report writers (Markdown, HTML, JUnit) so every format says the same thing.
#pragma once
#include <string>
#include <vector>

#include "harness/compare/comparison.h"

namespace kvgate::compare {

// 950992 -> "950,992".
std::string thousands(long long v);

// A ratio turned so that above 1 is better for the candidate: capacity and tokens/s as they are,
// latencies inverted (baseline / candidate).
double oriented(const PairedRatio& r);

// A factor oriented so that above 1 is better, in words: "×1.94" for a gain, "3.33× slower" (or
// "2.00× less", with `worse_word`) for a loss: a slowdown is never printed as a gain below 1.
std::string change_words(double factor, const std::string& worse_word);

// "x0.77 [0.74, 0.80]" (the interval omitted when unbounded).
std::string ratio_text(double ratio, const stats::Interval& interval);

// One line per pinning difference, then the attention-backend warning; "pinned: ..." when none.
// Facts recorded on one side only, and important facts neither run recorded, are listed too.
std::vector<std::string> pinning_lines(const Comparison& c, const PairComparison& p);

// "what you gain": KV capacity, then ITL, TTFT, E2E, output tokens/s, then the accuracy ratio and
// its one-sided lower bound per task ("what you lose"), then notes on what is missing.
std::vector<std::string> gain_lines(const Comparison& c, const PairComparison& p);

// The same as rows of a table, gains first, then losses (accuracy per task), for Markdown and HTML.
struct GainRow {
  bool gain = true;          // false: "what you lose" (accuracy)
  std::string what{};        // "KV capacity", "ITL", "TTFT", "E2E latency", "output tokens/s", "accuracy niah"
  std::string ratio{};       // "x0.77"
  std::string interval{};    // "[0.74, 0.80]" (two-sided) or ">= 0.962" (one-sided lower bound), "" when none
  std::string basis{};       // how it was measured
  bool good = true;          // the candidate is better (or not worse) on this row
};
std::vector<GainRow> gain_rows(const Comparison& c, const PairComparison& p);

// Short form for one row of a table or a history: "capacity x1.96, ITL x0.77, TTFT x0.82"; a
// slowdown in words: "E2E latency 3.33× slower".
std::string gain_summary(const PairComparison& p);

}  // namespace kvgate::compare
