// Pairs two indexed runs trial by trial: results joined on (id, repeat), repeats averaged per trial,
// errors counted as failures (or excluded), every missing or duplicated result counted and listed.
#pragma once
#include <vector>

#include "harness/compare/comparison.h"
#include "harness/compare/run_index.h"

namespace kvgate::compare {

// One TaskComparison per task (sorted by name) with its pairing fields filled: task, trial_pairs,
// result_pairs, accounting, binary, max_repeats, cluster_field, trials, results, clusters.
// Throws kvgate::Error (exit 2) when the task sets differ or a trial's task or bucket differs
// between the runs (they were made from different tasks files).
std::vector<TaskComparison> pair_tasks(const IndexedRun& reference, const IndexedRun& candidate, const CompareOptions& options);

}  // namespace kvgate::compare
