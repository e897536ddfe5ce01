// choice: multiple-choice letters (GPQA, MMLU-Pro style).
#include "harness/core/error.h"
#include "datasets/common/thinking.h"
#include "datasets/custom/answer_extract.h"
#include "datasets/custom/custom_graders.h"
#include "datasets/custom/grade_util.h"
#include "datasets/custom/grader_params.h"

namespace kvgate {

Grade grade_choice(const GradeInput& in) {
  const GraderParams p(in.trial.grader, "trial " + in.trial.id + ": grader choice");
  const std::string choices = p.str("choices", "ABCDEFGHIJ");
  if (!in.trial.target.is_string()) p.fail("the target must be an option letter, e.g. \"C\"");
  const std::optional<char> want = normalize_choice_target(in.trial.target.get<std::string>());
  if (!want || choices.find(*want) == std::string::npos)
    p.fail("the target \"" + in.trial.target.get<std::string>() + "\" is not one of the choices " + choices);
  const ThinkingSplit split = split_thinking(in.response);
  const ExtractedAnswer a = extract_choice(split.answer, choices, p.flag("fallback_last_letter", false));
  Grade g;
  if (a.text.empty()) {
    g = binary_grade(false, "", "no option letter found", split);
    g.extracted = "[invalid]";
    return g;
  }
  if (a.ambiguous) {
    g = binary_grade(false, a.text, "the answer names several options", split);
  } else {
    const bool ok = a.text[0] == *want;
    g = binary_grade(ok, a.text, std::string(ok ? "the chosen option" : "a different option") + " (via " + a.via + ")", split);
  }
  g.details["via"] = a.via;
  g.details["ambiguous"] = a.ambiguous;
  return g;
}

}  // namespace kvgate
