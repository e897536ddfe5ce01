#include "harness/compare/gains_text.h"

#include <cmath>

#include "harness/compare/number_format.h"

namespace kvgate::compare {

std::string thousands(long long v) {
  std::string digits = std::to_string(v < 0 ? -v : v), out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return (v < 0 ? "-" : "") + out;
}

namespace {

std::string x(double v) { return "x" + fixed(v, v >= 10 ? 1 : 2); }

// The candidate is slower on this measure (beyond rounding).
bool worse(const PairedRatio& r) { return oriented(r) < 0.995; }

// "23% less time", "25% more tokens/s": what the ratio means for a person; a slowdown says so
// first ("3.33× slower: 233% more time"), so no reader takes a ratio below 1 for a gain.
std::string meaning(const PairedRatio& r) {
  const double change = r.ratio - 1.0;
  if (std::fabs(change) < 0.005) return "no change";
  const std::string pct = fixed(std::fabs(change) * 100.0, 0) + "%";
  const std::string lead = worse(r) ? change_words(oriented(r), "slower") + ": " : "";
  if (r.metric == "output_tokens_per_s") return lead + pct + (change > 0 ? " more" : " fewer") + " tokens/s per request";
  return lead + pct + (change < 0 ? " less time" : " more time");
}

}  // namespace

double oriented(const PairedRatio& r) {
  if (!(r.ratio > 0)) return r.ratio;
  return r.lower_is_better ? 1.0 / r.ratio : r.ratio;
}

std::string change_words(double factor, const std::string& worse_word) {
  if (!(factor > 0) || !std::isfinite(factor)) return "\u2013";
  if (factor >= 1.0) return "\u00d7" + fixed(factor, 2);
  const double by = 1.0 / factor;
  return fixed(by, by >= 10 ? 1 : 2) + "\u00d7 " + worse_word;
}

std::string ratio_text(double ratio, const stats::Interval& i) {
  std::string s = x(ratio);
  if (std::isfinite(i.hi)) s += " [" + fixed(i.lo, 2) + ", " + fixed(i.hi, 2) + "]";
  return s;
}

std::vector<std::string> pinning_lines(const Comparison& c, const PairComparison& p) {
  std::vector<std::string> out;
  const Pinning& pin = p.pinning;
  if (pin.pinned()) {
    // Say what the check rests on: "pinned" over no engine fact at all would read as a guarantee.
    std::string list;
    for (const std::string& l : pin.compared) list += (list.empty() ? "" : ", ") + l;
    out.push_back("pinned: no difference other than the KV settings among the facts both runs recorded" +
                  (list.empty() ? std::string(" (none: nothing was checked)") : " (" + list + ")"));
  }
  if (!pin.kv_settings.empty()) out.push_back("KV settings (what this comparison changes): " + kv_settings_line(pin));
  for (const PinnedFact& d : pin.differences) out.push_back("differs: " + describe(d));
  for (const std::string& w : pin.warnings) out.push_back("warning: " + w);
  for (const PinnedFact& d : pin.one_sided) out.push_back("unchecked (recorded in one run only): " + describe(d));
  if (!pin.unrecorded.empty()) {
    std::string list;
    for (const std::string& u : pin.unrecorded) list += (list.empty() ? "" : ", ") + u;
    out.push_back("not recorded in either run: " + list +
                  (list.find("attention backend") != std::string::npos ? " (kvgate run --engine-log records the backend the engine selected)" : ""));
  }
  (void)c;
  return out;
}

std::vector<std::string> gain_lines(const Comparison& c, const PairComparison& p) {
  std::vector<std::string> out;
  const Gains& g = p.gains;
  if (g.capacity)
    out.push_back("KV capacity " + x(g.capacity->ratio) +
                  (g.capacity->ratio < 0.995 ? " (" + change_words(g.capacity->ratio, "less") + ")" : std::string()) + ": " +
                  thousands(g.capacity->candidate_tokens) + " vs " + thousands(g.capacity->reference_tokens) + " tokens" +
                  (g.capacity->estimate ? " (estimate: kvgate capacity, not the engine's log)" : " (engine logs)"));
  const int confidence = static_cast<int>(std::lround(100 * (1 - c.options.alpha)));
  for (const char* metric : {"itl_ms", "ttft_ms", "e2e_ms", "output_tokens_per_s"})
    for (const PairedRatio& r : g.ratios) {
      if (r.metric != metric) continue;
      std::string line = std::string(metric_label(r.metric)) + " " + ratio_text(r.ratio, r.interval) + " (" + meaning(r) +
                         "; geometric mean over " + std::to_string(r.trials) + " trials, " + std::to_string(confidence) + "% interval";
      if (r.p50_ratio) line += "; p50 " + x(*r.p50_ratio);
      if (r.p90_ratio) line += ", p90 " + x(*r.p90_ratio);
      if (r.p99_ratio) line += ", p99 " + x(*r.p99_ratio);
      out.push_back(line + ")");
    }
  for (const TaskComparison& t : p.tasks) {
    if (t.reference_metric <= 0) continue;
    out.push_back("accuracy " + t.task + " " + x(t.ratio_estimate) + ", lower bound " + fixed(t.ratio.lcb, 3) + " (" +
                  t.ratio.method + ", one-sided " + std::to_string(confidence) + "%; margin " + fixed(c.options.margin, 2) +
                  "): " + to_string(t.verdict));
  }
  for (const std::string& n : g.notes) out.push_back("(" + n + ")");
  return out;
}

std::vector<GainRow> gain_rows(const Comparison& c, const PairComparison& p) {
  std::vector<GainRow> rows;
  const Gains& g = p.gains;
  const int confidence = static_cast<int>(std::lround(100 * (1 - c.options.alpha)));
  if (g.capacity)
    rows.push_back({.gain = true, .what = "KV capacity",
                    .ratio = g.capacity->ratio < 0.995 ? change_words(g.capacity->ratio, "less") : x(g.capacity->ratio), .interval = "",
                    .basis = thousands(g.capacity->candidate_tokens) + " vs " + thousands(g.capacity->reference_tokens) + " tokens, " +
                             (g.capacity->estimate ? "estimated by kvgate capacity" : "from the engine logs"),
                    .good = g.capacity->ratio >= 1.0});
  for (const char* metric : {"itl_ms", "ttft_ms", "e2e_ms", "output_tokens_per_s"})
    for (const PairedRatio& r : g.ratios) {
      if (r.metric != metric) continue;
      std::string basis = meaning(r) + "; geometric mean of " + std::to_string(r.trials) + " paired trials";
      if (r.p99_ratio) basis += "; p99 " + x(*r.p99_ratio);
      rows.push_back({.gain = true, .what = metric_label(r.metric), .ratio = worse(r) ? change_words(oriented(r), "slower") : x(r.ratio),
                      .interval = std::isfinite(r.interval.hi) ? "[" + fixed(r.interval.lo, 2) + ", " + fixed(r.interval.hi, 2) + "]" : "",
                      .basis = basis, .good = r.lower_is_better ? r.ratio <= 1.0 : r.ratio >= 1.0});
    }
  for (const TaskComparison& t : p.tasks) {
    if (t.reference_metric <= 0) continue;
    rows.push_back({.gain = false, .what = "accuracy " + t.task, .ratio = x(t.ratio_estimate),
                    .interval = ">= " + fixed(t.ratio.lcb, 3),
                    .basis = std::string(to_string(t.verdict)) + "; " + t.ratio.method + " one-sided " + std::to_string(confidence) +
                             "% lower bound, margin " + fixed(c.options.margin, 2),
                    .good = t.verdict == Verdict::pass});
  }
  return rows;
}

std::string gain_summary(const PairComparison& p) {
  std::string s;
  const auto add = [&](const std::string& part) { s += (s.empty() ? "" : ", ") + part; };
  if (p.gains.capacity)
    add("capacity " + (p.gains.capacity->ratio < 0.995 ? change_words(p.gains.capacity->ratio, "less") : x(p.gains.capacity->ratio)) +
        (p.gains.capacity->estimate ? " (est.)" : ""));
  for (const char* metric : {"itl_ms", "ttft_ms", "e2e_ms", "output_tokens_per_s"})
    for (const PairedRatio& r : p.gains.ratios)
      if (r.metric == metric) add(std::string(metric_label(r.metric)) + " " + (worse(r) ? change_words(oriented(r), "slower") : x(r.ratio)));
  return s;
}

}  // namespace kvgate::compare
