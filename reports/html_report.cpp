#include "reports/html_report.h"

#include <algorithm>

#include "harness/compare/number_format.h"
#include "harness/compare/verdict.h"
#include "harness/core/version.h"
#include "reports/html_page.h"
#include "reports/html_sections.h"
#include "reports/report_top.h"
#include "reports/run_facts.h"
#include "reports/svg_charts.h"

namespace kvgate::reports {

using compare::Comparison;
using compare::fixed;
using compare::PairComparison;
using compare::TaskComparison;
using compare::Verdict;

const std::string& run_label(const Comparison& c, std::size_t i) { return c.runs[i].label; }

std::vector<TaskAcrossPairs> gated_tasks(const Comparison& c) {
  std::vector<TaskAcrossPairs> out;
  for (const PairComparison& p : c.pairs) {
    if (!p.gating) continue;
    for (const TaskComparison& t : p.tasks) {
      auto it = std::find_if(out.begin(), out.end(), [&](const TaskAcrossPairs& x) { return x.task == t.task; });
      if (it == out.end()) {
        out.push_back({.task = t.task});
        it = out.end() - 1;
      }
      it->pairs.push_back(&p);
      it->tasks.push_back(&t);
    }
  }
  return out;
}

namespace {

std::vector<const PairComparison*> gating_pairs(const Comparison& c) {
  std::vector<const PairComparison*> out;
  for (const PairComparison& p : c.pairs)
    if (p.gating) out.push_back(&p);
  return out;
}

std::string joined(const std::vector<std::string>& v, const std::string& sep) {
  std::string out;
  for (std::size_t i = 0; i < v.size(); ++i) out += (i ? sep : "") + v[i];
  return out;
}

// The one-sentence answer at the top of the page.
std::string headline(const Comparison& c) {
  std::vector<std::string> pass, fail, open;
  for (const PairComparison* p : gating_pairs(c))
    (p->verdict == Verdict::pass ? pass : p->verdict == Verdict::fail ? fail : open).push_back(run_label(c, p->candidate));
  const std::string margin = fixed(c.options.margin, 3);
  if (c.verdict == Verdict::pass)
    return joined(pass, ", ") + (pass.size() == 1 ? " is" : " are") + " non-inferior to " + run_label(c, 0) +
           ": on every task the lower bound of candidate / baseline is above the margin " + margin + ".";
  if (c.verdict == Verdict::fail)
    return joined(fail, ", ") + (fail.size() == 1 ? " fails" : " fail") + " against " + run_label(c, 0) +
           ": a task is below the margin " + margin + " for certain, or broke a check (below).";
  return "Not decided yet for " + joined(open, ", ") + ": the interval of candidate / baseline still straddles the margin " + margin +
         ". More trials would decide it (below).";
}

// The bound against the margin, shorter than compare::bound_reason: the banner states the
// confidence once, and its "To resolve" line says how many trials would decide.
std::string bound_sentence(const compare::GateBound& b) {
  return b.quantity + " " + fixed(b.estimate, 4) + ": " + compare::bound_vs_margin(b, "\u2264") + " (" + b.method + ")";
}

// The task's decision in one sentence: the gate's other reasons (error rates, failed checks, a
// baseline that never scores) first, then the bound.
std::string verdict_sentence(const TaskComparison& t) {
  std::vector<std::string> parts = t.other_reasons;
  if (t.bound) parts.push_back(bound_sentence(*t.bound));
  return joined(parts, "; ");
}

void verdict_banner(Markup& m, const Comparison& c) {
  m.open("section", {{"class", std::string("banner ") + verdict_class(c.verdict)}, {"id", "verdict"}});
  m.element("p", compare::to_string(c.verdict), {{"class", "verdict"}});
  m.element("p", headline(c), {{"class", "headline"}});
  m.element("p",
            "Gate: PASS when the one-sided " + fixed(100 * (1 - c.options.alpha), 1) +
                "% lower bound of candidate / baseline is above the margin " + fixed(c.options.margin, 3) +
                " on every task; FAIL when a task's upper bound is below it (or its error rate or a check fails). Bounds: Tang's "
                "score bound for one bucket of 0/1 trials, else the stratified score bound (buckets, repeats, clusters, fractional "
                "scores).",
            {{"class", "note"}});
  m.open("ul");
  for (const TaskAcrossPairs& ta : gated_tasks(c))
    for (std::size_t k = 0; k < ta.tasks.size(); ++k) {
      const TaskComparison& t = *ta.tasks[k];
      m.open("li");
      badge(m, t.verdict);
      m.text(" ");
      m.element("strong", (ta.pairs.size() > 1 ? run_label(c, ta.pairs[k]->candidate) + " \u00b7 " : std::string()) + t.task);
      m.text(": " + verdict_sentence(t));
      if (t.verdict == Verdict::inconclusive) {
        m.empty("br");
        if (t.power.additional_trials)
          m.element("strong", "To resolve: ")
              .text("run about " + fixed(*t.power.additional_trials, 0) + " more paired trials (" + fixed(*t.power.trials_needed, 0) +
                    " in all, same bucket mix): at the observed ratio that decides with " + compare::percent(t.power.power, 0) +
                    " power" +
                    (*t.power.additional_trials > 20.0 * static_cast<double>(std::max<std::size_t>(t.trials, 1))
                         ? " (impractical: the ratio sits too close to the margin for more trials to settle it)"
                         : "") +
                    ". The gate resolves ratios beyond " + fixed(c.options.margin, 3) + " \u00b1 " + fixed(t.power.mde_ratio, 3) +
                    " at the current n.");
        else
          m.element("strong", "To resolve: ")
              .text("the estimate sits on the margin; only a different candidate (or a different margin, decided before looking) settles it.");
      }
      m.close();
    }
  m.close();
  m.close().newline();
}

void forest_figure(Markup& m, const Comparison& c) {
  ForestPlot fp{.title = "candidate / baseline with one-sided " + fixed(100 * (1 - c.options.alpha), 1) + "% bounds, by task",
                .x_title = "ratio candidate / baseline (gated metric)",
                .margin = c.options.margin};
  const auto pairs = gating_pairs(c);
  for (const PairComparison* p : pairs)
    for (const TaskComparison& t : p->tasks) {
      if (!(t.reference_metric > 0)) continue;
      fp.rows.push_back({.label = (pairs.size() > 1 ? run_label(c, p->candidate) + " \u00b7 " : std::string()) + t.task,
                         .estimate = t.ratio_estimate,
                         .lo = t.ratio.lcb,
                         .hi = t.ratio.ucb,
                         .verdict = compare::to_string(t.verdict)});
    }
  if (fp.rows.empty()) return;
  m.open("figure");
  m.raw(render_svg(fp));
  m.element("figcaption",
            "Each bar runs from the lower to the upper one-sided bound (together a " + fixed(100 * (1 - 2 * c.options.alpha), 0) +
                "% interval); the circle is the estimate; the dashed line is the margin. A bar wholly right of it passes, wholly left fails.");
  m.close().newline();
}

void runs_overview(Markup& m, const Comparison& c) {
  std::vector<RunFacts> facts;
  for (const compare::RunInfo& r : c.runs) facts.push_back(r.run ? run_facts(r.run->manifest) : RunFacts{});
  m.open("section", {{"id", "runs"}});
  m.element("h2", "Runs");
  table_head(m, {{"run"}, {"role"}, {"engine"}, {"model"}, {"KV format"}, {"results", true}, {"started"}});
  for (std::size_t i = 0; i < c.runs.size(); ++i) {
    const RunFacts& f = facts[i];
    const auto differs = [&](const std::string& a, const std::string& b) { return i > 0 && !a.empty() && !b.empty() && a != b; };
    m.open("tr");
    cell(m, run_label(c, i));
    cell(m, i == 0 ? "baseline" : "candidate");
    cell(m, engine_name(f).empty() ? "\u2013" : engine_name(f), false, differs(engine_name(f), engine_name(facts[0])) ? "differs" : "");
    cell(m, f.model.empty() ? "\u2013" : f.model, false, differs(f.model, facts[0].model) ? "suspect" : "");
    cell(m, f.kv_format.empty() ? "\u2013" : f.kv_format, false, differs(f.kv_format, facts[0].kv_format) ? "differs" : "");
    cell(m, std::to_string(c.runs[i].results), true);
    cell(m, f.started_at.empty() ? "\u2013" : f.started_at);
    m.close();
  }
  table_end(m);
  m.close().newline();
}

void informative_pairs(Markup& m, const Comparison& c) {
  bool any = false;
  for (const PairComparison& p : c.pairs) any = any || !p.gating;
  if (!any) return;
  m.open("section", {{"id", "candidate-pairs"}});
  m.element("h2", "Candidates compared with each other (not gated)");
  m.element("p", "The same statistics with the first candidate as the reference: e.g. calibrated against uncalibrated scales.",
            {{"class", "note"}});
  table_head(m, {{"candidate vs reference"}, {"task"}, {"reference", true}, {"candidate", true}, {"ratio", true},
                 {"lower", true, "one-sided lower bound"}, {"upper", true, "one-sided upper bound"}, {"lost", true}, {"gained", true},
                 {"McNemar p", true, "two-sided exact"}, {"reading"}});
  for (const PairComparison& p : c.pairs) {
    if (p.gating) continue;
    for (const TaskComparison& t : p.tasks) {
      const bool defined = t.reference_metric > 0;
      m.open("tr");
      cell(m, run_label(c, p.candidate) + " vs " + run_label(c, p.reference));
      cell(m, t.task);
      cell(m, fixed(t.reference_metric, 3), true);
      cell(m, fixed(t.candidate_metric, 3), true);
      cell(m, defined ? fixed(t.ratio_estimate, 3) : "\u2013", true);
      cell(m, defined ? fixed(t.ratio.lcb, 3) : "\u2013", true);
      cell(m, defined && t.ratio.ucb ? fixed(*t.ratio.ucb, 3) : "\u2013", true);
      cell(m, std::to_string(t.flips.lost), true);
      cell(m, std::to_string(t.flips.gained), true);
      cell(m, compare::p_value(t.flips.mcnemar.exact), true);
      cell(m, std::string(compare::to_string(t.verdict)) + " (informative)");
      m.close();
    }
  }
  table_end(m);
  m.close().newline();
}

void metadata_section(Markup& m, const Comparison& c) {
  m.open("section", {{"id", "metadata"}});
  m.element("h2", "Run metadata");
  std::vector<Column> cols = {{"field"}};
  for (std::size_t i = 0; i < c.runs.size(); ++i) cols.push_back({run_label(c, i) + (i == 0 ? " (baseline)" : "")});
  table_head(m, cols);
  std::vector<std::vector<std::pair<std::string, std::string>>> rows;
  for (const compare::RunInfo& r : c.runs) rows.push_back(fact_rows(r.run ? run_facts(r.run->manifest) : RunFacts{}));
  const auto extra = [&](const std::string& name, auto value_of) {
    m.open("tr");
    cell(m, name);
    for (std::size_t i = 0; i < c.runs.size(); ++i) cell(m, value_of(c.runs[i]), false, "mono");
    m.close();
  };
  extra("directory", [](const compare::RunInfo& r) { return r.path; });
  extra("results read", [](const compare::RunInfo& r) {
    return std::to_string(r.results) + (r.torn_tail_bytes ? " (a cut-short last line skipped)" : "");
  });
  // The reference decoder's attention numerics, beside the engine facts (a server computes as its engine does).
  const auto numerics = [](const compare::RunInfo& r) { return r.run ? run_facts(r.run->manifest).attention_numerics : std::string(); };
  if (std::any_of(c.runs.begin(), c.runs.end(), [&](const compare::RunInfo& r) { return !numerics(r).empty(); }))
    extra("attention numerics", [&](const compare::RunInfo& r) {
      const std::string v = numerics(r);
      return v.empty() ? std::string("\u2013") : v;
    });
  for (std::size_t f = 0; f < rows[0].size(); ++f) {
    m.open("tr");
    cell(m, rows[0][f].first);
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const std::string& v = rows[i][f].second;
      const bool differs = i > 0 && !v.empty() && !rows[0][f].second.empty() && v != rows[0][f].second;
      cell(m, v.empty() ? "\u2013" : v, false, differs ? (must_match(rows[0][f].first) ? "suspect" : "differs") : "");
    }
    m.close();
  }
  table_end(m);
  m.element("p", "Highlighted: differs from the baseline (red: a difference that breaks the comparison).", {{"class", "note"}});
  m.close().newline();
}

void warnings_section(Markup& m, const Comparison& c) {
  if (c.warnings.empty()) return;
  m.open("section", {{"id", "warnings"}});
  m.element("h2", "Warnings");
  m.open("ul");
  for (const std::string& w : c.warnings) m.element("li", w);
  m.close().close().newline();
}

std::string options_line(const Comparison& c) {
  const compare::CompareOptions& o = c.options;
  return "margin " + fixed(o.margin, 3) + ", alpha " + fixed(o.alpha, 3) + " (one-sided), AUC axis " + stats::to_string(o.auc_axis) +
         ", errors " + compare::to_string(o.errors) + ", max error rate " + compare::percent(o.max_error_rate, 1) + ", power " +
         compare::percent(o.power, 0) + ", bootstrap " + std::to_string(o.bootstrap_replicates) + " (seed " + std::to_string(o.seed) + ")";
}

}  // namespace

// The page, top to bottom. A new section is a function writing into `m`, called here in its place
// (a section for the top goes beside pinning_block / tradeoff_block, html_top.cpp).
std::string render_html(const Comparison& c, const ReportContext& ctx) {
  Markup m;
  verdict_banner(m, c);
  pinning_block(m, c, ctx);
  html_sections(m, ctx.sections);
  tradeoff_block(m, c, ctx);
  const auto tasks = gated_tasks(c);
  m.open("nav", {{"class", "toc"}});
  if (!tradeoffs(c, ctx).empty()) m.element("a", "gains", {{"href", "#tradeoff"}});
  m.element("a", "runs", {{"href", "#runs"}});
  for (std::size_t i = 0; i < tasks.size(); ++i) m.element("a", tasks[i].task, {{"href", "#" + anchor("task", tasks[i].task, i)}});
  m.element("a", "metadata", {{"href", "#metadata"}});
  if (!c.warnings.empty()) m.element("a", "warnings (" + std::to_string(c.warnings.size()) + ")", {{"href", "#warnings"}});
  m.close().newline();
  forest_figure(m, c);
  runs_overview(m, c);
  for (std::size_t i = 0; i < tasks.size(); ++i) task_section(m, c, tasks[i], i, ctx);
  informative_pairs(m, c);
  metadata_section(m, c);
  warnings_section(m, c);

  std::vector<std::string> cands;
  for (std::size_t i = 1; i < c.runs.size(); ++i) cands.push_back(run_label(c, i));
  PageOptions page{.title = "kvgate: " + std::string(compare::to_string(c.verdict)) + " \u2014 " + joined(cands, ", ") + " vs " + run_label(c, 0),
                   .subtitle = "candidate" + std::string(cands.size() > 1 ? "s " : " ") + joined(cands, ", ") + " against the baseline " +
                               run_label(c, 0),
                   .generated_at = generated_at(ctx),
                   .footer = std::string("kvgate ") + version() + " (" + git_commit() + "); " + options_line(c) +
                             (ctx.command.empty() ? "" : "; command: " + ctx.command)};
  return html_page(page, m.str());
}

}  // namespace kvgate::reports
