// The "golden" task check for compare's seam (task_checks.h): every paired golden trial's
// candidate output against the baseline's, through datasets/golden/golden_compare.h. One "fail"
// finding per kind of structural break (any break fails the task, GoldenGatePolicy's default), and
// one "info" finding with the exact-match rate and mean edit distance.
#pragma once
#include <vector>

#include "harness/compare/task_checks.h"

namespace kvgate::compare {

std::vector<Finding> golden_findings(const TaskCheckInput& input);

}  // namespace kvgate::compare
