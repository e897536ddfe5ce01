#include "datasets/mrcr/mrcr_grader.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>

#include "harness/core/error.h"
#include "datasets/mrcr/sequence_matcher.h"

namespace kvgate {

MrcrScore mrcr_score(std::string_view response, std::string_view answer, std::string_view prefix) {
  // For valid UTF-8, a byte prefix is a code-point prefix: startswith/removeprefix on bytes agree
  // with Python's on str.
  if (response.substr(0, prefix.size()) != prefix) return {0.0, false};
  response.remove_prefix(prefix.size());
  if (answer.substr(0, prefix.size()) == prefix) answer.remove_prefix(prefix.size());
  return {sequence_ratio(response, answer), true};
}

Grade grade_mrcr(const GradeInput& in) {
  const Trial& t = in.trial;
  if (!t.target.is_string())
    throw Error("trial " + t.id + ": the mrcr grader needs a string target (the answer): regenerate the tasks file");
  if (!t.grader.contains("prefix") || !t.grader["prefix"].is_string())
    throw Error("trial " + t.id + ": the mrcr grader needs a string \"prefix\" parameter: regenerate the tasks file");
  const std::string& answer = t.target.get_ref<const std::string&>();
  const std::string& prefix = t.grader["prefix"].get_ref<const std::string&>();
  const MrcrScore s = mrcr_score(in.response, answer, prefix);
  Grade g;
  g.score = s.score;
  g.passed = s.score == 1.0;
  if (in.response.empty()) g.value = GradeValue::no_answer;
  else if (g.passed) g.value = GradeValue::correct;
  else if (s.score > 0.0) g.value = GradeValue::partial;
  else g.value = GradeValue::incorrect;
  std::size_t cut = std::min<std::size_t>(80, in.response.size());  // a short excerpt, whole characters
  while (cut < in.response.size() && cut > 0 && (static_cast<unsigned char>(in.response[cut]) & 0xC0) == 0x80) --cut;
  g.extracted = std::string(in.response.substr(0, cut));
  g.explanation = s.prefix_ok ? "difflib ratio " + python_float_repr(s.score) + " after the prefix"
                              : "response does not start with the prefix \"" + prefix + "\": 0";
  g.details = {{"ratio", s.score}, {"prefix_ok", s.prefix_ok}};
  return g;
}

std::string python_float_repr(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v < 0 ? "-inf" : "inf";
  if (v == 0.0) return std::signbit(v) ? "-0.0" : "0.0";
  // Shortest round-trip digits, as Python's repr; then Python's layout: fixed notation for
  // decimal exponents -4 <= e < 16 (with ".0" when integral), else d[.ddd]e±XX.
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific);
  std::string sci(buf, r.ptr);
  std::string sign;
  if (sci[0] == '-') sign = "-", sci.erase(0, 1);
  const std::size_t epos = sci.find('e');
  const int exp = std::atoi(sci.c_str() + epos + 1);
  std::string digits = sci.substr(0, epos);
  if (digits.size() > 1) digits.erase(1, 1);  // drop the '.'
  if (exp >= -4 && exp < 16) {
    std::string out;
    if (exp < 0) {
      out = "0." + std::string(static_cast<std::size_t>(-exp - 1), '0') + digits;
    } else if (static_cast<std::size_t>(exp) + 1 >= digits.size()) {
      out = digits + std::string(static_cast<std::size_t>(exp) + 1 - digits.size(), '0') + ".0";
    } else {
      out = digits.substr(0, static_cast<std::size_t>(exp) + 1) + "." + digits.substr(static_cast<std::size_t>(exp) + 1);
    }
    return sign + out;
  }
  std::string mant = digits.size() > 1 ? digits.substr(0, 1) + "." + digits.substr(1) : digits;
  const int ae = std::abs(exp);
  return sign + mant + "e" + (exp < 0 ? "-" : "+") + (ae < 10 ? "0" : "") + std::to_string(ae);
}

}  // namespace kvgate
