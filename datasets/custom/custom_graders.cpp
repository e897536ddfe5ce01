// exact, contains and regex: text graders over text_match.h.
#include "datasets/custom/custom_graders.h"

#include "datasets/common/pcre_regex.h"
#include "datasets/common/thinking.h"
#include "harness/core/error.h"
#include "datasets/custom/grade_util.h"
#include "datasets/custom/text_match.h"

namespace kvgate {

Grade grade_exact(const GradeInput& in) {
  const GraderParams p(in.trial.grader, "trial " + in.trial.id + ": grader exact");
  const TextMatchOptions o = text_match_options(p);
  const ThinkingSplit split = split_thinking(in.response);
  const std::string got = normalize_text(split.answer, o);
  for (const std::string& want : target_alternatives(in.trial))
    if (got == normalize_text(want, o)) return binary_grade(true, got, "exact match", split);
  return binary_grade(false, got, "differs from the target", split);
}

Grade grade_contains(const GradeInput& in) {
  const GraderParams p(in.trial.grader, "trial " + in.trial.id + ": grader contains");
  const TextMatchOptions o = text_match_options(p);
  const ThinkingSplit split = split_thinking(in.response);
  const std::string got = normalize_text(split.answer, o);
  for (const std::string& target : target_alternatives(in.trial)) {
    const std::string want = normalize_text(target, o);
    if (!want.empty() && got.find(want) != std::string::npos)
      return binary_grade(true, want, "target found in the response", split);
  }
  return binary_grade(false, got.substr(0, 80), "target not in the response", split);
}

Grade grade_regex(const GradeInput& in) {
  const GraderParams p(in.trial.grader, "trial " + in.trial.id + ": grader regex");
  const TextMatchOptions o = text_match_options(p);
  const std::string select = p.str("select", "first");
  if (select != "first" && select != "last") p.fail("parameter \"select\" must be \"first\" or \"last\"");
  const ThinkingSplit split = split_thinking(in.response);
  std::string extracted;
  try {
    const Regex& re = cached_regex(p.required_str("pattern"), {.ignore_case = p.flag("pattern_ignore_case", false), .dotall = false});
    const auto group = p.integer("group");
    if (group && (*group < 0 || *group > re.group_count()))
      p.fail("parameter \"group\" " + std::to_string(*group) + " is not a group of the pattern");
    if (!group) {
      extracted = regex_filter(re, split.answer, select == "first" ? 0 : -1, "");
    } else {
      const auto all = re.find_all(split.answer);
      if (!all.empty()) {
        const RegexMatch& m = select == "first" ? all.front() : all.back();
        extracted = *group == 0 ? m.text : m.groups[static_cast<std::size_t>(*group - 1)];
      }
    }
  } catch (const Error& e) {
    if (std::string_view(e.what()).rfind(p.where(), 0) == 0) throw;
    p.fail(e.what());
  }
  if (extracted.empty()) {
    Grade g = binary_grade(false, "", "the pattern found nothing", split);
    g.extracted = "[invalid]";
    return g;
  }
  const std::string got = normalize_text(extracted, o);
  for (const std::string& want : target_alternatives(in.trial))
    if (got == normalize_text(want, o)) return binary_grade(true, extracted, "extracted answer equals the target", split);
  return binary_grade(false, extracted, "extracted answer differs from the target", split);
}

}  // namespace kvgate
