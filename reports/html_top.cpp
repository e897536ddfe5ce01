// The top of the comparison page, right under the verdict: the differences between the runs that
// could explain it, and what each candidate gains beside what it loses (report_top.h).
#include "harness/compare/number_format.h"
#include "reports/html_page.h"
#include "reports/html_sections.h"
#include "reports/report_top.h"

namespace kvgate::reports {

using compare::fixed;

void pinning_block(Markup& m, const compare::Comparison& c, const ReportContext& ctx) {
  const std::vector<std::string> differences = pinning_differences(c, ctx);
  if (differences.empty()) return;
  m.open("section", {{"class", "callout"}, {"id", "pinning"}});
  m.element("strong", "Check these differences before trusting the verdict: the runs should differ in their KV settings only.");
  m.open("ul");
  for (const std::string& d : differences) m.element("li", d);
  m.close().close().newline();
}

void tradeoff_block(Markup& m, const compare::Comparison& c, const ReportContext& ctx) {
  const std::vector<CandidateTradeoff> all = tradeoffs(c, ctx);
  if (all.empty()) return;
  m.open("section", {{"id", "tradeoff"}});
  m.element("h2", "What the candidate gains, what it loses");
  table_head(m, {{"candidate"}, {"measure"}, {"\u00d7 vs baseline", true, "candidate / baseline, oriented so that above 1 is better"},
                 {"interval", true}, {"how measured, or the gate"}});
  for (const CandidateTradeoff& t : all) {
    for (const Gain& gain : t.gains) {
      const Gain* g = &gain;
      m.open("tr");
      cell(m, t.label);
      cell(m, (is_loss(*g) ? "loses: " : "gains: ") + g->what);
      cell(m, gain_factor_text(*g), true, g->factor > 1 ? "better" : is_loss(*g) ? "worse" : "");
      const std::string interval = gain_interval_text(*g);
      cell(m, interval.empty() ? "\u2013" : interval, true);
      cell(m, g->detail.empty() ? "\u2013" : g->detail);
      m.close();
    }
    for (const compare::TaskComparison* task : t.tasks) {
      const bool defined = task->reference_metric > 0;
      m.open("tr");
      cell(m, t.label);
      cell(m, "loses: " + task->task + (task->metric == "auc" ? " accuracy (AUC over lengths)" : " accuracy"));
      cell(m, defined ? "\u00d7" + fixed(task->ratio_estimate, 3) : "\u2013", true);
      cell(m, defined ? "[" + fixed(task->ratio.lcb, 3) + ", " + (task->ratio.ucb ? fixed(*task->ratio.ucb, 3) : std::string("\u221e")) + "]"
                      : "\u2013",
           true);
      m.open("td");
      badge(m, task->verdict);
      m.text(" margin " + fixed(c.options.margin, 3));
      m.close();
      m.close();
    }
  }
  table_end(m);
  m.element("p",
            "Gains as the measurements report them (their interval where paired per trial); accuracy as the gate decides it: the "
            "ratio with its one-sided " + fixed(100 * (1 - c.options.alpha), 1) + "% bounds against the margin.",
            {{"class", "note"}});
  m.close().newline();
}

}  // namespace kvgate::reports
