#include "datasets/gsm8k/gsm8k_grader.h"

#include "datasets/common/thinking.h"
#include "harness/core/error.h"
#include "datasets/gsm8k/gsm8k_extract.h"

namespace kvgate {

using nlohmann::json;

namespace {

std::string param(const Trial& t, const char* key, const char* fallback) {
  if (!t.grader.contains(key)) return fallback;
  const json& v = t.grader[key];
  if (!v.is_string()) throw Error("trial " + t.id + ": grader gsm8k: \"" + key + "\" must be a string");
  return v.get<std::string>();
}

json filter_json(const Gsm8kFilterScore& f) {
  return {{"extracted", f.extracted}, {"correct", f.correct}, {"numeric_correct", f.numeric_correct}};
}

}  // namespace

Grade grade_gsm8k(const GradeInput& in) {
  const Trial& t = in.trial;
  const Gsm8kPatterns patterns{.strict = param(t, "strict_regex", kGsm8kStrictRegex),
                               .flexible = param(t, "flexible_regex", kGsm8kFlexibleRegex)};
  const std::string primary = param(t, "primary", "strict");
  if (primary != "strict" && primary != "flexible")
    throw Error("trial " + t.id + ": grader gsm8k: \"primary\" must be \"strict\" or \"flexible\", got \"" + primary + "\"");
  if (!t.target.is_string() && !t.target.is_number())
    throw Error("trial " + t.id + ": grader gsm8k: the target must be the answer text or a number");
  const std::string reference = t.target.is_string() ? t.target.get<std::string>() : t.target.dump();

  const ThinkingSplit split = split_thinking(in.response);
  const std::string& answer = split.answer;
  Gsm8kScores s;
  try {
    s = score_gsm8k(answer, reference, patterns);
  } catch (const Error& e) {
    throw Error("trial " + t.id + ": grader gsm8k: " + e.what());
  }
  const Gsm8kFilterScore& main = primary == "strict" ? s.strict : s.flexible;
  Grade g;
  g.passed = main.correct;
  g.score = main.correct ? 1.0 : 0.0;
  g.extracted = main.extracted;
  g.value = main.correct ? GradeValue::correct : main.extracted == kGsm8kInvalid ? GradeValue::no_answer : GradeValue::incorrect;
  g.explanation = std::string(primary == "strict" ? "strict-match" : "flexible-extract") +
                  (main.correct ? " equals the target" : main.extracted == kGsm8kInvalid ? " found no answer" : " differs from the target");
  g.details = {{"strict", filter_json(s.strict)},
               {"flexible", filter_json(s.flexible)},
               {"primary", primary},
               {"thinking_removed", split.found}};
  return g;
}

}  // namespace kvgate
