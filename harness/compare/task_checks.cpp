#include "harness/compare/task_checks.h"

#include "harness/compare/golden_findings.h"

namespace kvgate::compare {

const std::vector<TaskCheckEntry>& default_task_checks() {
  static const std::vector<TaskCheckEntry> checks = {
      {"golden", golden_findings},  // structural breaks of golden prompts
  };
  return checks;
}

}  // namespace kvgate::compare
