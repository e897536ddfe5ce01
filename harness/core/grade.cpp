#include "harness/core/grade.h"

namespace kvgate {

const char* to_string(GradeValue v) {
  switch (v) {
    case GradeValue::correct: return "correct";
    case GradeValue::incorrect: return "incorrect";
    case GradeValue::partial: return "partial";
    case GradeValue::no_answer: return "no_answer";
  }
  return "no_answer";
}

nlohmann::json to_json(const Grade& g) {
  nlohmann::json j = {{"value", to_string(g.value)}, {"extracted", g.extracted}, {"explanation", g.explanation}};
  if (!g.details.empty()) j["details"] = g.details;
  return j;
}

}  // namespace kvgate
