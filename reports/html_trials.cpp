// Trial-level blocks of a task: per-problem flips, findings with both outputs, lost trials in full.
// Everything shown here comes from model outputs and task files: it goes through Markup's escaping.
#include <algorithm>
#include <functional>
#include <map>
#include <set>

#include "harness/compare/number_format.h"
#include "reports/depth_grid.h"
#include "reports/html_escape.h"
#include "reports/html_page.h"
#include "reports/html_sections.h"
#include "reports/run_facts.h"
#include "reports/svg_charts.h"

namespace kvgate::reports {

using compare::Comparison;
using compare::FlipRef;
using compare::PairComparison;
using compare::TaskComparison;

namespace {

const ResultRecord* record(const Comparison& c, std::size_t run, std::uint32_t i) {
  const auto& r = c.runs[run].run;
  return r && i < r->results.records.size() ? &r->results.records[i] : nullptr;
}

std::string grade_field(const ResultRecord& r, const char* key) {
  if (!r.grade.is_object() || !r.grade.contains(key) || r.grade[key].is_null()) return {};
  return scalar_text(r.grade[key]);
}

// OpenAI-style tool calls as "name(arguments)" lines; anything else as JSON.
std::string tool_calls_text(const nlohmann::json& calls) {
  const auto dump = [](const nlohmann::json& j) { return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace); };
  if (!calls.is_array()) return dump(calls);
  std::string out;
  for (const nlohmann::json& c : calls) {
    const nlohmann::json* fn = c.is_object() && c.contains("function") && c["function"].is_object() ? &c["function"] : nullptr;
    if (!fn || !fn->contains("name")) {
      out += dump(c) + "\n";
      continue;
    }
    const nlohmann::json& args = fn->contains("arguments") ? (*fn)["arguments"] : nlohmann::json();
    out += scalar_text((*fn)["name"]) + "(" + (args.is_string() ? args.get<std::string>() : dump(args)) + ")\n";
  }
  return out;
}

// One side of a trial: outcome, the answer (cut), and what the grader read from it.
void answer(Markup& m, const std::string& who, const ResultRecord* r) {
  m.open("div");
  if (!r) {
    m.element("div", who + ": result not loaded", {{"class", "label"}});
    m.close();
    return;
  }
  std::string head = who + ": " + (r->error ? "error" : r->passed ? "passed" : "failed") + " (score " + compare::fixed(r->score, 3) + ")";
  if (!r->finish_reason.empty()) head += ", finish " + r->finish_reason;
  if (r->completion_tokens) head += ", " + std::to_string(*r->completion_tokens) + " tokens";
  m.element("div", head, {{"class", "label"}});
  if (r->error) m.element("p", "error: " + *r->error, {{"class", "note"}});
  if (!r->reasoning.empty()) {
    m.element("div", "reasoning", {{"class", "label"}});
    text_block(m, r->reasoning, 300, 300);
  }
  text_block(m, r->response.empty() ? "(no answer text)" : r->response);
  if (r->extra.is_object() && r->extra.contains("tool_calls") && !r->extra["tool_calls"].is_null()) {
    m.element("div", "tool calls", {{"class", "label"}});
    text_block(m, tool_calls_text(r->extra["tool_calls"]));
  }
  const std::string extracted = grade_field(*r, "extracted"), why = grade_field(*r, "explanation");
  if (!extracted.empty() || !why.empty())
    m.element("p", (extracted.empty() ? std::string() : "extracted \u201c" + truncate_middle(extracted, 120, 0) + "\u201d") +
                       (extracted.empty() || why.empty() ? "" : "; ") + why,
              {{"class", "note"}});
  m.close();
}

std::string trial_heading(const FlipRef& f, const ResultRecord* ref) {
  std::string s = f.id;
  if (f.bucket != 0) s += " \u00b7 " + token_label(f.bucket);
  if (ref)
    if (const auto d = result_depth(*ref)) s += " \u00b7 depth " + num(*d, 1) + "%";
  if (f.repeat != 0) s += " \u00b7 repeat " + std::to_string(f.repeat);
  return s;
}

void prompt_and_target(Markup& m, const FlipRef& f, const ReportContext& ctx) {
  const TrialText* tt = ctx.trials ? ctx.trials->find(f.id) : nullptr;
  if (!tt) return;
  m.element("div", "prompt", {{"class", "label"}});
  m.element("pre", tt->prompt, {{"class", "text"}});
  if (!tt->target.empty()) m.element("p", "target: " + tt->target, {{"class", "note"}});
}

void side_by_side(Markup& m, const Comparison& c, const PairComparison& p, const FlipRef& f, const ReportContext& ctx,
                  const std::string& extra_note = "") {
  const ResultRecord* ref = record(c, p.reference, f.reference_record);
  const ResultRecord* cand = record(c, p.candidate, f.candidate_record);
  m.open("div", {{"class", "trial"}});
  m.element("div", trial_heading(f, ref), {{"class", "head mono"}});
  if (!extra_note.empty()) m.element("p", extra_note, {{"class", "note"}});
  prompt_and_target(m, f, ctx);
  m.open("div", {{"class", "side"}});
  answer(m, run_label(c, p.reference), ref);
  answer(m, run_label(c, p.candidate), cand);
  m.close().close().newline();
}

void texts_note(Markup& m, const ReportContext& ctx) {
  if (!ctx.trials) {
    m.element("p", "Prompts are not shown (no tasks file was read).", {{"class", "note"}});
  } else if (!ctx.trials->note.empty()) {
    m.element("p", "Prompts are not shown: " + ctx.trials->note + ".", {{"class", "note"}});
  }
}

void remaining_ids(Markup& m, const std::vector<FlipRef>& refs, std::size_t shown) {
  if (refs.size() <= shown) return;
  m.open("details");
  m.element("summary", std::to_string(refs.size() - shown) + " more: their ids");
  std::string ids;
  for (std::size_t i = shown; i < refs.size(); ++i)
    ids += (i > shown ? ", " : "") + refs[i].id + (refs[i].repeat ? "#" + std::to_string(refs[i].repeat) : "");
  m.element("p", ids, {{"class", "mono note"}});
  m.close();
}

// The lost results taken in turn from each bucket, longest context first, so the trials shown in
// full cover every length rather than the first bucket's.
std::vector<FlipRef> spread_over_buckets(const std::vector<FlipRef>& refs) {
  std::map<std::int64_t, std::vector<const FlipRef*>, std::greater<>> by_bucket;
  for (const FlipRef& f : refs) by_bucket[f.bucket].push_back(&f);
  std::vector<FlipRef> out;
  for (std::size_t round = 0; out.size() < refs.size(); ++round)
    for (const auto& [bucket, v] : by_bucket)
      if (round < v.size()) out.push_back(*v[round]);
  return out;
}

}  // namespace

void problem_flips_block(Markup& m, const Comparison& c, const PairComparison& p, const TaskComparison& t, const ReportContext& ctx) {
  if (t.trial_pairs.empty() || t.trial_pairs.size() > 5000) return;
  OutcomeGrid grid{.title = t.task + ": per-trial outcome, " + run_label(c, p.candidate) + " vs " + run_label(c, p.reference)};
  for (const compare::TrialPair& tp : t.trial_pairs) {
    const bool a = tp.reference_passed >= 0.5, b = tp.candidate_passed >= 0.5;
    const Outcome o = a && b ? Outcome::both_pass : !a && !b ? Outcome::both_fail : a ? Outcome::lost : Outcome::gained;
    grid.cells.push_back(o);
    grid.titles.push_back(o == Outcome::lost ? tp.id + ": lost" : o == Outcome::gained ? tp.id + ": gained" : "");
  }
  m.element("h3", "Per-problem flips: " + run_label(c, p.candidate) + " vs " + run_label(c, p.reference));
  m.open("figure");
  m.raw(render_svg(grid));
  m.element("figcaption", "One square per paired trial, in id order" +
                              std::string(t.max_repeats > 1 ? " (a trial counts as passed when at least half its repeats pass)" : "") +
                              ": red lost (the baseline passed, the candidate failed), blue gained.");
  m.close();
  if (t.lost.empty() && t.gained.empty()) return;
  constexpr std::size_t kRows = 60;
  table_head(m, {{"trial"}, {"flip"}, {"target"}, {run_label(c, p.reference) + " answer"}, {run_label(c, p.candidate) + " answer"}});
  std::size_t rows = 0;
  const auto row = [&](const FlipRef& f, const char* what) {
    if (rows++ >= kRows) return;
    const ResultRecord* ref = record(c, p.reference, f.reference_record);
    const ResultRecord* cand = record(c, p.candidate, f.candidate_record);
    const TrialText* tt = ctx.trials ? ctx.trials->find(f.id) : nullptr;
    const auto shown = [](const ResultRecord* r) {
      if (!r) return std::string("\u2013");
      const std::string e = grade_field(*r, "extracted");
      return truncate_middle(e.empty() ? r->response : e, 60, 20);
    };
    m.open("tr", std::string(what) == "lost" ? std::vector<Attr>{{"class", "flagged"}} : std::vector<Attr>{});
    cell(m, f.id + (f.repeat ? "#" + std::to_string(f.repeat) : ""), false, "mono");
    cell(m, what);
    cell(m, tt ? truncate_middle(tt->target, 60, 0) : "\u2013", false, "mono");
    cell(m, shown(ref), false, "mono");
    cell(m, shown(cand), false, "mono");
    m.close();
  };
  for (const FlipRef& f : t.lost) row(f, "lost");
  for (const FlipRef& f : t.gained) row(f, "gained");
  table_end(m);
  if (rows > kRows) m.element("p", std::to_string(rows - kRows) + " more flips are in the JSON (flips.lost_results, flips.gained_results).", {{"class", "note"}});
}

void findings_block(Markup& m, const Comparison& c, const PairComparison& p, const TaskComparison& t, const ReportContext& ctx) {
  if (t.findings.empty()) return;
  m.element("h3", "Structural checks: " + run_label(c, p.candidate) + " vs " + run_label(c, p.reference));
  for (const compare::Finding& f : t.findings) {
    m.open("div", {{"class", "finding"}});
    m.open("h4");
    badge(m, f.severity, f.severity == "fail" ? "fail" : f.severity == "warn" ? "warn" : "info");
    m.text(" " + f.check).close();
    m.element("p", f.message);
    const std::size_t shown = std::min(f.trials.size(), ctx.max_trials_shown);
    for (std::size_t i = 0; i < shown; ++i) side_by_side(m, c, p, f.trials[i], ctx);
    remaining_ids(m, f.trials, shown);
    m.close();
  }
}

void lost_trials_block(Markup& m, const Comparison& c, const PairComparison& p, const TaskComparison& t, const ReportContext& ctx) {
  if (t.lost.empty()) return;
  m.element("h3", "Lost trials: " + run_label(c, p.reference) + " passed, " + run_label(c, p.candidate) + " failed (" +
                      std::to_string(t.lost.size()) + ")");
  texts_note(m, ctx);
  // Trials a finding above already showed in full are not repeated.
  std::set<std::pair<std::string, int>> above;
  for (const compare::Finding& f : t.findings)
    for (std::size_t i = 0; i < std::min(f.trials.size(), ctx.max_trials_shown); ++i) above.insert({f.trials[i].id, f.trials[i].repeat});
  std::vector<FlipRef> order;
  for (const FlipRef& f : spread_over_buckets(t.lost))
    if (!above.count({f.id, f.repeat})) order.push_back(f);
  if (order.size() < t.lost.size())
    m.element("p", std::to_string(t.lost.size() - order.size()) + " of them are shown above, under the structural checks.", {{"class", "note"}});
  const std::size_t shown = std::min(order.size(), ctx.max_trials_shown);
  for (std::size_t i = 0; i < shown; ++i) side_by_side(m, c, p, order[i], ctx);
  remaining_ids(m, order, shown);
}

}  // namespace kvgate::reports
