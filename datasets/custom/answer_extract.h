// Reading the final answer out of a free-text response, for the numeric and choice graders. Each
// returns what it found and how ("via"), so a grade can explain itself. Thinking must be removed first.
#pragma once
#include <optional>
#include <string>
#include <string_view>

namespace kvgate {

struct ExtractedAnswer {
  std::string text{};  // "" when nothing was found
  std::string via{};   // "boxed", "####", "answer_is", "last_number", "whole", ...
  bool ambiguous = false;  // the final statement names several answers ("(B) or (C)")
};

// The numeric answer, in priority order: the last \boxed{}; the text after the last "####"; the
// number after the last "answer is" / "Answer:"; the last number anywhere. With require_boxed only
// the first step counts.
ExtractedAnswer extract_numeric_answer(std::string_view response, bool require_boxed);

// The option letter, in priority order: the last "answer is (C)" / "Answer: C" / "answer is **C**";
// the last \boxed{C}; the last bold **C** / **(C)**; a response that is only a letter ("C", "(C).",
// "C) Paris"); the last "(C)"; with fallback_last_letter, the last standalone letter. `choices` are
// the allowed capital letters ("ABCD"). Lower-case letters count only inside parentheses or bold.
ExtractedAnswer extract_choice(std::string_view response, std::string_view choices, bool fallback_last_letter);

// A target letter in any of the forms "C", "c", "(C)", "C." as one capital letter; nullopt otherwise.
std::optional<char> normalize_choice_target(std::string_view target);

}  // namespace kvgate
