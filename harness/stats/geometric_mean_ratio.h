// A paired ratio of positive measurements (latency, tokens/s) of candidate over reference: the
// geometric mean of per-trial ratios, exp(mean of log ratios), with a two-sided (1 - alpha)
// Student-t interval on the mean log ratio, exponentiated. Deterministic (no resampling); the log
// scale makes the ratio symmetric (2x slower and 2x faster are equally far from 1) and tames the
// right tail of latencies. Trials, not results: repeats are averaged on the log scale first.
#pragma once
#include <cstddef>
#include <span>

#include "harness/stats/interval.h"

namespace kvgate::stats {

struct GeometricRatio {
  std::size_t n = 0;       // trials
  double estimate = 0.0;   // exp(mean log ratio)
  double log_mean = 0.0, log_sd = 0.0;  // of the per-trial log ratios (sd with n - 1)
  Interval interval{};     // two-sided (1 - alpha); n = 1 gives {0, +inf}
};

// std::invalid_argument when empty, a value is not finite, or alpha is not in (0, 1).
GeometricRatio geometric_mean_ratio(std::span<const double> log_ratios, double alpha);

}  // namespace kvgate::stats
