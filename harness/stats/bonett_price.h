// Bonett-Price hybrid Wilson interval for the ratio of paired proportions (stats.md §3.2;
// contingencytables BonettPrice_hybrid_Wilson_score_CI_paired_2x2). A cross-check of Tang.
#pragma once

#include "harness/stats/interval.h"
#include "harness/stats/paired_counts.h"

namespace kvgate::stats {

// z = z_upper(alpha/2) for a two-sided (1 - alpha) interval. Needs reference passes > 0.
Interval bonett_price_interval(const PairedCounts& t, double z);

}  // namespace kvgate::stats
