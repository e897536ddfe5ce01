#include "reports/junit_report.h"

#include "harness/compare/number_format.h"
#include "harness/compare/verdict.h"
#include "harness/core/version.h"
#include "reports/markup.h"
#include "reports/report_top.h"
#include "reports/svg_charts.h"

namespace kvgate::reports {

using compare::BucketComparison;
using compare::Comparison;
using compare::fixed;
using compare::PairComparison;
using compare::TaskComparison;

namespace {

std::string joined(const std::vector<std::string>& v, const std::string& sep) {
  std::string out;
  for (std::size_t i = 0; i < v.size(); ++i) out += (i ? sep : "") + v[i];
  return out;
}

std::string task_details(const Comparison& c, const PairComparison& p, const TaskComparison& t) {
  std::string s = joined(compare::reasons(t), "\n") + "\n";
  s += "metric " + t.metric + ": " + c.runs[p.reference].label + " " + fixed(t.reference_metric, 4) + ", " + c.runs[p.candidate].label + " " +
       fixed(t.candidate_metric, 4) + "\n";
  s += "flips: lost " + std::to_string(t.flips.lost) + ", gained " + std::to_string(t.flips.gained) + ", McNemar exact p " +
       compare::p_value(t.flips.mcnemar.exact) + "\n";
  s += "trials " + std::to_string(t.trials) + ", results " + std::to_string(t.results) + "\n";
  return s;
}

struct Case {
  std::string name{};
  std::string failure_type{};  // empty: passed
  std::string message{}, details{};
};

}  // namespace

std::string render_junit(const Comparison& c, const ReportContext& ctx) {
  const std::string stamp = generated_at(ctx);
  std::vector<std::pair<const PairComparison*, std::vector<Case>>> suites;
  std::size_t tests = 0, failures = 0;
  for (const PairComparison& p : c.pairs) {
    if (!p.gating) continue;
    std::vector<Case> cases;
    for (const TaskComparison& t : p.tasks) {
      Case k{.name = t.task};
      if (t.verdict != compare::Verdict::pass) {
        k.failure_type = compare::to_string(t.verdict);
        // The first reason is what decided it: an error rate or a failed check, else the bound.
        const std::vector<std::string> why = compare::reasons(t);
        k.message = std::string(compare::to_string(t.verdict)) + ": " + (why.empty() ? std::string() : why.front());
      }
      k.details = task_details(c, p, t);
      cases.push_back(k);
      for (const BucketComparison& b : t.buckets) {
        if (!b.regression) continue;
        const std::string where = b.bucket == 0 ? std::string("all trials") : token_label(b.bucket);
        cases.push_back({.name = t.task + " bucket " + where + " regression",
                         .failure_type = "regression",
                         .message = "significant regression at " + where + ": Holm p " + compare::p_value(b.holm_p) + " <= alpha " +
                                    fixed(c.options.alpha, 3) + " (" + std::to_string(b.flips.lost) + " lost, " +
                                    std::to_string(b.flips.gained) + " gained)",
                         .details = b.regression_test + " p " + compare::p_value(b.regression_p) + ", Holm-adjusted over every bucket of every task; score " +
                                    fixed(b.reference.score_mean, 4) + " -> " + fixed(b.candidate.score_mean, 4) + " over " +
                                    std::to_string(b.trials) + " trials\n"});
      }
    }
    for (const Case& k : cases) failures += k.failure_type.empty() ? 0 : 1;
    tests += cases.size();
    suites.emplace_back(&p, std::move(cases));
  }

  const std::vector<std::string> pinning = pinning_differences(c, ctx);
  const std::vector<CandidateTradeoff> trade = tradeoffs(c, ctx);
  Markup m;
  m.raw("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
  m.open("testsuites", {{"name", "kvgate compare"}, {"tests", std::to_string(tests)}, {"failures", std::to_string(failures)},
                        {"errors", "0"}, {"skipped", "0"}, {"time", "0"}});
  m.newline();
  for (const auto& [p, cases] : suites) {
    std::size_t failed = 0;
    for (const Case& k : cases) failed += k.failure_type.empty() ? 0 : 1;
    const std::string cand = c.runs[p->candidate].label, ref = c.runs[p->reference].label;
    m.open("testsuite", {{"name", "kvgate gate: " + cand + " vs " + ref}, {"tests", std::to_string(cases.size())},
                         {"failures", std::to_string(failed)}, {"errors", "0"}, {"skipped", "0"}, {"time", "0"}, {"timestamp", stamp}});
    m.newline().open("properties");
    const std::vector<std::pair<std::string, std::string>> props = {
        {"verdict", compare::to_string(p->verdict)},
        {"baseline", ref},
        {"candidate", cand},
        {"margin", fixed(c.options.margin, 3)},
        {"alpha", fixed(c.options.alpha, 3)},
        {"auc_axis", stats::to_string(c.options.auc_axis)},
        {"kvgate_version", std::string(version()) + " (" + git_commit() + ")"},
        {"pinned", p->pinning.pinned() ? "true" : "false"}};
    for (const auto& [name, value] : props) m.empty("property", {{"name", name}, {"value", value}});
    for (const std::string& d : pinning) m.empty("property", {{"name", "pinning_difference"}, {"value", d}});
    for (const CandidateTradeoff& t : trade)
      if (t.run == p->candidate)
        for (const Gain& g : t.gains)
          m.empty("property", {{"name", (is_loss(g) ? "loss: " : "gain: ") + g.what}, {"value", gain_text(g)}});
    m.close().newline();
    for (const Case& k : cases) {
      m.open("testcase", {{"classname", "kvgate." + cand}, {"name", k.name}, {"time", "0"}});
      if (!k.failure_type.empty()) m.open("failure", {{"type", k.failure_type}, {"message", k.message}}).text(k.details).close();
      else m.element("system-out", k.details);
      m.close().newline();
    }
    std::string out = joined(p->reasons, "\n");
    if (!pinning.empty()) out += "\ncheck before trusting the verdict (the runs should differ in their KV settings only):\n" + joined(pinning, "\n");
    if (!c.warnings.empty()) out += "\nwarnings:\n" + joined(c.warnings, "\n");
    m.element("system-out", out + "\n");
    m.close().newline();
  }
  m.close().newline();
  return m.str();
}

}  // namespace kvgate::reports
