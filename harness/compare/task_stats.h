// Every statistic of one task of one pair: per bucket (means, rates with Wilson/Clopper-Pearson,
// flips, McNemar, a regression p), the gated metric (mean score, or AUC across length buckets), the
// ratio with its one-sided bounds (Tang for binary single-sample trials, else Fieller with clustered
// variances), cross-checks (Fieller, log-ratio Wald, bootstrap), the difference, power and the MDE.
#pragma once
#include <cstdint>

#include "harness/compare/comparison.h"
#include "harness/compare/run_index.h"

namespace kvgate::compare {

struct TaskContext {
  const IndexedRun& reference;
  const IndexedRun& candidate;
  const CompareOptions& options;
  bool gating = true;               // a baseline with a zero metric is bad input (Error) when gating
  std::uint64_t bootstrap_seed = 0;
};

// Fills the statistics of `t` (whose pairing fields pair_tasks filled). Leaves the verdict, holm_p,
// bh_p and regression flags to decide_task / adjust_regressions.
void compute_task_statistics(TaskComparison& t, const TaskContext& ctx);

// Holm and Benjamini-Hochberg over every bucket of every task of one pair.
void adjust_regressions(std::vector<TaskComparison>& tasks, double alpha);

}  // namespace kvgate::compare
