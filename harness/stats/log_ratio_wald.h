// Wald interval for a ratio on the log scale (delta method), a cross-check of Tang and Fieller
// (stats.md §3.2; contingencytables Wald_CI_ratio_paired_2x2).
#pragma once

#include "harness/stats/fieller.h"
#include "harness/stats/interval.h"
#include "harness/stats/paired_counts.h"

namespace kvgate::stats {

struct LogRatioWald {
  double ratio = 0.0;
  double se_log = 0.0;  // SE(log R)
  Interval bounds;      // exp(log R -+ z SE): one-sided bounds at z = z_upper(alpha)
};

// Binary pairs: SE(log R) = sqrt((n_b + n_c) / ((n11 + n_c)(n11 + n_b))). Needs both arms to pass.
LogRatioWald log_ratio_wald(const PairedCounts& t, double z);
// Any paired means: Var(log R) = var_c/mean_c^2 + var_b/mean_b^2 - 2 cov/(mean_c mean_b).
// Needs both means > 0 (std::invalid_argument otherwise).
LogRatioWald log_ratio_wald(const RatioMoments& m, double z);

}  // namespace kvgate::stats
