// The counts run.json keeps and `kvgate run` prints: results against expected, errors (rate and
// kinds), pass rate and mean score over the answered trials, per task.
#pragma once
#include <cstddef>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/core/result.h"

namespace kvgate::runner {

// {"results","expected","complete","errors","error_rate","error_kinds":{...},"answered","passed",
//  "pass_rate","mean_score","by_task":{task:{"results","errors","passed","pass_rate","mean_score"}}}
// pass_rate and mean_score count answered (non-error) lines only; errors are reported beside them.
nlohmann::json summarize_results(const std::vector<ResultRecord>& records, std::size_t expected);

// Human lines for stdout.
std::string summary_text(const nlohmann::json& summary);

}  // namespace kvgate::runner
