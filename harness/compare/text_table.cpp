#include "harness/compare/text_table.h"

#include <algorithm>
#include <sstream>
#include <vector>

#include "harness/compare/gains_text.h"
#include "harness/compare/number_format.h"
#include "harness/compare/verdict.h"

namespace kvgate::compare {

namespace {

using Row = std::vector<std::string>;

// Columns left-aligned for text, right-aligned for numbers (the first two are text).
void print_rows(std::ostringstream& out, const std::vector<Row>& rows, const std::string& indent) {
  std::vector<std::size_t> width;
  for (const Row& r : rows)
    for (std::size_t i = 0; i < r.size(); ++i) {
      if (width.size() <= i) width.push_back(0);
      width[i] = std::max(width[i], r[i].size());
    }
  for (const Row& r : rows) {
    std::string line = indent;
    for (std::size_t i = 0; i < r.size(); ++i) {
      const std::string pad(width[i] - r[i].size(), ' ');
      line += i < 2 || i + 1 == r.size() ? r[i] + pad : pad + r[i];
      if (i + 1 < r.size()) line += "  ";
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out << line << "\n";
  }
}

std::string bucket_name(std::int64_t b) {
  if (b == 0) return "-";
  if (b % (1024 * 1024) == 0) return std::to_string(b / (1024 * 1024)) + "M";
  if (b % 1024 == 0) return std::to_string(b / 1024) + "k";
  return std::to_string(b);
}

std::string opt(const std::optional<double>& v, int decimals) { return v ? fixed(*v, decimals) : "-"; }

}  // namespace

std::string format_text(const Comparison& c) {
  const CompareOptions& o = c.options;
  std::ostringstream out;
  out << "kvgate compare: margin " << fixed(o.margin, 3) << ", alpha " << fixed(o.alpha, 3) << " (one-sided), AUC axis "
      << stats::to_string(o.auc_axis) << ", errors "
      << (o.errors == ErrorPolicy::fail ? "count as failures" : "left out") << ", max error rate "
      << percent(o.max_error_rate, 1) << "\n";
  for (std::size_t i = 0; i < c.runs.size(); ++i)
    out << (i == 0 ? "  baseline   " : "  candidate  ") << c.runs[i].label << "  (" << c.runs[i].path << ", "
        << c.runs[i].results << " results)\n";
  // Pinning at the top: a comparison that changed more than the KV settings is read differently.
  for (const PairComparison& p : c.pairs) {
    if (!p.gating) continue;
    out << "\npinning, " << c.runs[p.candidate].label << " vs " << c.runs[p.reference].label << ":\n";
    for (const std::string& line : pinning_lines(c, p)) out << "  " << line << "\n";
  }

  for (const PairComparison& p : c.pairs) {
    const std::string& ref = c.runs[p.reference].label;
    const std::string& cand = c.runs[p.candidate].label;
    out << "\n" << cand << " vs " << ref << (p.gating ? "" : " (candidates compared, not gated)") << "\n";
    std::vector<Row> rows = {{"task", "bucket", "trials", ref, cand, "ratio", "lower", "upper", "lost", "gained", "McNemar p",
                              "Holm p", "verdict"}};
    for (const TaskComparison& t : p.tasks) {
      const bool single = t.buckets.size() == 1;
      for (const BucketComparison& b : t.buckets) {
        Row r = {t.task, bucket_name(b.bucket), std::to_string(b.trials), fixed(b.reference.score_mean, 3),
                 fixed(b.candidate.score_mean, 3), opt(b.ratio, 3)};
        if (single) {
          const bool defined = t.reference_metric > 0;
          r.push_back(defined ? fixed(t.ratio.lcb, 3) : "-");
          r.push_back(defined ? opt(t.ratio.ucb, 3) : "-");
        } else {
          r.push_back("");
          r.push_back("");
        }
        r.push_back(std::to_string(b.flips.lost));
        r.push_back(std::to_string(b.flips.gained));
        r.push_back(p_value(b.flips.mcnemar.exact));
        r.push_back(p_value(b.holm_p) + (b.regression ? " *" : ""));
        r.push_back(single ? to_string(t.verdict) : "");
        rows.push_back(std::move(r));
      }
      if (!single) {
        const bool defined = t.reference_metric > 0;
        rows.push_back({t.task, "AUC", std::to_string(t.trials), fixed(t.reference_metric, 3), fixed(t.candidate_metric, 3),
                        defined ? fixed(t.ratio_estimate, 3) : "-", defined ? fixed(t.ratio.lcb, 3) : "-",
                        defined ? opt(t.ratio.ucb, 3) : "-", std::to_string(t.flips.lost), std::to_string(t.flips.gained),
                        p_value(t.flips.mcnemar.exact), "", to_string(t.verdict)});
      }
    }
    print_rows(out, rows, "  ");
    out << "  (score means; ratio bounds one-sided " << fixed(100 * (1 - o.alpha), 1)
        << "%; McNemar p two-sided exact; Holm p: one-sided regression test adjusted over all buckets, * <= alpha)\n";
    for (const TaskComparison& t : p.tasks) {
      out << "  " << t.task << ": " << to_string(t.verdict);
      const std::vector<std::string> why = reasons(t);
      for (std::size_t i = 0; i < why.size(); ++i) out << (i == 0 ? ": " : "; ") << why[i];
      out << "\n";
      if (t.reference_metric > 0)
        out << "    point estimate >= " << fixed(o.margin, 2) << " (the seed articles' rule, not a test): "
            << (t.point_rule.passes ? "yes" : "no") << "; difference " << fixed(t.difference.estimate, 4) << " ["
            << fixed(t.difference.interval.lo, 4) << ", " << fixed(t.difference.interval.hi, 4) << "] ("
            << t.difference.method << ", two-sided " << fixed(100 * (1 - o.alpha), 0) << "%); decides ratios beyond "
            << fixed(o.margin, 2) << " +- " << fixed(t.power.mde_ratio, 3) << " with " << percent(o.power, 0) << " power\n";
      std::vector<std::string> regressed;
      for (const BucketComparison& b : t.buckets)
        if (b.regression) regressed.push_back(bucket_name(b.bucket));
      if (!regressed.empty()) {
        out << "    significant regression (Holm over all buckets of the pair)";
        if (t.buckets.size() > 1 || t.buckets[0].bucket != 0) {
          out << " in bucket" << (regressed.size() > 1 ? "s" : "");
          for (const auto& s : regressed) out << " " << s;
        }
        out << "\n";
      }
      for (const Finding& f : t.findings) out << "    " << f.severity << ": " << f.check << ": " << f.message << "\n";
    }
    out << "  what you gain (" << cand << " / " << ref << "):\n";
    for (const std::string& line : gain_lines(c, p)) out << "    " << line << "\n";
    out << "  " << to_string(p.verdict) << (p.gating ? "" : " (informative)") << ": " << p.reasons.front() << "\n";
  }
  out << "\nverdict: " << to_string(c.verdict);
  for (std::size_t i = 0; i < c.reasons.size(); ++i) out << (i == 0 ? " (" : ", ") << c.reasons[i];
  out << (c.reasons.empty() ? "" : ")") << "\n";
  for (const PairComparison& p : c.pairs)
    if (p.gating) out << "  " << verdict_line(c, p) << "\n";
  for (const std::string& w : c.warnings) out << "warning: " << w << "\n";
  return out.str();
}

}  // namespace kvgate::compare
