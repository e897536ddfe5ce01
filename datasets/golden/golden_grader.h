// The per-trial `golden` grader: a structural self-check of one output (golden_check.h). passed when
// the output has no problem (not empty, not truncated, valid JSON when JSON was requested, tool calls
// that parse and name offered tools). grade.details holds {"problems": [{kind, detail}], "request":
// {json_requested, tools}} so `compare` can run the pairwise check from run directories alone.
#pragma once
#include "harness/core/grade.h"

namespace kvgate {

Grade grade_golden(const GradeInput& input);

}  // namespace kvgate
