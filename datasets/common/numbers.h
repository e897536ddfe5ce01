// Numbers as answers write them: "-1,234.50", "$12", "50%", "3/4", "\frac{3}{4}", "\boxed{033}",
// "1e-3", "−5" (U+2212). Used by the numeric grader and GSM8K's numeric-equality score.
#pragma once
#include <optional>
#include <string>
#include <string_view>

namespace kvgate {

// A number as free text writes it (PCRE2 syntax): sign, a currency sign, thousands separators,
// decimals, an exponent, an a/b fraction, or \frac{a}{b}.
inline constexpr const char* kAnswerNumberPattern =
    R"(-?\\[dt]?frac\{\s*-?[0-9.,]+\s*\}\{\s*-?[0-9.,]+\s*\})"
    R"(|(?<![A-Za-z0-9_])-?\$?(?:(?:[0-9]{1,3}(?:,[0-9]{3})+|[0-9]+)(?:\.[0-9]+)?|\.[0-9]+)(?:[eE][-+]?[0-9]+)?)"
    R"((?:\s*/\s*[0-9]+(?![0-9]*\.[0-9]))?)";

// The whole text as one number (after trimming and removing $, %, LaTeX spacing, \text{}, a leading
// "x =" and a trailing "."); nullopt when it is anything else ("5 apples", "x+1", "").
std::optional<double> parse_answer_number(std::string_view text);

// A plain decimal ("-0072.50", "1,000", ".5") in canonical form ("-72.5", "1000", "0.5"): exact
// equality of decimals without floating point. nullopt when it is not a plain decimal.
std::optional<std::string> canonical_decimal(std::string_view text);

// The content of the last \boxed{...} (or \fbox{...}) with balanced braces; nullopt when none.
std::optional<std::string> last_boxed(std::string_view text);

// The last number written in free text (integers, decimals, thousands separators, a/b fractions,
// \frac{a}{b}), as written; nullopt when there is none.
std::optional<std::string> last_number_in(std::string_view text);

// LaTeX answer text normalized for comparison when it is not a number (MATH-style "\left( 3,
// \frac{\pi}{2} \right)"): spacing commands, \left/\right, \dfrac/\tfrac, \text{}, "^\circ",
// whitespace and a trailing "." removed.
std::string normalize_latex_answer(std::string_view text);

}  // namespace kvgate
