// The official MRCR grader (openai/mrcr dataset card), bit for bit:
//   if not response.startswith(prefix): return 0
//   return SequenceMatcher(None, response.removeprefix(prefix), answer.removeprefix(prefix)).ratio()
// No stripping: a leading space or newline before the prefix scores 0.
#pragma once
#include <string>
#include <string_view>

#include "harness/core/grade.h"

namespace kvgate {

struct MrcrScore {
  double score = 0.0;      // the official value, 0..1
  bool prefix_ok = false;  // the response starts with the prefix
};

MrcrScore mrcr_score(std::string_view response, std::string_view answer, std::string_view prefix);

// Grader "mrcr": trial target = the answer (it starts with the prefix, as in the dataset), grader
// parameter "prefix" = random_string_to_prepend. score = the official ratio; passed = score == 1.0
// (the requested reply reproduced exactly); value: correct (1.0), partial (0 < score < 1),
// incorrect (prefix missing or nothing in common), no_answer (empty response).
Grade grade_mrcr(const GradeInput& input);

// Python's repr() of a float ("1.0", "0.8888888888888888", "2e-06"): how `print(grade(...))`
// shows a score, so `kvgate grade mrcr` prints exactly what the official script prints.
std::string python_float_repr(double value);

}  // namespace kvgate
