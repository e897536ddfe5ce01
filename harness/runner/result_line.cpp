#include "harness/runner/result_line.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace kvgate::runner {

using nlohmann::json;

namespace {

// Three decimals, as the nearest double to k/1000, so the JSON shows "12.345", not 12.345000000000001.
double round3(double v) { return std::round(v * 1000.0) / 1000.0; }

void common(ResultRecord& r, const Trial& trial, int repeat, const Response& resp, const Attempts& a) {
  r.id = trial.id;
  r.task = trial.task;
  r.bucket = trial.bucket;
  r.repeat = repeat;
  r.extra["seed"] = a.seed ? json(*a.seed) : json(nullptr);
  r.extra["attempts"] = a.count;
  r.extra["finished_at"] = round3(a.finished_at_unix_s);
  if (resp.details.is_object())
    for (const auto& item : resp.details.items()) r.extra[item.key()] = item.value();
}

}  // namespace

double percentile_sorted(const std::vector<double>& v, double q) {
  if (v.empty()) return 0.0;
  const double pos = (q / 100.0) * static_cast<double>(v.size() - 1);
  const std::size_t lo = static_cast<std::size_t>(std::floor(pos));
  const std::size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (v[hi] - v[lo]) * (pos - static_cast<double>(lo));
}

json summarize_ms(std::vector<double> values) {
  if (values.empty()) return nullptr;
  std::sort(values.begin(), values.end());
  const double mean = std::accumulate(values.begin(), values.end(), 0.0) / static_cast<double>(values.size());
  return {{"n", values.size()},
          {"mean", round3(mean)},
          {"p50", round3(percentile_sorted(values, 50))},
          {"p90", round3(percentile_sorted(values, 90))},
          {"p99", round3(percentile_sorted(values, 99))},
          {"max", round3(values.back())}};
}

ResultRecord success_line(const Trial& trial, int repeat, const Response& resp, const Grade& grade, const Attempts& a) {
  ResultRecord r;
  common(r, trial, repeat, resp, a);
  r.score = std::clamp(grade.score, 0.0, 1.0);
  r.passed = grade.passed;
  r.response = resp.text;
  r.reasoning = resp.reasoning;
  r.finish_reason = resp.finish_reason;
  r.prompt_tokens = resp.prompt_tokens;
  r.completion_tokens = resp.completion_tokens;
  r.latency_ms = round3(resp.latency_ms);
  if (resp.ttft_ms) r.ttft_ms = round3(*resp.ttft_ms);
  r.grade = to_json(grade);
  r.extra["tool_calls"] = resp.tool_calls.is_null() ? json(nullptr) : resp.tool_calls;
  if (resp.ttft_ms) {  // streamed: every gap (the latency report pools them across a run) and this trial's summary
    json gaps = json::array();
    for (double g : resp.inter_token_ms) gaps.push_back(round3(g));
    r.extra["inter_token_ms"] = std::move(gaps);
    r.extra["itl_ms"] = summarize_ms(resp.inter_token_ms);
  }
  return r;
}

ResultRecord error_line(const Trial& trial, int repeat, const Response& last, const std::string& message, const Attempts& a) {
  ResultRecord r;
  common(r, trial, repeat, last, a);
  r.error = message;
  r.score = 0.0;
  r.passed = false;
  r.extra["error_kind"] = last.error_kind.empty() ? "backend" : last.error_kind;
  r.extra["http_status"] = last.http_status ? json(last.http_status) : json(nullptr);
  if (last.latency_ms > 0) r.latency_ms = round3(last.latency_ms);
  r.extra["tool_calls"] = nullptr;
  return r;
}

}  // namespace kvgate::runner
