#include "compare/task_checks.h"

namespace kvgate::compare {

const std::vector<TaskCheckEntry>& default_task_checks() {
  static const std::vector<TaskCheckEntry> checks = {
      // Issue #7: {"golden", golden::structural_breaks},
  };
  return checks;
}

}  // namespace kvgate::compare
