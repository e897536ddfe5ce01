// Seeded paired bootstrap of a ratio of (weighted) means, a cross-check of Tang/Fieller
// (stats.md §3.2). Whole clusters are resampled with replacement within each stratum (bucket), the
// same draw for both configurations, so the pairing is kept. Identical on every platform: indices
// come from kvgate::Rng through our own mapping (never std:: distributions).
#pragma once
#include <cstdint>
#include <span>
#include <vector>

#include "harness/stats/interval.h"

namespace kvgate::stats {

// One stratum (a bucket): per cluster the sums of reference and candidate scores and the number of
// trials; `weight` is the stratum's weight in the statistic (an AUC weight, or 1 for a plain mean).
struct BootstrapStratum {
  std::vector<double> sum_ref, sum_cand, count;
  double weight = 1.0;
};

struct BootstrapOptions {
  int replicates = 1000;
  std::uint64_t seed = 0;
  double alpha = 0.05;  // one-sided bounds at the alpha and 1 - alpha percentiles
};

struct BootstrapResult {
  Interval bounds;            // percentile bounds (inverse empirical CDF, nearest rank)
  int replicates = 0;         // replicates drawn
  int undefined = 0;          // replicates whose reference statistic was 0 (left out)
};

// statistic = sum_k w_k mean_cand,k / sum_k w_k mean_ref,k. Every stratum needs >= 1 cluster with a
// positive count (std::invalid_argument otherwise). All replicates undefined gives bounds {0, +inf}.
BootstrapResult paired_bootstrap_ratio(std::span<const BootstrapStratum> strata, const BootstrapOptions& options);

}  // namespace kvgate::stats
