// Tang's asymptotic score statistic for the ratio of paired proportions, R = p_c / p_b
// (Tang, Tang, Chan, Stat Med 2003; recommended by Fagerland et al. 2014; closed-form restricted MLE
// as in ratesci's scorepair, contrast "RR"). stats.md §3.1. The gate's primary method for binary,
// single-sample trials.
#pragma once

#include "harness/stats/interval.h"
#include "harness/stats/paired_counts.h"

namespace kvgate::stats {

// The per-trial variance of D = Y_c - t Y_b under H0: R = t at the restricted MLE, from the cell
// proportions (both pass, candidate only, reference only): Tang's V(t) / n. Z(t) = sqrt(n) S / sqrt of it.
double tang_null_variance(double p11, double p_cand_only, double p_ref_only, double ratio);

// Z(t) for H0: R = t, t > 0; decreasing in t, Z(R) = 0. Requires reference_passes() > 0.
double tang_z(const PairedCounts& t, double ratio);

// Score interval: lo solves Z(t) = +z, hi solves Z(t) = -z. With z = z_upper(alpha) each side is a
// one-sided (1 - alpha) bound; with z_upper(alpha/2) the pair is a two-sided (1 - alpha) interval.
// lo is 0 when even t -> 0 is not rejected; hi is +infinity when no finite t is rejected.
// Throws std::invalid_argument when the reference never passes (R undefined).
Interval tang_interval(const PairedCounts& t, double z);

struct TangTest {
  double ratio = 0.0;
  double z_margin = 0.0;  // Z(margin)
  double p_value = 1.0;   // one-sided non-inferiority p: P(Z > Z(margin)) under H0: R = margin
  Interval bounds;        // one-sided (1 - alpha) lower and upper bounds
};
TangTest tang_test(const PairedCounts& t, double margin, double alpha);

}  // namespace kvgate::stats
