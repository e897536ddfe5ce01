// The "niah" grader: exact value present as a whole token; RULER's case-insensitive substring
// (string_match_all with one reference) as a second score.
#include "datasets/common/answer_text.h"
#include "harness/core/error.h"
#include "datasets/niah/niah.h"

namespace kvgate::niah {

namespace {

// What the answer offers in place of the value, for reports: the first run of digits (number
// values) or the first 80 bytes.
std::string first_candidate(const std::string& text, bool numeric) {
  if (numeric) {
    const std::size_t b = text.find_first_of("0123456789");
    if (b != std::string::npos) return text.substr(b, text.find_first_not_of("0123456789", b) - b);
  }
  return text.substr(0, 80);
}

}  // namespace

Grade grade_niah(const GradeInput& in) {
  const Trial& t = in.trial;
  if (!t.target.is_string() || t.target.get_ref<const std::string&>().empty())
    throw Error("trial " + t.id + ": a niah target must be the needle's value (a non-empty string): regenerate the tasks file");
  const std::string& value = t.target.get_ref<const std::string&>();
  const std::string text = final_answer_text(in.response);
  const bool exact = contains_token(text, value);
  const bool ruler = lower_ascii(text).find(lower_ascii(value)) != std::string::npos;

  Grade g;
  g.passed = exact;
  g.score = exact ? 1.0 : 0.0;
  g.value = exact ? GradeValue::correct : text.empty() ? GradeValue::no_answer : GradeValue::incorrect;
  g.extracted = exact ? value : text.empty() ? "[invalid]" : first_candidate(text, t.meta.value("value_type", "") == "numbers");
  g.explanation = exact   ? "the needle's value is in the answer"
                  : ruler ? "the value appears only inside a longer token or in another case"
                  : text.empty() ? "empty answer"
                                 : "the needle's value is not in the answer";
  g.details["ruler_substring"] = ruler ? 1.0 : 0.0;
  copy_trial_fields(t, {"depth", "depth_actual", "prompt_tokens", "target_tokens", "key", "value_type"}, g.details);
  return g;
}

}  // namespace kvgate::niah
