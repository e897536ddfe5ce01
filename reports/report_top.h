// What every report says before the per-task detail, whatever its format: the differences between
// the runs that could explain a verdict (pinning), and what each candidate gains beside what it
// loses. HTML (html_top.cpp), Markdown and JUnit render these lists; issue #16 fills the inputs
// (ReportContext::pinning_differences, ReportContext::gains).
#pragma once
#include <string>
#include <vector>

#include "compare/comparison.h"
#include "report_writer.h"

namespace kvgate::reports {

// ctx.pinning_differences first, then what the report finds itself in run.json: a candidate whose
// model, sampling, tasks sha256 or API differs from the baseline's ("model differs: bf16 has
// “Qwen/Qwen3-8B”, fp8 has “Qwen/Qwen3-4B”").
std::vector<std::string> pinning_differences(const compare::Comparison& c, const ReportContext& ctx);

// The run.json facts (fact_rows names) that must match between baseline and candidate.
bool must_match(const std::string& field);

// One gated candidate: what it loses (every gated task's ratio with its bounds) and what it gains
// (the ctx.gains naming it, or naming no candidate).
struct CandidateTradeoff {
  std::size_t run = 0;  // index into c.runs
  std::string label{};
  compare::Verdict verdict = compare::Verdict::inconclusive;
  std::vector<const compare::TaskComparison*> tasks{};
  std::vector<const Gain*> gains{};
};

// One entry per gating candidate, in run order; empty when ctx.gains is (the reports then show the
// accuracy side alone, as before).
std::vector<CandidateTradeoff> tradeoffs(const compare::Comparison& c, const ReportContext& ctx);

// "×1.94", "×1.12 [1.08, 1.15]": a gain's factor and, when measured, its interval.
std::string gain_text(const Gain& g);

}  // namespace kvgate::reports
