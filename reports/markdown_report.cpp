#include "reports/markdown_report.h"

#include <sstream>

#include "harness/compare/number_format.h"
#include "harness/compare/verdict.h"
#include "harness/core/version.h"
#include "reports/html_escape.h"
#include "reports/html_sections.h"
#include "reports/report_top.h"
#include "reports/run_facts.h"
#include "reports/svg_charts.h"

namespace kvgate::reports {

using compare::BucketComparison;
using compare::Comparison;
using compare::fixed;
using compare::p_value;
using compare::PairComparison;
using compare::TaskComparison;

namespace {

std::string md(const std::string& s) { return escape_markdown(s); }

std::string row(const std::vector<std::string>& cells) {
  std::string out = "|";
  for (const std::string& c : cells) out += " " + c + " |";
  return out + "\n";
}

std::string bounds(const TaskComparison& t, bool upper) {
  if (!(t.reference_metric > 0)) return "\u2013";
  if (!upper) return fixed(t.ratio.lcb, 3);
  return t.ratio.ucb ? fixed(*t.ratio.ucb, 3) : "\u221e";
}

std::string run_line(const Comparison& c, std::size_t i) {
  const RunFacts f = c.runs[i].run ? run_facts(c.runs[i].run->manifest) : RunFacts{};
  std::vector<std::string> parts;
  if (!engine_name(f).empty()) parts.push_back(engine_name(f));
  if (!f.model.empty()) parts.push_back(f.model);
  if (!f.kv_format.empty()) parts.push_back("KV " + f.kv_format);
  if (!f.attention_numerics.empty()) parts.push_back(f.attention_numerics + " attention numerics");
  std::string s = "**" + md(c.runs[i].label) + "**";
  if (!parts.empty()) {
    s += " (";
    for (std::size_t k = 0; k < parts.size(); ++k) s += (k ? ", " : "") + md(parts[k]);
    s += ")";
  }
  return s;
}

}  // namespace

std::string render_markdown(const Comparison& c, const ReportContext& ctx) {
  std::ostringstream out;
  const compare::CompareOptions& o = c.options;
  out << "### kvgate: **" << compare::to_string(c.verdict) << "**";
  for (std::size_t i = 0; i < c.reasons.size(); ++i) out << (i ? ", " : " \u2014 ") << md(c.reasons[i]);
  out << "\n\n";
  out << "Baseline " << run_line(c, 0);
  for (std::size_t i = 1; i < c.runs.size(); ++i) out << (i == 1 ? "; candidate " : ", ") << run_line(c, i);
  out << ". Margin " << fixed(o.margin, 3) << " on candidate / baseline, one-sided " << fixed(100 * (1 - o.alpha), 1)
      << "% bounds: PASS needs the lower bound above the margin on every task.\n";
  // What could explain the verdict, then what each candidate gains beside what it loses (report_top.h).
  const std::vector<std::string> pinning = pinning_differences(c, ctx);
  if (!pinning.empty()) out << "\n**Check before trusting the verdict** (the runs should differ in their KV settings only):\n";
  for (const std::string& p : pinning) out << "- \u26a0 " << md(p) << "\n";
  out << markdown_sections(ctx.sections);
  const std::vector<CandidateTradeoff> trade = tradeoffs(c, ctx);
  if (!trade.empty()) out << "\n";
  for (const CandidateTradeoff& t : trade) {
    // A slowdown is listed with what the candidate loses, in words ("3.33× slower").
    const auto gain_item = [&](const Gain& g) {
      return md(g.what) + " " + gain_text(g) + (g.detail.empty() ? "" : " (" + md(g.detail) + ")");
    };
    out << "- **" << md(t.label) << "** gains";
    std::size_t shown = 0;
    for (const Gain& g : t.gains)
      if (!is_loss(g)) out << (shown++ ? "," : "") << " " << gain_item(g);
    if (shown == 0) out << (t.gains.empty() ? " nothing measured" : " nothing");
    out << "; loses";
    shown = 0;
    for (const Gain& g : t.gains)
      if (is_loss(g)) out << (shown++ ? "," : "") << " " << gain_item(g);
    for (std::size_t k = 0; k < t.tasks.size(); ++k) {
      const TaskComparison& task = *t.tasks[k];
      out << (shown++ ? "," : "") << " " << md(task.task) << " "
          << (task.reference_metric > 0 ? "\u00d7" + fixed(task.ratio_estimate, 3) + " (lower " + bounds(task, false) + ")" : "\u2013");
    }
    out << "\n";
  }

  const auto tasks = gated_tasks(c);
  for (const TaskAcrossPairs& ta : tasks) {
    const bool several = ta.tasks.size() > 1;
    const TaskComparison& first = *ta.tasks[0];
    const bool lengths = first.buckets.size() > 1 || first.buckets[0].bucket != 0;
    out << "\n#### " << md(ta.task);
    for (std::size_t k = 0; k < ta.tasks.size(); ++k)
      out << (k ? ", " : " \u2014 ") << (several ? md(run_label(c, ta.pairs[k]->candidate)) + " " : std::string()) << "**"
          << compare::to_string(ta.tasks[k]->verdict) << "**";
    out << "\n\n";
    std::vector<std::string> head;
    if (several) head.push_back("candidate");
    if (lengths) head.push_back("length");
    for (const char* h : {"baseline", "candidate", "ratio", "lower", "upper", "lost", "gained", "McNemar p", "Holm p"}) head.push_back(h);
    out << row(head);
    std::vector<std::string> rule(head.size(), "---:");
    for (std::size_t i = 0; i < (several ? 1u : 0u) + (lengths ? 1u : 0u); ++i) rule[i] = "---";
    out << row(rule);
    for (std::size_t k = 0; k < ta.tasks.size(); ++k) {
      const TaskComparison& t = *ta.tasks[k];
      const std::string cand = md(run_label(c, ta.pairs[k]->candidate));
      if (lengths)
        for (const BucketComparison& b : t.buckets) {
          std::vector<std::string> r;
          if (several) r.push_back(cand);
          r.push_back(token_label(b.bucket));
          r.push_back(fixed(b.reference.score_mean, 3));
          r.push_back(fixed(b.candidate.score_mean, 3));
          r.push_back(b.ratio ? fixed(*b.ratio, 3) : "\u2013");
          r.push_back("");
          r.push_back("");
          r.push_back(std::to_string(b.flips.lost));
          r.push_back(std::to_string(b.flips.gained));
          r.push_back(p_value(b.flips.mcnemar.exact));
          r.push_back(p_value(b.holm_p) + (b.regression ? " **regression**" : ""));
          out << row(r);
        }
      std::vector<std::string> r;
      if (several) r.push_back(cand);
      if (lengths) r.push_back(t.metric == "auc" ? "**AUC**" : "**all**");
      const bool defined = t.reference_metric > 0;
      r.push_back("**" + fixed(t.reference_metric, 3) + "**");
      r.push_back("**" + fixed(t.candidate_metric, 3) + "**");
      r.push_back(defined ? "**" + fixed(t.ratio_estimate, 3) + "**" : "\u2013");
      r.push_back(bounds(t, false));
      r.push_back(bounds(t, true));
      r.push_back(std::to_string(t.flips.lost));
      r.push_back(std::to_string(t.flips.gained));
      r.push_back(p_value(t.flips.mcnemar.exact));
      r.push_back(lengths ? "" : p_value(t.buckets[0].holm_p) + (t.buckets[0].regression ? " **regression**" : ""));
      out << row(r);
    }
    out << "\n";
    for (std::size_t k = 0; k < ta.tasks.size(); ++k) {
      const TaskComparison& t = *ta.tasks[k];
      const std::string who = several ? md(run_label(c, ta.pairs[k]->candidate)) + ": " : "";
      if (t.verdict != compare::Verdict::pass)
        for (const std::string& reason : compare::reasons(t)) out << "- " << who << md(reason) << "\n";
      for (const compare::Finding& f : t.findings)  // "fail" findings are among the reasons above
        if (f.severity != "fail" || t.verdict == compare::Verdict::pass)
          out << "- " << who << md(f.severity) << " " << md(f.check) << ": " << md(f.message) << "\n";
    }
  }

  bool informative = false;
  for (const PairComparison& p : c.pairs) informative = informative || !p.gating;
  if (informative) {
    out << "\nCandidates compared with each other (not gated):";
    for (const PairComparison& p : c.pairs) {
      if (p.gating) continue;
      for (const TaskComparison& t : p.tasks)
        out << "\n- " << md(run_label(c, p.candidate)) << " vs " << md(run_label(c, p.reference)) << ", " << md(t.task) << ": ratio "
            << (t.reference_metric > 0 ? fixed(t.ratio_estimate, 3) : "\u2013") << " [" << bounds(t, false) << ", " << bounds(t, true)
            << "], lost " << t.flips.lost << ", gained " << t.flips.gained;
    }
    out << "\n";
  }
  if (!c.warnings.empty()) {
    out << "\n" << c.warnings.size() << " warning" << (c.warnings.size() > 1 ? "s" : "") << ":\n";
    for (const std::string& w : c.warnings) out << "- " << md(w) << "\n";
  }
  out << "\n<sub>kvgate " << version() << " \u00b7 ratio = candidate / baseline of "
      << "the gated metric (AUC over context lengths, else the mean score) \u00b7 lower/upper: one-sided score bounds "
      << "(tang: one bucket of 0/1 trials; stratified_score: buckets, repeats, clusters, fractional scores) \u00b7 McNemar p "
      << "two-sided exact \u00b7 Holm p: one-sided per-bucket regression, adjusted \u00b7 generated " << md(generated_at(ctx))
      << "</sub>\n";
  return out.str();
}

}  // namespace kvgate::reports
