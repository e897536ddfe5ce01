// Graders for bring-your-own benchmarks (issue #17). Each reads the trial's target (a string) and
// its "grader" parameters.
#pragma once
#include "core/grade.h"

namespace kvgate {

// exact: the response equals the target after trimming and collapsing whitespace (and, unless
// {"case_sensitive": true}, ignoring case).
Grade grade_exact(const GradeInput& input);
// contains: the target occurs in the response (case-insensitive unless {"case_sensitive": true}).
Grade grade_contains(const GradeInput& input);

}  // namespace kvgate
