// A grade is structured (style.md §4): parse failures and transport errors are never a silent "".
// Graders are small functions, looked up by the name in a trial's "grader" field (datasets/graders.h).
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/core/trial.h"

namespace kvgate {

enum class GradeValue { correct, incorrect, partial, no_answer };
const char* to_string(GradeValue v);

struct Grade {
  GradeValue value = GradeValue::no_answer;
  double score = 0.0;   // 0..1; binary tasks use 0 or 1
  bool passed = false;  // what the pass rate counts
  std::string extracted;    // what the grader read from the response ("[invalid]" when nothing)
  std::string explanation;  // one line for reports
  nlohmann::json details = nlohmann::json::object();  // secondary scores (e.g. RULER substring, partial credit)
};

nlohmann::json to_json(const Grade& g);

struct GradeInput {
  const Trial& trial;
  std::string_view response;       // the answer text
  std::string_view reasoning = {};  // reasoning_content, kept apart by the backend
  std::string_view finish_reason = {};
  const nlohmann::json* tool_calls = nullptr;  // the response's tool calls, if any
};

using GraderFn = Grade (*)(const GradeInput&);

}  // namespace kvgate
