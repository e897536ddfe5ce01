// The history page (`kvgate history report`): per series (model, KV formats) and task, the metric
// and the ratio over the nights, points per engine version, the night each regression entered.
#include <algorithm>
#include <map>

#include "harness/compare/number_format.h"
#include "harness/core/version.h"
#include "reports/history.h"
#include "reports/html_page.h"
#include "reports/svg_charts.h"

namespace kvgate::reports {

using compare::fixed;

namespace {

struct Night {
  const HistoryRow* row;
  const HistoryTask* task;  // nullptr: the task was not in that night's comparison
};

std::string version_of(const HistoryRow& r) {
  const std::string v = r.engine_version.empty() ? "version ?" : r.engine_version;
  return r.engine.empty() ? v : r.engine + " " + v;
}

std::vector<Tick> night_ticks(const std::vector<Night>& nights) {
  std::vector<Tick> ticks;
  const std::size_t step = std::max<std::size_t>(1, (nights.size() + 7) / 8);
  for (std::size_t i = 0; i < nights.size(); i += step) ticks.push_back({static_cast<double>(i), nights[i].row->date});
  return ticks;
}

// Indices of the nights where the task turned into a regression (FAIL or a Holm-flagged bucket).
std::vector<std::size_t> regression_entries(const std::vector<Night>& nights) {
  std::vector<std::size_t> out;
  bool before = false;
  for (std::size_t i = 0; i < nights.size(); ++i) {
    const bool now = nights[i].task && nights[i].task->regression();
    if (now && !before && i > 0) out.push_back(i);
    before = now;
  }
  return out;
}

void task_charts(Markup& m, const std::vector<Night>& nights, const std::string& task, const std::vector<std::string>& versions) {
  const auto colour = [&](const HistoryRow& r) {
    return 1 + static_cast<int>(std::find(versions.begin(), versions.end(), version_of(r)) - versions.begin());
  };
  const double n = static_cast<double>(nights.size());
  const Axis x{.title = "night", .min = nights.size() > 1 ? 0.0 : -0.6, .max = nights.size() > 1 ? n - 1 : 0.6, .ticks = night_ticks(nights)};
  std::vector<VMarker> markers;
  for (std::size_t i : regression_entries(nights))
    markers.push_back({static_cast<double>(i), "regression entered " + nights[i].row->date + " (" + version_of(*nights[i].row) + ")"});

  LineChart metric{.title = task + ": metric over the nights", .x = x};
  metric.y = {.title = "metric (AUC or mean score)", .min = 0, .max = 1,
              .ticks = {{0, "0"}, {0.2, "0.2"}, {0.4, "0.4"}, {0.6, "0.6"}, {0.8, "0.8"}, {1.0, "1"}}};
  Series base{.name = "baseline", .colour = 0, .dashed = true};
  std::map<int, Series> by_version;
  for (std::size_t i = 0; i < nights.size(); ++i) {
    if (!nights[i].task) continue;
    const HistoryTask& t = *nights[i].task;
    base.x.push_back(static_cast<double>(i));
    base.y.push_back(t.reference_metric);
    base.point_titles.push_back(nights[i].row->date + " baseline " + nights[i].row->baseline + ": " + fixed(t.reference_metric, 4));
    Series& s = by_version[colour(*nights[i].row)];
    s.name = version_of(*nights[i].row);
    s.colour = colour(*nights[i].row);
    s.x.push_back(static_cast<double>(i));
    s.y.push_back(t.candidate_metric);
    s.point_titles.push_back(nights[i].row->date + " " + s.name + ": " + fixed(t.candidate_metric, 4) + " (" + t.verdict + ")");
  }
  metric.series.push_back(base);
  for (auto& [k, s] : by_version) metric.series.push_back(s);
  metric.markers = markers;

  LineChart ratio{.title = task + ": candidate / baseline over the nights", .x = x};
  double lo = nights.empty() ? 0.9 : nights[0].row->margin, hi = 1.0;
  for (const Night& nt : nights)
    if (nt.task && nt.task->ratio) {
      lo = std::min(lo, nt.task->lcb.value_or(*nt.task->ratio));
      hi = std::max(hi, std::min(1.5, nt.task->ucb.value_or(*nt.task->ratio)));
    }
  lo = std::max(0.0, lo - 0.03), hi = hi + 0.02;
  ratio.y = {.title = "ratio with one-sided bounds", .min = lo, .max = hi};
  std::map<int, Series> ratios;
  for (std::size_t i = 0; i < nights.size(); ++i) {
    if (!nights[i].task || !nights[i].task->ratio) continue;
    const HistoryTask& t = *nights[i].task;
    Series& s = ratios[colour(*nights[i].row)];
    s.name = version_of(*nights[i].row);
    s.colour = colour(*nights[i].row);
    s.x.push_back(static_cast<double>(i));
    s.y.push_back(*t.ratio);
    s.lo.push_back(std::clamp(t.lcb.value_or(*t.ratio), lo, hi));
    s.hi.push_back(std::clamp(t.ucb.value_or(hi), lo, hi));
    s.point_titles.push_back(nights[i].row->date + " " + s.name + ": ratio " + fixed(*t.ratio, 4) + " [" + (t.lcb ? fixed(*t.lcb, 4) : "-") +
                             ", " + (t.ucb ? fixed(*t.ucb, 4) : "unbounded") + "] " + t.verdict);
  }
  for (auto& [k, s] : ratios) ratio.series.push_back(s);
  ratio.hlines.push_back({nights.empty() ? 0.95 : nights.back().row->margin, "margin " + fixed(nights.empty() ? 0.95 : nights.back().row->margin, 3)});
  ratio.markers = markers;
  metric.width = ratio.width = 500;
  m.open("div", {{"class", "multiples"}});
  m.raw(render_svg(metric));
  m.raw(render_svg(ratio));
  m.close();
}

void nights_table(Markup& m, const std::vector<Night>& nights) {
  const auto entries = regression_entries(nights);
  table_head(m, {{"night"}, {"engine"}, {"candidate"}, {"baseline"}, {"metric", true}, {"ratio", true}, {"lower", true}, {"upper", true},
                 {"lost", true}, {"gained", true}, {"regressed buckets"}, {"verdict"}});
  for (std::size_t i = nights.size(); i-- > 0;) {  // newest first
    const Night& nt = nights[i];
    const bool entered = std::find(entries.begin(), entries.end(), i) != entries.end();
    m.open("tr", entered ? std::vector<Attr>{{"class", "flagged"}} : std::vector<Attr>{});
    cell(m, nt.row->date + (entered ? " (regression entered)" : ""));
    cell(m, version_of(*nt.row));
    cell(m, nt.row->candidate);
    cell(m, nt.row->baseline);
    if (!nt.task) {
      m.open("td", {{"colspan", "8"}, {"class", "muted"}}).text("task not in this night's comparison").close();
      m.close();
      continue;
    }
    const HistoryTask& t = *nt.task;
    cell(m, fixed(t.candidate_metric, 4), true);
    cell(m, t.ratio ? fixed(*t.ratio, 4) : "\u2013", true);
    cell(m, t.lcb ? fixed(*t.lcb, 4) : "\u2013", true);
    cell(m, t.ucb ? fixed(*t.ucb, 4) : (t.ratio ? "unbounded" : "\u2013"), true);
    cell(m, std::to_string(t.lost), true);
    cell(m, std::to_string(t.gained), true);
    std::string buckets;
    for (std::int64_t b : t.regressed_buckets) buckets += (buckets.empty() ? "" : ", ") + token_label(b);
    cell(m, buckets);
    m.open("td");
    badge(m, t.verdict, t.verdict == "PASS" ? "pass" : t.verdict == "FAIL" ? "fail" : "inconclusive");
    m.close();
    m.close();
  }
  table_end(m);
}

std::string ratio_cell(const std::optional<double>& r, const std::optional<double>& lo = {}, const std::optional<double>& hi = {}) {
  if (!r) return "\u2013";
  std::string s = "\u00d7" + fixed(*r, 2);
  if (lo && hi) s += " [" + fixed(*lo, 2) + ", " + fixed(*hi, 2) + "]";
  return s;
}

// What each night's candidate gained or lost in speed and capacity, so an engine upgrade
// that slows decoding shows on the same page as its accuracy; and what was not pinned that night.
void speed_section(Markup& m, const std::vector<const HistoryRow*>& v) {
  bool any = false;
  for (const HistoryRow* r : v) any = any || r->gains.any() || !r->pinning_differences.empty();
  if (!any) return;
  m.element("h3", "Speed and capacity");
  std::vector<Night> nights;
  for (const HistoryRow* r : v) nights.push_back({r, nullptr});
  const double n = static_cast<double>(nights.size());
  LineChart chart{.title = "inter-token latency and time to first token, candidate / baseline over the nights",
                  .x = {.title = "night", .min = nights.size() > 1 ? 0.0 : -0.6, .max = nights.size() > 1 ? n - 1 : 0.6,
                        .ticks = night_ticks(nights)}};
  double lo = 1.0, hi = 1.0;
  Series itl{.name = "ITL", .colour = 1}, ttft{.name = "TTFT", .colour = 2};
  for (std::size_t i = 0; i < v.size(); ++i) {
    const HistoryGains& g = v[i]->gains;
    const auto add = [&](Series& s, const std::optional<double>& r, const std::optional<double>& l, const std::optional<double>& h,
                         const char* name) {
      if (!r) return;
      s.x.push_back(static_cast<double>(i));
      s.y.push_back(*r);
      s.lo.push_back(l.value_or(*r));
      s.hi.push_back(h.value_or(*r));
      lo = std::min(lo, l.value_or(*r));
      hi = std::max(hi, h.value_or(*r));
      s.point_titles.push_back(v[i]->date + " " + version_of(*v[i]) + ": " + name + " " + ratio_cell(r, l, h));
    };
    add(itl, g.itl_ratio, g.itl_lo, g.itl_hi, "ITL");
    add(ttft, g.ttft_ratio, g.ttft_lo, g.ttft_hi, "TTFT");
  }
  if (!itl.x.empty() || !ttft.x.empty()) {
    const double pad = std::max(0.05, (hi - lo) * 0.1);
    chart.y = {.title = "candidate / baseline (below 1 is faster)", .min = std::max(0.0, lo - pad), .max = hi + pad};
    for (Series* s : {&itl, &ttft})
      if (!s->x.empty()) chart.series.push_back(*s);
    chart.hlines.push_back({1.0, "no change"});
    chart.width = 500;
    m.open("figure");
    m.raw(render_svg(chart));
    m.close();
  }
  table_head(m, {{"night"}, {"engine"}, {"KV capacity", true}, {"ITL", true}, {"TTFT", true}, {"E2E latency", true},
                 {"output tokens/s", true}, {"not pinned"}});
  for (std::size_t i = v.size(); i-- > 0;) {  // newest first
    const HistoryRow& r = *v[i];
    const HistoryGains& g = r.gains;
    m.open("tr");
    cell(m, r.date);
    cell(m, version_of(r));
    cell(m, ratio_cell(g.kv_capacity_ratio) + (g.kv_capacity_ratio && g.kv_capacity_estimate ? " (estimate)" : ""), true);
    cell(m, ratio_cell(g.itl_ratio, g.itl_lo, g.itl_hi), true);
    cell(m, ratio_cell(g.ttft_ratio, g.ttft_lo, g.ttft_hi), true);
    cell(m, ratio_cell(g.e2e_ratio, g.e2e_lo, g.e2e_hi), true);
    cell(m, ratio_cell(g.tokens_per_s_ratio), true);
    std::string diffs;
    for (const std::string& d : r.pinning_differences) diffs += (diffs.empty() ? "" : "; ") + d;
    cell(m, diffs.empty() ? "\u2013" : diffs, false, diffs.empty() ? "" : "suspect");
    m.close();
  }
  table_end(m);
}

}  // namespace

std::string render_history_html(const std::vector<HistoryRow>& rows, const std::string& db, const std::string& generated_at) {
  std::map<std::string, std::vector<const HistoryRow*>> series;
  for (const HistoryRow& r : rows) series[r.series()].push_back(&r);
  for (auto& [name, v] : series)
    std::stable_sort(v.begin(), v.end(), [](const HistoryRow* a, const HistoryRow* b) {
      return a->date != b->date ? a->date < b->date : a->recorded_at < b->recorded_at;
    });

  // The banner says the worst of the latest nights: FAIL over INCONCLUSIVE over PASS.
  std::string worst = "PASS";
  for (const auto& [name, v] : series) {
    const std::string& l = v.back()->verdict;
    if (l == "FAIL" || (l == "INCONCLUSIVE" && worst == "PASS")) worst = l;
  }
  const std::string cls = worst == "PASS" ? "pass" : worst == "FAIL" ? "fail" : "inconclusive";
  Markup m;
  m.open("section", {{"class", "banner " + cls}, {"id", "latest"}});
  m.element("p", worst, {{"class", "verdict"}});
  m.element("p", "The latest night of each series, over " + std::to_string(rows.size()) + " comparisons in " + std::to_string(series.size()) +
                     " series.",
            {{"class", "headline"}});
  m.open("ul");
  for (const auto& [name, v] : series) {
    const HistoryRow& last = *v.back();
    m.open("li");
    badge(m, last.verdict, last.verdict == "PASS" ? "pass" : last.verdict == "FAIL" ? "fail" : "inconclusive");
    m.text(" ");
    m.element("strong", name);
    m.text(": latest night " + last.date + " with " + version_of(last));
    std::vector<std::string> open;
    for (const HistoryTask& t : last.tasks) {
      if (!t.regression()) continue;
      // Walk back to the night this regression entered.
      std::string since = v.front()->date + " or earlier";
      for (std::size_t i = v.size(); i-- > 0;) {
        const auto it = std::find_if(v[i]->tasks.begin(), v[i]->tasks.end(), [&](const HistoryTask& x) { return x.task == t.task; });
        if (it == v[i]->tasks.end() || !it->regression()) break;
        since = v[i]->date + " (" + version_of(*v[i]) + ")";
        if (i == 0) since = v[0]->date + " (the first night recorded) or earlier";
      }
      open.push_back(t.task + " regressed since " + since);
    }
    if (!open.empty()) {
      m.text("; ");
      for (std::size_t i = 0; i < open.size(); ++i) m.text((i ? "; " : "") + open[i]);
    }
    m.close();
  }
  m.close().close().newline();

  std::size_t index = 0;
  for (const auto& [name, v] : series) {
    m.open("section", {{"class", "series"}, {"id", anchor("series", name, index++)}});
    m.element("h2", name);
    std::vector<std::string> versions, tasks;
    for (const HistoryRow* r : v) {
      if (std::find(versions.begin(), versions.end(), version_of(*r)) == versions.end()) versions.push_back(version_of(*r));
      for (const HistoryTask& t : r->tasks)
        if (std::find(tasks.begin(), tasks.end(), t.task) == tasks.end()) tasks.push_back(t.task);
    }
    std::sort(tasks.begin(), tasks.end());
    m.element("p", std::to_string(v.size()) + " nights from " + v.front()->date + " to " + v.back()->date + "; engine versions: " +
                       [&] {
                         std::string s;
                         for (const std::string& x : versions) s += (s.empty() ? "" : ", ") + x;
                         return s;
                       }(),
              {{"class", "muted"}});
    speed_section(m, v);
    for (const std::string& task : tasks) {
      std::vector<Night> nights;
      for (const HistoryRow* r : v) {
        const auto it = std::find_if(r->tasks.begin(), r->tasks.end(), [&](const HistoryTask& t) { return t.task == task; });
        nights.push_back({r, it == r->tasks.end() ? nullptr : &*it});
      }
      m.element("h3", task);
      task_charts(m, nights, task, versions);
      nights_table(m, nights);
    }
    m.close().newline();
  }
  m.element("p",
            "Each night compares that night's candidate with its baseline. Points: the candidate's metric (AUC over context lengths, "
            "else the mean score) and its ratio to the baseline with one-sided bounds, coloured by engine version. A red dashed line "
            "marks the night a task turned into a regression (FAIL, or a bucket flagged by Holm) after a night without one.",
            {{"class", "note"}});
  PageOptions page{.title = "kvgate: nightly history", .subtitle = db, .generated_at = generated_at,
                   .footer = std::string("kvgate ") + version() + " (" + git_commit() + "); history schema " + kHistorySchema};
  return html_page(page, m.str());
}

}  // namespace kvgate::reports
