// One task of the comparison page: verdicts, numbers, accuracy vs context length, flip tables,
// the NIAH depth x length heatmaps, then the per-problem, findings and lost-trial blocks.
#include <algorithm>
#include <cmath>

#include "harness/compare/number_format.h"
#include "harness/compare/verdict.h"
#include "reports/depth_grid.h"
#include "reports/html_page.h"
#include "reports/html_sections.h"
#include "harness/stats/normal.h"
#include "reports/svg_charts.h"

namespace kvgate::reports {

using compare::BucketComparison;
using compare::Comparison;
using compare::fixed;
using compare::p_value;
using compare::PairComparison;
using compare::SideStats;
using compare::TaskComparison;

namespace {

bool has_lengths(const TaskComparison& t) { return t.buckets.size() > 1 || (t.buckets.size() == 1 && t.buckets[0].bucket != 0); }

// A confidence band of one side of a bucket: Wilson for binary single-sample results (the interval
// the bucket's rate carries), else the clustered normal interval of the mean score.
stats::Interval band(const SideStats& s, const TaskComparison& t, double alpha) {
  if (t.binary && t.max_repeats == 1) return s.wilson;
  const double z = stats::z_upper(alpha / 2);
  return {std::max(0.0, s.score_mean - z * s.score_se), std::min(1.0, s.score_mean + z * s.score_se)};
}

std::string y_title(const TaskComparison& t) { return t.binary ? "pass rate" : "mean score"; }

void accuracy_chart(Markup& m, const Comparison& c, const TaskAcrossPairs& ta) {
  const TaskComparison& first = *ta.tasks[0];
  const double alpha = c.options.alpha;
  LineChart chart;
  chart.y = {.title = y_title(first), .min = 0.0, .max = 1.0,
             .ticks = {{0, "0"}, {0.2, "0.2"}, {0.4, "0.4"}, {0.6, "0.6"}, {0.8, "0.8"}, {1.0, "1"}}};
  const auto side_series = [&](const TaskComparison& t, bool reference, const std::string& name, int colour, double x_of_single) {
    Series s{.name = name, .colour = colour};
    for (const BucketComparison& b : t.buckets) {
      const SideStats& side = reference ? b.reference : b.candidate;
      const stats::Interval iv = band(side, t, alpha);
      s.x.push_back(has_lengths(t) ? static_cast<double>(b.bucket) : x_of_single);
      s.y.push_back(side.score_mean);
      s.lo.push_back(iv.lo);
      s.hi.push_back(iv.hi);
      s.point_titles.push_back(name + (has_lengths(t) ? " at " + token_label(b.bucket) : std::string()) + ": " + fixed(side.score_mean, 3) +
                               " [" + fixed(iv.lo, 3) + ", " + fixed(iv.hi, 3) + "] over " + std::to_string(side.results) + " results");
    }
    return s;
  };
  std::vector<LineChart> panels;
  if (has_lengths(first)) {
    std::int64_t lo = first.buckets.front().bucket, hi = first.buckets.back().bucket;
    chart.title = ta.task + ": " + y_title(first) + " by context length";
    chart.x = {.title = "context length (tokens)", .min = static_cast<double>(lo), .max = static_cast<double>(hi)};
    chart.x.log2 = hi >= 4 * lo;
    for (const BucketComparison& b : first.buckets) chart.x.ticks.push_back({static_cast<double>(b.bucket), token_label(b.bucket)});
    if (lo == hi) chart.x.min = lo / 2.0, chart.x.max = hi * 2.0, chart.x.log2 = true;
    // The baseline dashed (drawn on top: it stays visible where a candidate lies on it). With several
    // candidates, small multiples: one panel per candidate against the baseline, bands readable.
    Series base = side_series(first, true, run_label(c, ta.pairs[0]->reference), 0, 0);
    base.dashed = true;
    for (std::size_t k = 0; k < ta.tasks.size(); ++k) {
      if (ta.tasks.size() > 1 || k == 0) {
        panels.push_back(chart);
        panels.back().series.push_back(base);
      }
      if (ta.tasks.size() > 1) {
        panels.back().title = ta.task + ": " + run_label(c, ta.pairs[k]->candidate) + " vs " + run_label(c, ta.pairs[k]->reference) + ", " +
                              y_title(first) + " by context length";
        panels.back().width = 470;
      }
      panels.back().series.push_back(side_series(*ta.tasks[k], false, run_label(c, ta.pairs[k]->candidate), static_cast<int>(k) + 1, 0));
    }
  } else {
    chart.title = ta.task + ": " + y_title(first) + " by run";
    chart.x = {.title = "run", .min = -0.6, .max = static_cast<double>(ta.tasks.size()) + 0.6};
    chart.x.ticks.push_back({0, run_label(c, ta.pairs[0]->reference)});
    Series base = side_series(first, true, run_label(c, ta.pairs[0]->reference), 0, 0);
    base.connect = false;
    chart.series.push_back(base);
    for (std::size_t k = 0; k < ta.tasks.size(); ++k) {
      chart.x.ticks.push_back({static_cast<double>(k + 1), run_label(c, ta.pairs[k]->candidate)});
      Series s = side_series(*ta.tasks[k], false, run_label(c, ta.pairs[k]->candidate), static_cast<int>(k) + 1, static_cast<double>(k + 1));
      s.connect = false;
      chart.series.push_back(s);
    }
    chart.height = 260;
  }
  if (panels.empty()) panels.push_back(chart);
  m.open("figure");
  m.open("div", {{"class", "multiples"}});
  for (const LineChart& p : panels) m.raw(render_svg(p));
  m.close();
  const bool wilson = first.binary && first.max_repeats == 1;
  m.element("figcaption", std::string("Bands: two-sided ") + fixed(100 * (1 - alpha), 0) + "% " +
                              (wilson ? "Wilson intervals of each bucket's pass rate." : "normal intervals of each bucket's mean score (clustered standard errors).") +
                              (first.metric == "auc" ? " The gated metric is the area under this curve (" + first.auc->axis + " token axis)." : ""));
  m.close();
}

void numbers_table(Markup& m, const Comparison& c, const TaskAcrossPairs& ta) {
  const std::string conf = fixed(100 * (1 - c.options.alpha), 0) + "%";
  const TaskComparison& first = *ta.tasks[0];
  const std::string metric = first.metric == "auc" ? "AUC" : "mean score";
  table_head(m, {{"candidate"},
                 {run_label(c, 0) + " " + metric, true},
                 {"candidate " + metric, true},
                 {"ratio", true, "candidate / baseline of the gated metric"},
                 {"lower", true, "one-sided " + conf + " lower bound: PASS needs it above the margin"},
                 {"upper", true, "one-sided " + conf + " upper bound: FAIL when below the margin"},
                 {"method"},
                 {"lost", true, "results the baseline passed and the candidate failed"},
                 {"gained", true, "results the baseline failed and the candidate passed"},
                 {"McNemar p", true, "two-sided exact (mid-p in the tooltip)"},
                 {"trials", true},
                 {"verdict"}});
  for (std::size_t k = 0; k < ta.tasks.size(); ++k) {
    const TaskComparison& t = *ta.tasks[k];
    const bool defined = t.reference_metric > 0;
    m.open("tr");
    cell(m, run_label(c, ta.pairs[k]->candidate));
    cell(m, fixed(t.reference_metric, 4), true);
    cell(m, fixed(t.candidate_metric, 4), true);
    cell(m, defined ? fixed(t.ratio_estimate, 4) : "\u2013", true);
    cell(m, defined ? fixed(t.ratio.lcb, 4) : "\u2013", true);
    cell(m, defined ? (t.ratio.ucb ? fixed(*t.ratio.ucb, 4) : "unbounded") : "\u2013", true);
    cell(m, t.ratio.method);
    cell(m, std::to_string(t.flips.lost), true);
    cell(m, std::to_string(t.flips.gained), true);
    m.open("td", {{"class", "num"}, {"title", "mid-p " + p_value(t.flips.mcnemar.midp)}}).text(p_value(t.flips.mcnemar.exact)).close();
    cell(m, std::to_string(t.trials), true);
    m.open("td");
    badge(m, t.verdict);
    m.close();
    m.close();
  }
  table_end(m);
  for (std::size_t k = 0; k < ta.tasks.size(); ++k) {
    const TaskComparison& t = *ta.tasks[k];
    if (!(t.reference_metric > 0)) continue;
    std::string line = (ta.tasks.size() > 1 ? run_label(c, ta.pairs[k]->candidate) + ": " : std::string()) + "difference " +
                       fixed(t.difference.estimate, 4) + " [" + fixed(t.difference.interval.lo, 4) + ", " +
                       fixed(t.difference.interval.hi, 4) + "] (" + t.difference.method + ", two-sided " +
                       fixed(100 * (1 - c.options.alpha), 0) + "%); point estimate \u2265 margin (the seed articles' rule, not a test): " +
                       (t.point_rule.passes ? "yes" : "no") + "; the gate resolves ratios beyond " + fixed(c.options.margin, 2) +
                       " \u00b1 " + fixed(t.power.mde_ratio, 3) + " at this n";
    for (const compare::RatioBound& x : t.cross_checks)
      line += "; " + x.method + " [" + fixed(x.lcb, 4) + ", " + (x.ucb ? fixed(*x.ucb, 4) : std::string("unbounded")) + "]";
    if (t.auc) line += "; AUC over " + std::to_string(t.auc->x.size()) + " buckets, " + t.auc->axis + " axis";
    m.element("p", line + ".", {{"class", "note"}});
  }
}

void flip_table(Markup& m, const Comparison& c, const PairComparison& p, const TaskComparison& t) {
  const std::string conf = fixed(100 * (1 - c.options.alpha), 0) + "%";
  const bool lengths = has_lengths(t);
  table_head(m, {{lengths ? "length" : "bucket"},
                 {"trials", true},
                 {run_label(c, p.reference), true, "score mean, with its two-sided " + conf + " Wilson interval of the pass rate"},
                 {run_label(c, p.candidate), true, "score mean, with its two-sided " + conf + " Wilson interval of the pass rate"},
                 {"ratio", true},
                 {"lost", true},
                 {"gained", true},
                 {"McNemar p", true, "two-sided exact"},
                 {"mid-p", true},
                 {"Holm p", true, "one-sided regression test, Holm-adjusted over every bucket of every task of this pair"},
                 {"regression"}});
  for (const BucketComparison& b : t.buckets) {
    m.open("tr", b.regression ? std::vector<Attr>{{"class", "flagged"}} : std::vector<Attr>{});
    cell(m, token_label(b.bucket));
    cell(m, std::to_string(b.trials), true);
    const auto side = [&](const SideStats& s) {
      return fixed(s.score_mean, 3) + (t.binary && t.max_repeats == 1 ? " [" + fixed(s.wilson.lo, 2) + ", " + fixed(s.wilson.hi, 2) + "]" : "");
    };
    cell(m, side(b.reference), true);
    cell(m, side(b.candidate), true);
    cell(m, b.ratio ? fixed(*b.ratio, 3) : "\u2013", true);
    cell(m, std::to_string(b.flips.lost), true);
    cell(m, std::to_string(b.flips.gained), true);
    cell(m, p_value(b.flips.mcnemar.exact), true);
    cell(m, p_value(b.flips.mcnemar.midp), true);
    cell(m, p_value(b.holm_p), true);
    cell(m, b.regression ? "significant" : "");
    m.close();
  }
  table_end(m);
}

void heatmaps(Markup& m, const Comparison& c, const TaskAcrossPairs& ta) {
  std::vector<const RunDir*> runs;
  std::vector<std::size_t> run_index;
  runs.push_back(c.runs[ta.pairs[0]->reference].run.get());
  run_index.push_back(ta.pairs[0]->reference);
  for (const PairComparison* p : ta.pairs) {
    runs.push_back(c.runs[p->candidate].run.get());
    run_index.push_back(p->candidate);
  }
  for (const RunDir* r : runs)
    if (!r) return;
  const DepthGrid g = depth_grid(runs, ta.task);
  if (g.empty()) return;
  std::vector<std::string> cols;
  for (std::int64_t b : g.buckets) cols.push_back(token_label(b));
  const auto panel = [&](const std::string& title, const std::vector<std::optional<double>>& values, const std::vector<std::string>& tips,
                         HeatScale scale) {
    Heatmap h{.title = title, .x_title = "context length (tokens)", .y_title = "needle depth", .columns = cols, .rows = g.row_labels,
              .values = values, .cell_titles = tips, .scale = scale};
    if (cols.size() > 8) h.cell_width = 40;
    m.raw(render_svg(h));
  };
  m.element("h3", "Needle depth \u00d7 context length");
  m.open("div", {{"class", "multiples"}});
  for (std::size_t r = 0; r < runs.size(); ++r) {
    std::vector<std::string> tips;
    for (std::size_t i = 0; i < g.runs[r].mean.size(); ++i) {
      const std::size_t row = i / cols.size(), col = i % cols.size();
      tips.push_back(run_label(c, run_index[r]) + ", " + cols[col] + ", depth " + g.row_labels[row] + ": " +
                     (g.runs[r].mean[i] ? fixed(*g.runs[r].mean[i], 3) : std::string("no results")) + " over " +
                     std::to_string(g.runs[r].results[i]) + " results");
    }
    panel(run_label(c, run_index[r]), g.runs[r].mean, tips, HeatScale::accuracy);
  }
  for (std::size_t r = 1; r < runs.size(); ++r) {
    std::vector<std::optional<double>> diff(g.runs[0].mean.size());
    std::vector<std::string> tips(diff.size());
    for (std::size_t i = 0; i < diff.size(); ++i)
      if (g.runs[0].mean[i] && g.runs[r].mean[i]) {
        diff[i] = *g.runs[r].mean[i] - *g.runs[0].mean[i];
        tips[i] = run_label(c, run_index[r]) + " \u2212 " + run_label(c, run_index[0]) + ": " + fixed(*diff[i], 3);
      }
    panel(run_label(c, run_index[r]) + " \u2212 " + run_label(c, run_index[0]), diff, tips, HeatScale::difference);
  }
  m.close();
  m.element("p",
            "Cells: mean score in percent over every result of the run in that cell (errors score 0); red is failure. The "
            "difference panels show candidate minus baseline in points: red lost, blue gained. Depth: 0% is the start of the context.",
            {{"class", "note"}});
}

void accounting_line(Markup& m, const Comparison& c, const PairComparison& p, const TaskComparison& t) {
  const compare::Accounting& a = t.accounting;
  std::string s = std::to_string(a.paired_results) + " paired results over " + std::to_string(a.paired_trials) + " trials; errors: " +
                  run_label(c, p.reference) + " " + std::to_string(a.reference_errors) + " (" + compare::percent(a.reference_error_rate, 1) +
                  "), " + run_label(c, p.candidate) + " " + std::to_string(a.candidate_errors) + " (" +
                  compare::percent(a.candidate_error_rate, 1) + ")";
  if (a.excluded_results) s += "; " + std::to_string(a.excluded_results) + " pairs left out for errors";
  if (!a.missing_in_candidate.empty()) s += "; " + std::to_string(a.missing_in_candidate.size()) + " missing in " + run_label(c, p.candidate);
  if (!a.missing_in_reference.empty()) s += "; " + std::to_string(a.missing_in_reference.size()) + " missing in " + run_label(c, p.reference);
  if (!a.duplicates_reference.empty() || !a.duplicates_candidate.empty())
    s += "; duplicated lines: " + std::to_string(a.duplicates_reference.size()) + " / " + std::to_string(a.duplicates_candidate.size());
  m.element("p", s + ".", {{"class", "note"}});
}

}  // namespace

void task_section(Markup& m, const Comparison& c, const TaskAcrossPairs& ta, std::size_t index, const ReportContext& ctx) {
  m.open("section", {{"class", "task"}, {"id", anchor("task", ta.task, index)}});
  m.open("h2").text(ta.task + " ");
  for (const TaskComparison* t : ta.tasks) {
    badge(m, t->verdict);
    m.text(" ");
  }
  m.close();
  const TaskComparison& first = *ta.tasks[0];
  m.element("p",
            std::string(first.metric == "auc" ? "Gated on the area under " + y_title(first) + " vs context length" : "Gated on the " + y_title(first)) +
                " over " + std::to_string(first.trials) + " paired trials" +
                (first.max_repeats > 1 ? " (up to " + std::to_string(first.max_repeats) + " repeats each, averaged per trial)" : "") +
                (first.cluster_field ? ", clustered by the results' cluster field" : "") + ".",
            {{"class", "muted"}});
  for (std::size_t k = 0; k < ta.tasks.size(); ++k)
    for (const std::string& r : compare::reasons(*ta.tasks[k]))
      m.element("p", (ta.tasks.size() > 1 ? run_label(c, ta.pairs[k]->candidate) + ": " : std::string()) + r);
  numbers_table(m, c, ta);
  accuracy_chart(m, c, ta);
  for (std::size_t k = 0; k < ta.tasks.size(); ++k) {
    const PairComparison& p = *ta.pairs[k];
    const TaskComparison& t = *ta.tasks[k];
    m.element("h3", "Flips by " + std::string(has_lengths(t) ? "context length" : "bucket") + ": " + run_label(c, p.candidate) + " vs " +
                        run_label(c, p.reference));
    flip_table(m, c, p, t);
    accounting_line(m, c, p, t);
  }
  heatmaps(m, c, ta);
  for (std::size_t k = 0; k < ta.tasks.size(); ++k) {
    if (ta.tasks[k]->buckets.size() == 1) problem_flips_block(m, c, *ta.pairs[k], *ta.tasks[k], ctx);
    findings_block(m, c, *ta.pairs[k], *ta.tasks[k], ctx);
    lost_trials_block(m, c, *ta.pairs[k], *ta.tasks[k], ctx);
  }
  m.close().newline();
}

}  // namespace kvgate::reports
