// numeric: answers as numbers (GSM8K-like, AIME, MATH numeric answers), within tolerance.
#include <cmath>

#include "datasets/common/numbers.h"
#include "datasets/common/thinking.h"
#include "datasets/custom/answer_extract.h"
#include "datasets/custom/custom_graders.h"
#include "datasets/custom/grade_util.h"
#include "datasets/custom/text_match.h"

namespace kvgate {

Grade grade_numeric(const GradeInput& in) {
  const GraderParams p(in.trial.grader, "trial " + in.trial.id + ": grader numeric");
  const double tol = p.number("tolerance", 1e-6), rel = p.number("relative_tolerance", 0.0);
  if (!(tol >= 0.0) || !(rel >= 0.0)) p.fail("tolerances must be 0 or more");
  const ThinkingSplit split = split_thinking(in.response);
  const ExtractedAnswer answer = extract_numeric_answer(split.answer, p.flag("require_boxed", false));
  if (answer.text.empty()) {
    Grade g = binary_grade(false, "", "no numeric answer found", split);
    g.extracted = "[invalid]";
    return g;
  }
  const std::optional<double> got = parse_answer_number(answer.text);
  for (const std::string& target : target_alternatives(in.trial)) {
    const std::optional<double> want = parse_answer_number(target);
    bool ok = false;
    std::string how;
    if (want) {
      ok = got && std::fabs(*got - *want) <= std::max(tol, rel * std::fabs(*want));
      how = "number";
    } else {  // the target is an expression: compare the normalized LaTeX
      ok = normalize_latex_answer(answer.text) == normalize_latex_answer(target);
      how = "latex text";
    }
    if (ok) {
      Grade g = binary_grade(true, answer.text, "equals the target (" + how + ", via " + answer.via + ")", split);
      g.details["via"] = answer.via;
      return g;
    }
  }
  Grade g = binary_grade(false, answer.text,
                         std::string(got ? "differs from the target" : "not a number") + " (via " + answer.via + ")", split);
  g.details["via"] = answer.via;
  return g;
}

}  // namespace kvgate
