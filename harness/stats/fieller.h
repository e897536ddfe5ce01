// Fieller's interval for a ratio of (paired) means R = mean_c / mean_b, through the linear contrast
// D(t) = mean_c - t * mean_b, Var D(t) = var_c + t^2 var_b - 2 t cov (stats.md §3.2, §4 [derived]).
// Works for fractional scores, averaged repeats, clustered trials and AUC (a weighted sum of bucket
// means): the caller supplies the variances OF THE MEANS (e.g. Miller's clustered ones, summed with
// squared AUC weights across buckets).
#pragma once

#include "harness/stats/interval.h"

namespace kvgate::stats {

struct RatioMoments {
  double mean_c = 0.0;  // candidate (numerator) mean
  double mean_b = 0.0;  // reference (denominator) mean
  double var_c = 0.0;   // Var(mean_c)
  double var_b = 0.0;   // Var(mean_b)
  double cov = 0.0;     // Cov(mean_c, mean_b)
};

// Var of the contrast mean_c - t * mean_b.
double contrast_variance(const RatioMoments& m, double t);

struct FiellerInterval {
  Interval bounds;       // lo solves the contrast z = +z on t < R, hi on t > R
  bool bounded = false;  // false: mean_b is not significantly above 0 at this z (mean_b^2 <= z^2 var_b);
                         // then hi = +infinity and lo = 0, and no ratio bound should be trusted
};
// z = z_upper(alpha): one-sided (1 - alpha) bounds; z_upper(alpha/2): two-sided (1 - alpha).
FiellerInterval fieller_interval(const RatioMoments& m, double z);

struct FiellerTest {
  double ratio = 0.0;     // mean_c / mean_b
  double contrast = 0.0;  // mean_c - margin * mean_b
  double se = 0.0;        // its standard error
  double z_margin = 0.0;  // contrast / se
  double p_value = 1.0;   // one-sided non-inferiority p, P(Z > z_margin)
  FiellerInterval interval;  // one-sided (1 - alpha) bounds
};
// Requires mean_b > 0 and non-negative variances (std::invalid_argument otherwise).
FiellerTest fieller_test(const RatioMoments& m, double margin, double alpha);

}  // namespace kvgate::stats
