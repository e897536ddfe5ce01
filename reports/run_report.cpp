#include "reports/run_report.h"

#include <algorithm>
#include <cmath>

#include "harness/compare/number_format.h"
#include "harness/compare/run_index.h"
#include "harness/core/version.h"
#include "reports/depth_grid.h"
#include "reports/html_page.h"
#include "reports/run_facts.h"
#include "harness/stats/auc.h"
#include "harness/stats/clustered_variance.h"
#include "harness/stats/normal.h"
#include "harness/stats/proportion_ci.h"
#include "reports/svg_charts.h"

namespace kvgate::reports {

using compare::fixed;

namespace {

struct Acc {
  std::size_t results = 0, passes = 0, errors = 0;
  std::vector<double> trial_means;
  void finish(RunRates& r, double alpha) const {
    r.results = results, r.passes = passes, r.errors = errors, r.trials = trial_means.size();
    r.pass_rate = results ? static_cast<double>(passes) / static_cast<double>(results) : 0.0;
    if (results) r.wilson = stats::wilson(static_cast<std::int64_t>(passes), static_cast<std::int64_t>(results), alpha);
    if (!trial_means.empty()) {
      r.score_mean = stats::mean(trial_means);
      r.score_se = stats::se_clt(trial_means);
    }
  }
};

}  // namespace

RunSummary summarize_run(const std::shared_ptr<const RunDir>& run, double alpha) {
  const compare::IndexedRun index = compare::index_run(run);
  RunSummary s;
  s.duplicates = index.duplicates.size();
  std::map<std::string, std::pair<Acc, std::map<std::int64_t, Acc>>> acc;
  std::map<std::string, RunTaskSummary> tasks;
  // Keys are sorted by (id, repeat): the repeats of a trial are adjacent.
  for (std::size_t i = 0; i < index.keys.size();) {
    const ResultRecord& first = index.record(index.keys[i].record);
    RunTaskSummary& t = tasks[first.task];
    t.task = first.task;
    auto& [all, by_bucket] = acc[first.task];
    Acc& bucket = by_bucket[first.bucket];
    double sum = 0;
    std::size_t n = 0;
    for (; i < index.keys.size() && index.keys[i].id == first.id; ++i, ++n) {
      const ResultRecord& r = index.record(index.keys[i].record);
      const double score = r.error ? 0.0 : r.score;
      t.binary = t.binary && (score == 0.0 || score == 1.0);
      sum += score;
      for (Acc* a : {&all, &bucket}) {
        ++a->results;
        a->passes += r.passed && !r.error;
        a->errors += r.error.has_value();
      }
      if (r.error) ++t.error_messages[r.error->substr(0, 160)];
    }
    t.max_repeats = std::max(t.max_repeats, static_cast<int>(n));
    all.trial_means.push_back(sum / static_cast<double>(n));
    bucket.trial_means.push_back(sum / static_cast<double>(n));
  }
  for (auto& [name, t] : tasks) {
    auto& [all, by_bucket] = acc[name];
    all.finish(t.all, alpha);
    std::vector<double> x, y;
    for (auto& [b, a] : by_bucket) {
      RunRates r{.bucket = b};
      a.finish(r, alpha);
      t.buckets.push_back(r);
      x.push_back(static_cast<double>(b));
      y.push_back(r.score_mean);
    }
    if (t.buckets.size() > 1 && t.buckets.front().bucket > 0) t.auc = stats::auc(x, y, stats::AucAxis::linear);
    s.tasks.push_back(std::move(t));
  }
  return s;
}

namespace {

void rates_chart(Markup& m, const RunTaskSummary& t, double alpha, const std::string& label) {
  const bool lengths = t.buckets.size() > 1 || t.buckets.front().bucket != 0;
  const bool wilson = t.binary && t.max_repeats == 1;
  LineChart chart{.title = t.task + ": " + (t.binary ? "pass rate" : "mean score") + (lengths ? " by context length" : "")};
  chart.y = {.title = t.binary ? "pass rate" : "mean score", .min = 0, .max = 1,
             .ticks = {{0, "0"}, {0.2, "0.2"}, {0.4, "0.4"}, {0.6, "0.6"}, {0.8, "0.8"}, {1.0, "1"}}};
  Series s{.name = label, .colour = 0};
  const double z = stats::z_upper(alpha / 2);
  for (std::size_t i = 0; i < t.buckets.size(); ++i) {
    const RunRates& r = t.buckets[i];
    stats::Interval iv = r.wilson;
    if (!wilson) {
      iv = {std::max(0.0, r.score_mean - z * r.score_se), std::min(1.0, r.score_mean + z * r.score_se)};
    }
    s.x.push_back(lengths ? static_cast<double>(r.bucket) : static_cast<double>(i));
    s.y.push_back(r.score_mean);
    s.lo.push_back(iv.lo);
    s.hi.push_back(iv.hi);
  }
  if (lengths) {
    const double lo = static_cast<double>(t.buckets.front().bucket), hi = static_cast<double>(t.buckets.back().bucket);
    chart.x = {.title = "context length (tokens)", .min = lo, .max = hi, .log2 = hi >= 4 * lo};
    if (lo == hi) chart.x.min = lo / 2, chart.x.max = hi * 2, chart.x.log2 = true;
    for (const RunRates& r : t.buckets) chart.x.ticks.push_back({static_cast<double>(r.bucket), token_label(r.bucket)});
  } else {
    chart.x = {.title = "run", .min = -0.6, .max = 0.6, .ticks = {{0, label}}};
    s.connect = false;
    chart.height = 240;
  }
  chart.series.push_back(s);
  m.open("figure");
  m.raw(render_svg(chart));
  m.element("figcaption", std::string("Bands: two-sided ") + fixed(100 * (1 - alpha), 0) + "% " +
                              (wilson ? "Wilson intervals of the pass rate." : "normal intervals of the mean score (CLT over trials)."));
  m.close();
}

}  // namespace

std::string render_run_html(const RunDir& run, const RunSummary& s, const ReportContext& ctx, double alpha) {
  const RunFacts f = run_facts(run.manifest);
  const std::string label = f.label.empty() ? run.path : f.label;
  Markup m;
  std::size_t results = 0, errors = 0;
  for (const RunTaskSummary& t : s.tasks) results += t.all.results, errors += t.all.errors;
  m.open("section", {{"class", "banner neutral"}, {"id", "summary"}});
  m.element("p", "One run", {{"class", "verdict"}});
  m.element("p", std::to_string(results) + " results over " + std::to_string(s.tasks.size()) + " task" + (s.tasks.size() == 1 ? "" : "s") +
                     "; " + std::to_string(errors) + " errors (" + compare::percent(results ? double(errors) / double(results) : 0.0, 1) + ").",
            {{"class", "headline"}});
  m.element("p", "No verdict: a verdict needs a baseline. kvgate report BASELINE_DIR CANDIDATE_DIR --html F (or kvgate compare) gates a candidate.",
            {{"class", "note"}});
  m.close();
  table_head(m, {{"task"}, {"trials", true}, {"results", true}, {"pass rate", true}, {"Wilson interval", true}, {"mean score", true},
                 {"AUC", true, "linear token axis over the length buckets"}, {"errors", true}});
  for (const RunTaskSummary& t : s.tasks) {
    m.open("tr");
    cell(m, t.task);
    cell(m, std::to_string(t.all.trials), true);
    cell(m, std::to_string(t.all.results), true);
    cell(m, fixed(t.all.pass_rate, 3), true);
    cell(m, "[" + fixed(t.all.wilson.lo, 3) + ", " + fixed(t.all.wilson.hi, 3) + "]", true);
    cell(m, fixed(t.all.score_mean, 3) + " \u00b1 " + fixed(t.all.score_se, 3), true);
    cell(m, t.auc ? fixed(*t.auc, 3) : "\u2013", true);
    cell(m, std::to_string(t.all.errors), true);
    m.close();
  }
  table_end(m);
  if (s.duplicates) m.element("p", std::to_string(s.duplicates) + " lines repeat an earlier (id, repeat); the first of each counts.", {{"class", "callout"}});
  for (std::size_t i = 0; i < s.tasks.size(); ++i) {
    const RunTaskSummary& t = s.tasks[i];
    m.open("section", {{"class", "task"}, {"id", anchor("task", t.task, i)}});
    m.element("h2", t.task);
    table_head(m, {{"length"}, {"trials", true}, {"results", true}, {"passes", true}, {"pass rate", true},
                   {"Wilson " + fixed(100 * (1 - alpha), 0) + "%", true}, {"mean score", true}, {"SE", true}, {"errors", true}});
    for (const RunRates& r : t.buckets) {
      m.open("tr");
      cell(m, token_label(r.bucket));
      cell(m, std::to_string(r.trials), true);
      cell(m, std::to_string(r.results), true);
      cell(m, std::to_string(r.passes), true);
      cell(m, fixed(r.pass_rate, 3), true);
      cell(m, "[" + fixed(r.wilson.lo, 3) + ", " + fixed(r.wilson.hi, 3) + "]", true);
      cell(m, fixed(r.score_mean, 3), true);
      cell(m, fixed(r.score_se, 3), true);
      cell(m, std::to_string(r.errors), true);
      m.close();
    }
    table_end(m);
    rates_chart(m, t, alpha, label);
    const DepthGrid g = depth_grid({&run}, t.task);
    if (!g.empty()) {
      std::vector<std::string> cols;
      for (std::int64_t b : g.buckets) cols.push_back(token_label(b));
      m.element("h3", "Needle depth \u00d7 context length");
      m.raw(render_svg(Heatmap{.title = label, .x_title = "context length (tokens)", .y_title = "needle depth", .columns = cols,
                               .rows = g.row_labels, .values = g.runs[0].mean}));
      m.element("p", "Cells: mean score in percent (errors score 0); red is failure.", {{"class", "note"}});
    }
    if (!t.error_messages.empty()) {
      m.element("h3", "Errors");
      table_head(m, {{"message"}, {"results", true}});
      for (const auto& [msg, n] : t.error_messages) {
        m.open("tr");
        cell(m, msg, false, "mono");
        cell(m, std::to_string(n), true);
        m.close();
      }
      table_end(m);
    }
    m.close();
  }
  m.open("section", {{"id", "metadata"}});
  m.element("h2", "Run metadata");
  table_head(m, {{"field"}, {label}});
  m.open("tr");
  cell(m, "directory");
  cell(m, run.path, false, "mono");
  m.close();
  for (const auto& [k, v] : fact_rows(f)) {
    m.open("tr");
    cell(m, k);
    cell(m, v.empty() ? "\u2013" : v);
    m.close();
  }
  table_end(m);
  m.close();
  PageOptions page{.title = "kvgate: run " + label,
                   .subtitle = engine_name(f).empty() && f.model.empty() ? "" : engine_name(f) + (f.model.empty() ? "" : " \u00b7 " + f.model) +
                                                                               (f.kv_format.empty() ? "" : " \u00b7 KV " + f.kv_format),
                   .generated_at = generated_at(ctx),
                   .footer = std::string("kvgate ") + version() + " (" + git_commit() + ")" + (ctx.command.empty() ? "" : "; command: " + ctx.command)};
  return html_page(page, m.str());
}

}  // namespace kvgate::reports
