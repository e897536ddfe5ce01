// Graders for bring-your-own benchmarks: small functions over the trial's target and its
// "grader" parameters (grader_params.cpp lists them; gen checks them). Every one removes thinking
// (<think>...</think>) from the response first; a separate reasoning field is never graded. A target
// may be an array of acceptable answers (exact, contains, regex, numeric).
#pragma once
#include "harness/core/grade.h"

namespace kvgate {

// exact: the response equals the target after lm-eval's exact_match options (regexes_to_ignore,
// ignore_punctuation), whitespace collapsing and, unless case_sensitive, case folding.
Grade grade_exact(const GradeInput& input);
// contains: the target occurs in the response, normalized as for exact.
Grade grade_contains(const GradeInput& input);
// regex: the first (or last) match of "pattern" (one group, or "group"), then exact.
Grade grade_regex(const GradeInput& input);
// numeric: the answer (\boxed{}, "####", "answer is", else the last number) equals the target number
// within tolerance; fractions and LaTeX \frac read as numbers; a non-numeric target (MATH-style
// "\left(3, \frac{\pi}{2}\right)") is compared as normalized LaTeX text.
Grade grade_numeric(const GradeInput& input);
// choice: the option letter read from the response (answer_extract.h) equals the target letter;
// naming several options in the final statement is wrong.
Grade grade_choice(const GradeInput& input);
// json_field: the response is a JSON object or array and the field at "field" equals the target
// (strings as for exact, numbers numerically, a number and a numeric string alike, the rest as JSON).
Grade grade_json_field(const GradeInput& input);

}  // namespace kvgate
