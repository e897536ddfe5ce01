// GSM8K answer extraction and scoring exactly as lm-eval's gsm8k task (lm_eval/tasks/gsm8k/gsm8k.yaml,
// version 3.0): two RegexFilters ("strict-match", "flexible-extract") and exact_match with
// ignore_case and regexes_to_ignore [",", "\$", "(?s).*#### ", "\.$"] applied to both sides.
// Plus an extra score lm-eval does not have: numeric equality (72.0 equals 72).
#pragma once
#include <string>
#include <string_view>

namespace kvgate {

// lm-eval's patterns, as written in its YAML files.
inline constexpr const char* kGsm8kStrictRegex = R"(#### (\-?[0-9\.\,]+))";             // gsm8k
inline constexpr const char* kGsm8kCotStrictRegex = R"(The answer is (\-?[0-9\.\,]+).)";  // gsm8k-cot (`.` is any char)
inline constexpr const char* kGsm8kFlexibleRegex = R"((-?[$0-9.,]{2,})|(-?[0-9]+))";     // both
inline constexpr const char* kGsm8kInvalid = "[invalid]";                                 // RegexFilter's fallback

// strict-match: the first match (group_select 0); flexible-extract: the last (group_select -1).
std::string gsm8k_extract_strict(std::string_view response, std::string_view pattern = kGsm8kStrictRegex);
std::string gsm8k_extract_flexible(std::string_view response, std::string_view pattern = kGsm8kFlexibleRegex);

// exact_match's normalization of one side: the four regexes removed in order, then lower case.
std::string gsm8k_normalize(std::string_view text);
// lm-eval's exact_match: normalize(prediction) == normalize(reference). The reference may be the
// dataset's whole answer ("...#### 72") or just the number.
bool gsm8k_exact_match(std::string_view prediction, std::string_view reference);
// Both sides normalized, then compared as decimals: "72.00" and "072" equal "72". False when either
// is not a plain decimal ("[invalid]", "1.2.3").
bool gsm8k_numeric_match(std::string_view prediction, std::string_view reference);

struct Gsm8kFilterScore {
  std::string extracted{};        // "[invalid]" when the filter found nothing
  bool correct = false;         // lm-eval exact_match
  bool numeric_correct = false;  // numeric equality (extra)
};

struct Gsm8kScores {
  Gsm8kFilterScore strict, flexible;
};

struct Gsm8kPatterns {
  std::string strict = kGsm8kStrictRegex;
  std::string flexible = kGsm8kFlexibleRegex;
};

// Both filters and both comparisons on an answer (thinking already removed) against the reference.
Gsm8kScores score_gsm8k(std::string_view answer, std::string_view reference, const Gsm8kPatterns& patterns = {});

}  // namespace kvgate
