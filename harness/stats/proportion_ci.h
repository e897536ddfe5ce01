// Confidence intervals for one binomial proportion k/n (stats.md §6). Small per-bucket n is the
// norm here, so these (not the CLT) are what per-bucket rates carry (Bowyer et al. 2025).
// `alpha` is two-sided: the interval has confidence 1 - alpha. Every function requires
// 0 <= k <= n and n > 0 (std::invalid_argument otherwise).
#pragma once
#include <cstdint>

#include "harness/stats/interval.h"

namespace kvgate::stats {

Interval wilson(std::int64_t k, std::int64_t n, double alpha);
Interval wilson_cc(std::int64_t k, std::int64_t n, double alpha);        // with continuity correction
Interval clopper_pearson(std::int64_t k, std::int64_t n, double alpha);  // exact (beta quantiles)
Interval jeffreys(std::int64_t k, std::int64_t n, double alpha);

// One-sided exact bounds: P(true p < lower) <= alpha (0 when k = 0), likewise for upper (1 when k = n).
double clopper_pearson_lower(std::int64_t k, std::int64_t n, double alpha);
double clopper_pearson_upper(std::int64_t k, std::int64_t n, double alpha);

}  // namespace kvgate::stats
