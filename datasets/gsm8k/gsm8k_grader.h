// The `gsm8k` grader. passed/score follow lm-eval's exact_match on the primary filter, which is
// strict-match unless the trial says {"primary": "flexible"}: strict-match is the first filter of
// lm-eval's gsm8k task and the one its leaderboard-era results quote; flexible-extract is a fallback
// for models that ignore the format. Both filters, with exact_match and numeric equality each, are
// in grade.details, so a report can show either without re-running.
//
// Grader parameters: strict_regex, flexible_regex (default lm-eval's gsm8k patterns), primary.
// The target is the dataset's answer ("... #### 72") or just the number. Thinking (<think>...</think>
// in the text) is removed first; a separate reasoning field is never graded. An empty answer is
// wrong ("[invalid]"), never an error.
#pragma once
#include "harness/core/grade.h"

namespace kvgate {

Grade grade_gsm8k(const GradeInput& input);

}  // namespace kvgate
