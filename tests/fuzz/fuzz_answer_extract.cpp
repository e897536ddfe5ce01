// The answer extractors on arbitrary bytes (style.md §12): thinking removal, GSM8K's filters, the
// numeric and choice extractors, number parsing, the golden JSON and tool-call checks, edit distance.
// None may crash or throw on any response a model could send.
#include <cstdint>
#include <string>

#include "datasets/common/edit_distance.h"
#include "datasets/common/numbers.h"
#include "datasets/common/thinking.h"
#include "datasets/custom/answer_extract.h"
#include "datasets/golden/golden_check.h"
#include "datasets/golden/golden_compare.h"
#include "datasets/gsm8k/gsm8k_extract.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  const std::string answer = kvgate::strip_thinking(text);
  const kvgate::Gsm8kScores s = kvgate::score_gsm8k(answer, text);
  (void)kvgate::score_gsm8k(answer, "#### 72", {.strict = kvgate::kGsm8kCotStrictRegex, .flexible = kvgate::kGsm8kFlexibleRegex});
  (void)kvgate::extract_numeric_answer(answer, false);
  (void)kvgate::extract_choice(answer, "ABCDEFGHIJ", true);
  (void)kvgate::parse_answer_number(answer);
  (void)kvgate::canonical_decimal(s.flexible.extracted);
  (void)kvgate::normalize_latex_answer(answer);
  (void)kvgate::last_boxed(text);
  (void)kvgate::check_json_text(answer);
  // The same bytes as tool calls (when they parse as JSON) and as a second output to compare.
  const nlohmann::json calls = nlohmann::json::parse(text, nullptr, false);
  const kvgate::GoldenRequest request{.json_requested = true, .tool_names = {"f"}};
  const kvgate::GoldenOutput a{.response = text, .finish_reason = "stop", .tool_calls = calls.is_discarded() ? nullptr : calls};
  const kvgate::GoldenOutput b{.response = answer, .finish_reason = "length", .tool_calls = nullptr};
  (void)kvgate::compare_golden(request, a, b);
  (void)kvgate::levenshtein_distance(text.substr(0, 2000), answer.substr(0, 2000));
  return 0;
}
