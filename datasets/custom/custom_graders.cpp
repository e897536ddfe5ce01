#include "custom/custom_graders.h"

#include <algorithm>
#include <cctype>
#include <string>

namespace kvgate {

namespace {

std::string collapse_whitespace(std::string_view s, bool lower) {
  std::string out;
  bool space = false;
  for (unsigned char c : s) {
    if (std::isspace(c)) {
      space = !out.empty();
      continue;
    }
    if (space) out.push_back(' ');
    space = false;
    out.push_back(lower ? static_cast<char>(std::tolower(c)) : static_cast<char>(c));
  }
  return out;
}

std::string target_text(const Trial& t) { return t.target.is_string() ? t.target.get<std::string>() : t.target.dump(); }

Grade binary(bool ok, std::string extracted, std::string why) {
  Grade g;
  g.value = ok ? GradeValue::correct : (extracted.empty() ? GradeValue::no_answer : GradeValue::incorrect);
  g.score = ok ? 1.0 : 0.0;
  g.passed = ok;
  g.extracted = std::move(extracted);
  g.explanation = std::move(why);
  return g;
}

}  // namespace

Grade grade_exact(const GradeInput& in) {
  const bool lower = !in.trial.grader.value("case_sensitive", false);
  const std::string got = collapse_whitespace(in.response, lower), want = collapse_whitespace(target_text(in.trial), lower);
  return binary(got == want, got, got == want ? "exact match" : "differs from the target");
}

Grade grade_contains(const GradeInput& in) {
  const bool lower = !in.trial.grader.value("case_sensitive", false);
  const std::string got = collapse_whitespace(in.response, lower), want = collapse_whitespace(target_text(in.trial), lower);
  const bool ok = !want.empty() && got.find(want) != std::string::npos;
  return binary(ok, ok ? want : got.substr(0, 80), ok ? "target found in the response" : "target not in the response");
}

}  // namespace kvgate
