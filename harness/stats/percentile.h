// Percentiles of a latency sample (TTFT, inter-token gaps, end-to-end, tokens/s): linear
// interpolation between order statistics, numpy's default ("linear", Hyndman-Fan type 7), so the
// numbers match `numpy.percentile(x, q)` on the same sample.
#pragma once
#include <cstddef>
#include <span>
#include <vector>

namespace kvgate::stats {

// q in [0, 100] of an ascending sample (std::invalid_argument when empty or q is out of range).
double percentile_sorted(std::span<const double> sorted, double q);

struct Percentiles {
  std::size_t n = 0;
  double mean = 0.0, p50 = 0.0, p90 = 0.0, p99 = 0.0, max = 0.0;
};

// n, mean, p50, p90, p99, max of a sample (sorted here); n = 0 and zeros when empty.
Percentiles percentiles(std::vector<double> values);

}  // namespace kvgate::stats
