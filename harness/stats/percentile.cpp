#include "harness/stats/percentile.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

namespace kvgate::stats {

double percentile_sorted(std::span<const double> v, double q) {
  if (v.empty()) throw std::invalid_argument("percentile of an empty sample");
  if (!(q >= 0.0 && q <= 100.0)) throw std::invalid_argument("percentile: q must be in [0, 100]");
  const double pos = (q / 100.0) * static_cast<double>(v.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(pos));
  const std::size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (v[hi] - v[lo]) * (pos - static_cast<double>(lo));
}

Percentiles percentiles(std::vector<double> values) {
  Percentiles p;
  if (values.empty()) return p;
  std::sort(values.begin(), values.end());
  p.n = values.size();
  // Sum in ascending order: the mean does not depend on the input order.
  p.mean = std::accumulate(values.begin(), values.end(), 0.0) / static_cast<double>(values.size());
  p.p50 = percentile_sorted(values, 50);
  p.p90 = percentile_sorted(values, 90);
  p.p99 = percentile_sorted(values, 99);
  p.max = values.back();
  return p;
}

}  // namespace kvgate::stats
