// Golden prompts, baseline against candidate, trial by trial (for `compare` when the task is
// "golden", and for the reports). A structural break is a problem of the candidate's output that the
// baseline's output of the same trial did not have:
//   empty                   the candidate has no answer and no tool call
//   truncated               the candidate stopped at the token limit (finish_reason "length")
//   invalid_json            the candidate is not JSON although the baseline's was, or JSON was
//                           requested (then it counts even when the baseline failed too; `in_baseline`)
//   tool_call_unparseable   a candidate tool call has no name or its arguments are not a JSON object
//   tool_call_unknown_tool  a candidate tool call names a tool the request did not offer
//   tool_call_dropped       the baseline called tools, the candidate called none
// Beside the breaks: exact match of the whole output and the normalized edit distance.
// By default any break fails the gate (GoldenGatePolicy). Pair only results without an error: a trial
// whose request failed is an error of the run, reported as such, never a structural break.
#pragma once
#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "datasets/golden/golden_check.h"

namespace kvgate {

struct StructuralBreak {
  BreakKind kind{};
  std::string detail{};
  bool in_baseline = false;  // the baseline had the same problem (only possible for requested JSON)
};

struct GoldenDiff {
  std::vector<StructuralBreak> breaks{};
  bool exact_match = false;    // same answer text and the same tool calls (names and parsed arguments)
  double edit_distance = 0.0;  // normalized Levenshtein of the rendered outputs, code points: 0 same, 1 nothing shared
};

GoldenDiff compare_golden(const GoldenRequest& request, const GoldenOutput& baseline, const GoldenOutput& candidate);

// The output as one text for exact match and edit distance: the answer (thinking removed), then one
// line per tool call, "<tool_call> name {arguments}".
std::string render_golden_output(const GoldenOutput& output);

struct GoldenGatePolicy {
  std::size_t max_breaks = 0;               // more breaks than this fail the gate
  bool ignore_breaks_in_baseline = false;   // true: do not count breaks the baseline shared
};

struct GoldenSummary {
  std::size_t prompts = 0;
  std::size_t exact_matches = 0;
  double exact_match_rate = 0.0;      // exact_matches / prompts (0 for none)
  double mean_edit_distance = 0.0;
  std::size_t breaks = 0;             // counted under the policy
  std::size_t prompts_with_breaks = 0;
  std::map<std::string, std::size_t> breaks_by_kind{};
  bool gate_failed = false;           // breaks > policy.max_breaks
};

GoldenSummary summarize_golden(const std::vector<GoldenDiff>& diffs, const GoldenGatePolicy& policy = {});

nlohmann::json to_json(const StructuralBreak& b);
nlohmann::json to_json(const GoldenDiff& d);
nlohmann::json to_json(const GoldenSummary& s);

}  // namespace kvgate
