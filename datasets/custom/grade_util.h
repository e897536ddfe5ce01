// Building a binary grade for the custom graders.
#pragma once
#include <string>

#include "datasets/common/thinking.h"
#include "harness/core/grade.h"

namespace kvgate {

// score 1/0 = passed; value no_answer when nothing was extracted; details.thinking_removed says
// whether a <think> block was taken out first.
inline Grade binary_grade(bool ok, std::string extracted, std::string why, const ThinkingSplit& split) {
  Grade g;
  g.value = ok ? GradeValue::correct : (extracted.empty() ? GradeValue::no_answer : GradeValue::incorrect);
  g.score = ok ? 1.0 : 0.0;
  g.passed = ok;
  g.extracted = std::move(extracted);
  g.explanation = std::move(why);
  g.details["thinking_removed"] = split.found;
  return g;
}

}  // namespace kvgate
