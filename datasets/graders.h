// The grader registry: a trial's "grader": {"name": ...} picks one of these functions.
// Each task declares its graders in its own header and adds one line to the table in graders.cpp.
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "harness/core/grade.h"

namespace kvgate {

struct GraderInfo {
  const char* name;
  GraderFn fn;
  const char* summary;  // one line for `--help` and reports
};

const std::vector<GraderInfo>& graders();
GraderFn find_grader(std::string_view name);  // nullptr for an unknown name
// Grades with the trial's own grader; an unknown grader name is an Error naming it and the known ones.
Grade grade_trial(const GradeInput& input);

}  // namespace kvgate
