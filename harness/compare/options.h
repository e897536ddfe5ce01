// What `kvgate compare` decides with: every knob explicit and recorded in the JSON.
#pragma once
#include <cstdint>
#include <map>
#include <set>
#include <string>

#include "harness/stats/auc.h"

namespace kvgate::compare {

enum class ErrorPolicy { fail, exclude };  // a result with `error` set counts as a failure, or is left out
const char* to_string(ErrorPolicy p);

struct CompareOptions {
  double margin = 0.95;  // non-inferiority margin on candidate/baseline
  double alpha = 0.05;   // one-sided error rate of each bound
  stats::AucAxis auc_axis = stats::AucAxis::linear;
  double max_error_rate = 0.02;  // above this in either run, a task FAILs
  ErrorPolicy errors = ErrorPolicy::fail;
  double power = 0.8;            // for trials_needed and the MDE
  int bootstrap_replicates = 1000;  // 0: no bootstrap cross-check
  std::uint64_t seed = 0;        // bootstrap seed
  bool strict_pinning = false;   // a difference other than the KV settings is an error (exit 2)
  std::string model_config{};    // config.json for KV capacity estimates when a run has no engine log
  // Per task, from a suite (`kvgate gate`): a task's own margin, and tasks that are compared and
  // reported but never decide a verdict (a suite's `gate: false`).
  std::map<std::string, double> task_margins{};
  std::set<std::string> informative_tasks{};

  // These options as one task sees them: its own margin when it has one.
  CompareOptions for_task(const std::string& task) const;
  bool gates(const std::string& task) const { return !informative_tasks.contains(task); }
};

// Throws kvgate::Error naming the option when a value is out of range.
void validate(const CompareOptions& o);

}  // namespace kvgate::compare
