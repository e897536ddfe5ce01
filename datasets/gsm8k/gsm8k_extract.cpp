#include "datasets/gsm8k/gsm8k_extract.h"

#include <array>
#include <cctype>

#include "datasets/common/numbers.h"
#include "datasets/common/pcre_regex.h"

namespace kvgate {

std::string gsm8k_extract_strict(std::string_view response, std::string_view pattern) {
  return regex_filter(cached_regex(pattern), response, 0, kGsm8kInvalid);
}

std::string gsm8k_extract_flexible(std::string_view response, std::string_view pattern) {
  return regex_filter(cached_regex(pattern), response, -1, kGsm8kInvalid);
}

std::string gsm8k_normalize(std::string_view text) {
  // Compiled once: these never change. Python's `$` (no MULTILINE) matches at the end or before a
  // final newline, as PCRE2's does.
  static const std::array<Regex, 4> ignore = {Regex(","), Regex(R"(\$)"), Regex(R"((?s).*#### )"), Regex(R"(\.$)")};
  std::string s(text);
  for (const Regex& r : ignore) s = r.remove_all(s);
  // numpy's char.lower: Unicode lower case. GSM8K answers are ASCII digits and signs after the regexes;
  // ASCII lowering leaves any other byte as it is.
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

bool gsm8k_exact_match(std::string_view prediction, std::string_view reference) {
  return gsm8k_normalize(prediction) == gsm8k_normalize(reference);
}

bool gsm8k_numeric_match(std::string_view prediction, std::string_view reference) {
  const auto p = canonical_decimal(gsm8k_normalize(prediction)), r = canonical_decimal(gsm8k_normalize(reference));
  return p && r && *p == *r;
}

Gsm8kScores score_gsm8k(std::string_view answer, std::string_view reference, const Gsm8kPatterns& patterns) {
  Gsm8kScores s;
  s.strict.extracted = gsm8k_extract_strict(answer, patterns.strict);
  s.flexible.extracted = gsm8k_extract_flexible(answer, patterns.flexible);
  for (Gsm8kFilterScore* f : {&s.strict, &s.flexible}) {
    f->correct = gsm8k_exact_match(f->extracted, reference);
    f->numeric_correct = gsm8k_numeric_match(f->extracted, reference);
  }
  return s;
}

}  // namespace kvgate
