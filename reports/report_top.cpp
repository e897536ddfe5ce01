#include "report_top.h"

#include "compare/number_format.h"
#include "run_facts.h"

namespace kvgate::reports {

using compare::fixed;

bool must_match(const std::string& field) {
  return field == "model" || field == "sampling" || field == "tasks sha256" || field == "API";
}

std::vector<std::string> pinning_differences(const compare::Comparison& c, const ReportContext& ctx) {
  std::vector<std::string> out = ctx.pinning_differences;
  if (c.runs.empty()) return out;
  const auto rows_of = [&](std::size_t i) { return fact_rows(c.runs[i].run ? run_facts(c.runs[i].run->manifest) : RunFacts{}); };
  const auto base = rows_of(0);
  for (std::size_t i = 1; i < c.runs.size(); ++i) {
    const auto cand = rows_of(i);
    for (std::size_t f = 0; f < base.size(); ++f)
      if (must_match(base[f].first) && !base[f].second.empty() && !cand[f].second.empty() && base[f].second != cand[f].second)
        out.push_back(base[f].first + " differs: " + c.runs[0].label + " has \u201c" + base[f].second + "\u201d, " + c.runs[i].label +
                      " has \u201c" + cand[f].second + "\u201d");
  }
  return out;
}

std::vector<CandidateTradeoff> tradeoffs(const compare::Comparison& c, const ReportContext& ctx) {
  std::vector<CandidateTradeoff> out;
  if (ctx.gains.empty()) return out;
  for (const compare::PairComparison& p : c.pairs) {
    if (!p.gating) continue;
    CandidateTradeoff t{.run = p.candidate, .label = c.runs[p.candidate].label, .verdict = p.verdict};
    for (const compare::TaskComparison& task : p.tasks) t.tasks.push_back(&task);
    for (const Gain& g : ctx.gains)
      if (g.candidate.empty() || g.candidate == t.label) t.gains.push_back(&g);
    out.push_back(std::move(t));
  }
  return out;
}

std::string gain_text(const Gain& g) {
  std::string s = "\u00d7" + fixed(g.factor, 2);
  if (g.lo && g.hi) s += " [" + fixed(*g.lo, 2) + ", " + fixed(*g.hi, 2) + "]";
  return s;
}

}  // namespace kvgate::reports
