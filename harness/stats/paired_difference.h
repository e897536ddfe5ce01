// Intervals for the difference of paired proportions, p_c - p_b = (n_c - n_b)/n (stats.md §3.3),
// reported beside the ratio. z = z_upper(alpha/2) gives a two-sided (1 - alpha) interval.
#pragma once

#include "harness/stats/interval.h"
#include "harness/stats/paired_counts.h"

namespace kvgate::stats {

double paired_difference(const PairedCounts& t);

// Newcombe (1998) method 10, hybrid score "square-and-add", with the phi rule of biostatUZH's
// confIntPairedProportion (it reproduces contingencytables' test values; plain phi does not).
Interval newcombe_interval(const PairedCounts& t, double z);
// Tango (1998) asymptotic score interval (recommended by Fagerland et al. 2014).
Interval tango_interval(const PairedCounts& t, double z);
// Wald: SE = sqrt((n_b + n_c) - (n_c - n_b)^2/n) / n.
Interval wald_difference_interval(const PairedCounts& t, double z);

}  // namespace kvgate::stats
