// What every report says before the per-task detail, whatever its format: the differences between
// the runs that could explain a verdict (pinning), and what each candidate gains beside what it
// loses. HTML (html_top.cpp), Markdown and JUnit render these lists; compare (pinning.h, gains.h)
// fills the inputs (ReportContext::pinning_differences, ReportContext::gains).
#pragma once
#include <string>
#include <vector>

#include "harness/compare/comparison.h"
#include "reports/report_writer.h"

namespace kvgate::reports {

// ctx.pinning_differences first, then compare's pinning check of every gated candidate against the
// baseline (compare/pinning.h: engine version, model, revision, attention backend, sampling, max
// tokens, tasks sha256, kvgate version, ...: "model differs: bf16 has “Qwen/Qwen3-8B”, fp8 has
// “Qwen/Qwen3-4B”"), then its warnings (different attention backends: the seeds' Hopper FP8 bug).
std::vector<std::string> pinning_differences(const compare::Comparison& c, const ReportContext& ctx);

// The run.json facts (fact_rows names) that must match between baseline and candidate.
bool must_match(const std::string& field);

// One gated candidate: what it loses (every gated task's ratio with its bounds) and what it gains
// (the ctx.gains naming it, or naming no candidate, then what compare measured: KV capacity,
// inter-token latency, time to first token, end-to-end latency, output tokens/s).
struct CandidateTradeoff {
  std::size_t run = 0;  // index into c.runs
  std::string label{};
  compare::Verdict verdict = compare::Verdict::inconclusive;
  std::vector<const compare::TaskComparison*> tasks{};
  std::vector<Gain> gains{};
};

// compare's measurements of one pair as Gains (oriented so that above 1 is better: capacity
// candidate / baseline, latencies baseline / candidate, tokens/s candidate / baseline).
std::vector<Gain> measured_gains(const compare::Comparison& c, const compare::PairComparison& p);

// One entry per gating candidate, in run order; empty when nothing was gained or measured (no
// ctx.gains, no latencies, no KV capacity): the reports then show the accuracy side alone.
std::vector<CandidateTradeoff> tradeoffs(const compare::Comparison& c, const ReportContext& ctx);

// A factor below 1 is a loss (a slowdown, less capacity): listed with what the candidate loses.
bool is_loss(const Gain& g);

// "×1.94", "×1.12 [1.08, 1.15]": a gain's factor and, when measured, its interval; a loss in
// words with its interval turned the same way: "3.33× slower [3.13, 3.57]", never "×0.30".
std::string gain_text(const Gain& g);
std::string gain_factor_text(const Gain& g);    // "×1.94", "3.33× slower"
std::string gain_interval_text(const Gain& g);  // "[1.08, 1.15]", "[3.13, 3.57]", "" when none

}  // namespace kvgate::reports
