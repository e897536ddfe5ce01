// Text comparison shared by the custom graders: the options of lm-eval's exact_match
// (regexes_to_ignore, ignore_case, ignore_punctuation) plus whitespace collapsing, and a target that
// may list several acceptable answers.
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "harness/core/trial.h"
#include "datasets/custom/grader_params.h"

namespace kvgate {

struct TextMatchOptions {
  bool case_sensitive = false;
  bool ignore_punctuation = false;
  std::vector<std::string> regexes_to_ignore{};
};
TextMatchOptions text_match_options(const GraderParams& params);

// regexes removed (before case folding, as lm-eval: write them for the text as it is), punctuation dropped (if asked), whitespace trimmed and collapsed, lower-cased
// (Unicode simple lower case) unless case_sensitive.
std::string normalize_text(std::string_view text, const TextMatchOptions& options);

// The acceptable answers: a string, a number (as JSON writes it), or an array of those. An Error
// naming the trial for any other target.
std::vector<std::string> target_alternatives(const Trial& trial);

}  // namespace kvgate
