#include "datasets/golden/golden_grader.h"

#include "datasets/golden/golden_check.h"

namespace kvgate {

using nlohmann::json;

Grade grade_golden(const GradeInput& in) {
  const GoldenRequest request = golden_request_from_input(in.trial.input);
  GoldenOutput output;
  output.response = std::string(in.response);
  output.finish_reason = std::string(in.finish_reason);
  if (in.tool_calls) output.tool_calls = *in.tool_calls;
  const std::vector<OutputProblem> problems = check_golden_output(request, output);

  Grade g;
  g.passed = problems.empty();
  g.score = g.passed ? 1.0 : 0.0;
  json list = json::array();
  std::string kinds;
  for (const OutputProblem& p : problems) {
    list.push_back({{"kind", to_string(p.kind)}, {"detail", p.detail}});
    kinds += (kinds.empty() ? "" : ", ") + std::string(to_string(p.kind));
  }
  const bool empty = !problems.empty() && problems.front().kind == BreakKind::empty;
  g.value = g.passed ? GradeValue::correct : empty ? GradeValue::no_answer : GradeValue::incorrect;
  g.extracted = kinds;
  g.explanation = g.passed ? "structurally sound" : "structural problems: " + kinds;
  g.details = {{"problems", list}, {"request", to_json(request)}};
  return g;
}

}  // namespace kvgate
