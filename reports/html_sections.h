// The parts of the comparison page (html_report.cpp assembles them). Internal to reports/.
#pragma once
#include <string>
#include <vector>

#include "harness/compare/comparison.h"
#include "reports/markup.h"
#include "reports/report_writer.h"

namespace kvgate::reports {

// The gating pairs, in order, and each one's TaskComparison of `task` (nullptr where absent).
struct TaskAcrossPairs {
  std::string task{};
  std::vector<const compare::PairComparison*> pairs{};
  std::vector<const compare::TaskComparison*> tasks{};
};
std::vector<TaskAcrossPairs> gated_tasks(const compare::Comparison& c);

// Under the verdict (html_top.cpp): the pinning differences (report_top.h), when any; what each
// candidate gains beside what it loses, when ctx.gains is set.
void pinning_block(Markup& m, const compare::Comparison& c, const ReportContext& ctx);
void tradeoff_block(Markup& m, const compare::Comparison& c, const ReportContext& ctx);

// One task: verdicts, numbers, the accuracy-vs-length chart, flip tables, the NIAH heatmap,
// per-problem flips, findings with both outputs, the lost trials.
void task_section(Markup& m, const compare::Comparison& c, const TaskAcrossPairs& t, std::size_t index, const ReportContext& ctx);

// Findings (golden structural breaks) with the two outputs side by side.
void findings_block(Markup& m, const compare::Comparison& c, const compare::PairComparison& p, const compare::TaskComparison& t,
                    const ReportContext& ctx);

// Lost trials in full (prompt, target, both answers), up to ctx.max_trials_shown, the rest by id.
void lost_trials_block(Markup& m, const compare::Comparison& c, const compare::PairComparison& p, const compare::TaskComparison& t,
                       const ReportContext& ctx);

// Per-problem outcomes of a single-bucket task: the grid, and the flips with both extracted answers.
void problem_flips_block(Markup& m, const compare::Comparison& c, const compare::PairComparison& p, const compare::TaskComparison& t,
                         const ReportContext& ctx);

// "gsm8k", "fp8 vs bf16": the label of run i.
const std::string& run_label(const compare::Comparison& c, std::size_t i);

}  // namespace kvgate::reports
