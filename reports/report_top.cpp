#include "reports/report_top.h"

#include <cmath>

#include "harness/compare/gains_text.h"
#include "harness/compare/number_format.h"
#include "reports/run_facts.h"

namespace kvgate::reports {

using compare::fixed;

bool must_match(const std::string& field) {
  return field == "model" || field == "sampling" || field == "tasks sha256" || field == "API";
}

std::vector<std::string> pinning_differences(const compare::Comparison& c, const ReportContext& ctx) {
  std::vector<std::string> out = ctx.pinning_differences;
  for (const compare::PairComparison& p : c.pairs) {
    if (!p.gating) continue;
    const std::string& ref = c.runs[p.reference].label;
    const std::string& cand = c.runs[p.candidate].label;
    for (const compare::PinnedFact& d : p.pinning.differences)
      out.push_back(d.label + " differs: " + ref + " has \u201c" + compare::value_text(*d.reference) + "\u201d, " + cand + " has \u201c" +
                    compare::value_text(*d.candidate) + "\u201d");
    for (const std::string& w : p.pinning.warnings) out.push_back(w);
  }
  return out;
}

std::vector<Gain> measured_gains(const compare::Comparison& c, const compare::PairComparison& p) {
  std::vector<Gain> out;
  const std::string cand = c.runs[p.candidate].label;
  const compare::Gains& g = p.gains;
  if (g.capacity)
    out.push_back({.candidate = cand, .what = "KV capacity", .factor = g.capacity->ratio, .lo = std::nullopt, .hi = std::nullopt,
                   .detail = (g.capacity->estimate ? "estimate (kvgate capacity): " : "engine logs: ") +
                             compare::thousands(g.capacity->candidate_tokens) + " vs " +
                             compare::thousands(g.capacity->reference_tokens) + " tokens"});
  const int confidence = static_cast<int>(std::lround(100 * (1 - c.options.alpha)));
  for (const char* metric : {"itl_ms", "ttft_ms", "e2e_ms", "output_tokens_per_s"})
    for (const compare::PairedRatio& r : g.ratios) {
      if (r.metric != metric) continue;
      const bool flip = r.lower_is_better;  // latencies: baseline / candidate, so above 1 is faster
      Gain gain{.candidate = cand,
                .what = r.metric == "itl_ms"    ? "inter-token latency"
                        : r.metric == "ttft_ms" ? "time to first token"
                        : r.metric == "e2e_ms"  ? "end-to-end latency"
                                                : "output tokens/s",
                .factor = flip ? 1.0 / r.ratio : r.ratio,
                .lo = std::nullopt,
                .hi = std::nullopt,
                .detail = (flip ? "baseline / candidate, above 1 is faster; " : "candidate / baseline; ") +
                          std::to_string(r.trials) + " paired trials, geometric mean, " + std::to_string(confidence) + "%"};
      if (std::isfinite(r.interval.hi) && r.interval.lo > 0) {
        gain.lo = flip ? 1.0 / r.interval.hi : r.interval.lo;
        gain.hi = flip ? 1.0 / r.interval.lo : r.interval.hi;
      }
      out.push_back(std::move(gain));
    }
  return out;
}

std::vector<CandidateTradeoff> tradeoffs(const compare::Comparison& c, const ReportContext& ctx) {
  std::vector<CandidateTradeoff> out;
  bool any = false;
  for (const compare::PairComparison& p : c.pairs) {
    if (!p.gating) continue;
    CandidateTradeoff t{.run = p.candidate, .label = c.runs[p.candidate].label, .verdict = p.verdict};
    for (const compare::TaskComparison& task : p.tasks) t.tasks.push_back(&task);
    for (const Gain& g : ctx.gains)
      if (g.candidate.empty() || g.candidate == t.label) t.gains.push_back(g);
    for (Gain& g : measured_gains(c, p)) t.gains.push_back(std::move(g));
    any = any || !t.gains.empty();
    out.push_back(std::move(t));
  }
  if (!any) out.clear();
  return out;
}

bool is_loss(const Gain& g) { return g.factor > 0 && g.factor < 0.995; }

std::string gain_factor_text(const Gain& g) {
  if (!is_loss(g)) return "\u00d7" + fixed(g.factor, 2);
  const bool speed = g.what.find("latency") != std::string::npos || g.what.find("time") != std::string::npos ||
                     g.what.find("tokens/s") != std::string::npos;
  const bool capacity = g.what.find("capacity") != std::string::npos;
  return compare::change_words(g.factor, speed ? "slower" : capacity ? "less" : "worse");
}

std::string gain_interval_text(const Gain& g) {
  if (!g.lo || !g.hi) return "";
  if (!is_loss(g)) return "[" + fixed(*g.lo, 2) + ", " + fixed(*g.hi, 2) + "]";
  if (!(*g.lo > 0)) return "";
  return "[" + fixed(1.0 / *g.hi, 2) + ", " + fixed(1.0 / *g.lo, 2) + "]";  // how many times worse
}

std::string gain_text(const Gain& g) {
  const std::string interval = gain_interval_text(g);
  return gain_factor_text(g) + (interval.empty() ? "" : " " + interval);
}

}  // namespace kvgate::reports
