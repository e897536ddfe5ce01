// What the candidate gains, beside what it loses: per run, percentiles of time to first token,
// inter-token latency, end-to-end latency and output tokens/s (from the driver's result lines); per
// pair, those paired trial by trial as a ratio candidate / reference with an interval; and the KV
// cache capacity in tokens, from the engine log or, labelled as an estimate, from `kvgate capacity`.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "harness/compare/options.h"
#include "harness/core/run_dir.h"
#include "harness/stats/interval.h"
#include "harness/stats/percentile.h"

namespace kvgate::compare {

struct KvCapacity {
  long long tokens = 0;
  std::string source{};  // "engine_log" (what the engine allocated) or "estimate" (kvgate capacity)
  std::string detail{};  // how: "engine log vllm.log line 18", "kvgate capacity: config.json, fp8_e4m3, 141 GB x 0.92 ..."
};

struct RunPerformance {
  std::size_t timed_results = 0;  // results without an error that carry latency_ms
  std::optional<stats::Percentiles> ttft_ms{}, itl_ms{}, e2e_ms{}, output_tokens_per_s{};
  std::string itl_basis{};  // "inter_token_ms" (every streamed gap pooled) or "itl_ms.mean" (a mean per result)
  std::optional<KvCapacity> kv_capacity{};
  std::optional<double> max_concurrency{};  // from the engine log
};

// One metric paired per trial: the geometric mean of candidate/reference ratios with a two-sided
// (1 - alpha) t interval on the log scale (stats/geometric_mean_ratio.h).
struct PairedRatio {
  std::string metric{};  // "ttft_ms", "itl_ms", "e2e_ms", "output_tokens_per_s"
  bool lower_is_better = true;
  std::size_t trials = 0, results = 0;  // paired, both sides measured
  double ratio = 0.0;
  stats::Interval interval{};
  std::optional<double> p50_ratio{}, p90_ratio{}, p99_ratio{};  // the runs' percentiles, candidate / reference
};

struct CapacityGain {
  long long reference_tokens = 0, candidate_tokens = 0;
  double ratio = 0.0;
  bool estimate = false;  // either side estimated: both are then estimated alike
  std::string source{};   // "engine_log" or "estimate"
};

struct Gains {
  std::vector<PairedRatio> ratios{};
  std::optional<CapacityGain> capacity{};
  std::vector<std::string> notes{};  // why a number is missing, and what would give it
};

// `options.model_config` (or a reference run's model directory) gives the capacity estimate when
// the run has no engine log with the KV cache size.
RunPerformance run_performance(const RunDir& run, const CompareOptions& options);

struct PairRecords {
  const RunDir& reference;
  const RunDir& candidate;
  // (reference record, candidate record) of each paired result, grouped by trial
  const std::vector<std::vector<std::pair<std::uint32_t, std::uint32_t>>>& trials;
};
Gains pair_gains(const PairRecords& records, const RunPerformance& reference, const RunPerformance& candidate,
                 const CompareOptions& options);

// "x0.77 [0.74, 0.80]" style helpers for the text table and reports: the label of a metric.
const char* metric_label(const std::string& metric);  // "ITL", "TTFT", "E2E latency", "output tokens/s"

}  // namespace kvgate::compare
