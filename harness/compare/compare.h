// `kvgate compare`: pairs a baseline run with one or more candidate runs trial by trial and decides.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "harness/compare/comparison.h"
#include "harness/compare/task_checks.h"

namespace kvgate::compare {

// Loads the run directories (the first is the baseline) and compares each candidate with the
// baseline (gating) and the candidates with each other (informative). Throws kvgate::Error (exit 2)
// for bad input: missing files, fewer than two runs, different task sets, a trial whose task or
// bucket differs between runs, an empty bucket, a baseline that never scores on a task.
Comparison compare_runs(const std::vector<std::string>& dirs, const CompareOptions& options,
                        const std::vector<TaskCheckEntry>& checks = default_task_checks());

// The same on runs already loaded (tests, benchmarks, `gate`).
Comparison compare_loaded(std::vector<std::shared_ptr<const RunDir>> runs, const CompareOptions& options,
                          const std::vector<TaskCheckEntry>& checks = default_task_checks());

}  // namespace kvgate::compare
