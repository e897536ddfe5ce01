// A results.jsonl line from a backend's answer: the required fields, the answer and its grade,
// and what the latency report needs (E2E latency, time to first token, every inter-token
// gap and their summary, token usage, completion time).
#pragma once
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/core/backend.h"
#include "harness/core/grade.h"
#include "harness/core/result.h"

namespace kvgate::runner {

struct Attempts {
  int count = 1;                 // attempts made, the final one included
  std::optional<std::uint64_t> seed;  // seed sent (per repeat), if any
  double finished_at_unix_s = 0.0;
};

// A trial that got an answer, graded.
ResultRecord success_line(const Trial& trial, int repeat, const Response& response, const Grade& grade, const Attempts& a);
// A trial that ended in an error (4xx, exhausted retries, a grader failure): score 0, error set.
ResultRecord error_line(const Trial& trial, int repeat, const Response& last, const std::string& message, const Attempts& a);

// {"n","mean","p50","p90","p99","max"} of a sample (linear interpolation between order statistics,
// as numpy's default); null when empty.
nlohmann::json summarize_ms(std::vector<double> values);
// Percentile q in [0,100] of sorted values (linear interpolation).
double percentile_sorted(const std::vector<double>& sorted, double q);

}  // namespace kvgate::runner
