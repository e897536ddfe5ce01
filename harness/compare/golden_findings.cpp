#include "harness/compare/golden_findings.h"

#include <cstdio>
#include <map>

#include "harness/core/error.h"
#include "datasets/golden/golden_compare.h"

namespace kvgate::compare {

namespace {

// The request a trial made, from the golden grader's details in either record; unknown otherwise.
GoldenRequest request_of(const ResultRecord& a, const ResultRecord& b, bool& known) {
  for (const ResultRecord* r : {&a, &b}) {
    const nlohmann::json& g = r->grade;
    if (g.is_object() && g.contains("details") && g["details"].is_object() && g["details"].contains("request")) {
      try {
        known = true;
        return golden_request_from_json(g["details"]["request"], r->id);
      } catch (const Error&) {
      }
    }
  }
  known = false;
  return {.json_requested = false, .tool_names = {}, .tools_known = false};
}

const char* what(BreakKind k) {
  switch (k) {
    case BreakKind::empty: return "empty (no answer and no tool call)";
    case BreakKind::truncated: return "truncated (finish_reason \"length\")";
    case BreakKind::invalid_json: return "no longer valid JSON";
    case BreakKind::tool_call_unparseable: return "a tool call that does not parse";
    case BreakKind::tool_call_unknown_tool: return "a tool call naming a tool the request did not offer";
    case BreakKind::tool_call_dropped: return "no tool call where the baseline made one";
  }
  return "";
}

}  // namespace

std::vector<Finding> golden_findings(const TaskCheckInput& in) {
  std::map<BreakKind, Finding> by_kind;
  std::map<BreakKind, std::size_t> shared;
  std::vector<GoldenDiff> diffs;
  std::size_t unknown_requests = 0;
  for (const TrialPair& tp : in.task.trial_pairs) {
    for (std::uint32_t i = tp.first_result; i < tp.first_result + tp.results; ++i) {
      const ResultPair& rp = in.task.result_pairs[i];
      const ResultRecord& ref = in.reference.record(rp.reference_record);
      const ResultRecord& cand = in.candidate.record(rp.candidate_record);
      if (ref.error || cand.error) continue;  // errors are the run's, counted by compare, never breaks
      bool known = false;
      const GoldenRequest request = request_of(ref, cand, known);
      unknown_requests += known ? 0 : 1;
      GoldenDiff d = compare_golden(request, golden_output_from_result(ref), golden_output_from_result(cand));
      for (const StructuralBreak& b : d.breaks) {
        Finding& f = by_kind[b.kind];
        f.check = std::string("golden.") + to_string(b.kind);
        f.severity = "fail";
        f.trials.push_back({tp.id, rp.repeat, tp.bucket, rp.reference_record, rp.candidate_record});
        shared[b.kind] += b.in_baseline ? 1 : 0;
      }
      diffs.push_back(std::move(d));
    }
  }
  std::vector<Finding> out;
  for (auto& [kind, f] : by_kind) {
    const std::size_t n = f.trials.size();
    f.message = std::to_string(n) + (n == 1 ? " candidate output is " : " candidate outputs are ") + what(kind);
    if (kind == BreakKind::invalid_json && shared[kind] > 0)
      f.message += " (" + std::to_string(shared[kind]) + " also invalid in the baseline, where JSON was requested)";
    out.push_back(std::move(f));
  }
  const GoldenSummary s = summarize_golden(diffs);
  char line[160];
  std::snprintf(line, sizeof line, "exact match %.1f%% (%zu of %zu outputs), mean normalized edit distance %.3f",
                100.0 * s.exact_match_rate, s.exact_matches, s.prompts, s.mean_edit_distance);
  out.push_back({.check = "golden.similarity", .severity = "info", .message = line, .trials = {}});
  if (unknown_requests > 0)
    out.push_back({.check = "golden.request_unknown", .severity = "warn",
                   .message = std::to_string(unknown_requests) +
                              " results carry no golden grade details: requested JSON and offered tools were not checked",
                   .trials = {}});
  return out;
}

}  // namespace kvgate::compare
