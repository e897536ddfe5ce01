// Task-specific checks that run beside the ratio on a task's pairs, with the full result records.
// The seam for task checks: "golden" tasks get structural-break checks (invalid JSON where JSON was
// produced, broken tool calls, truncation, empty answers) from a function in datasets/golden/,
// registered in default_task_checks() (task_checks.cpp). A finding with severity "fail" fails the task.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "harness/compare/comparison.h"
#include "harness/compare/run_index.h"

namespace kvgate::compare {

struct TaskCheckInput {
  const TaskComparison& task;  // pairing fields and statistics filled, verdict not yet
  const IndexedRun& reference;
  const IndexedRun& candidate;
  const CompareOptions& options;
};

using TaskCheck = std::function<std::vector<Finding>(const TaskCheckInput&)>;

struct TaskCheckEntry {
  std::string task;  // the task name it applies to
  TaskCheck check;
};

// The checks kvgate ships: golden's structural breaks (golden_findings.h).
const std::vector<TaskCheckEntry>& default_task_checks();

}  // namespace kvgate::compare
