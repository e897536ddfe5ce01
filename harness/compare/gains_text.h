// The pinning differences and "what you gain" as sentences, shared by the text table and the
// report writers (Markdown, HTML, JUnit) so every format says the same thing.
#pragma once
#include <string>
#include <vector>

#include "compare/comparison.h"

namespace kvgate::compare {

// "x0.77 [0.74, 0.80]" (the interval omitted when unbounded).
std::string ratio_text(double ratio, const stats::Interval& interval);

// One line per pinning difference, then the attention-backend warning; "pinned: ..." when none.
// Facts recorded on one side only, and important facts neither run recorded, are listed too.
std::vector<std::string> pinning_lines(const Comparison& c, const PairComparison& p);

// "what you gain": KV capacity, then ITL, TTFT, E2E, output tokens/s, then the accuracy ratio and
// its one-sided lower bound per task ("what you lose"), then notes on what is missing.
std::vector<std::string> gain_lines(const Comparison& c, const PairComparison& p);

// Short form for one row of a table or a history: "capacity x1.96, ITL x0.77, TTFT x0.82".
std::string gain_summary(const PairComparison& p);

}  // namespace kvgate::compare
