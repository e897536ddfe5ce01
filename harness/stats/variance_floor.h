// A floor under Fieller's contrast variance for when (almost) no paired trial differs.
//
// Why: Fieller (fieller.h) plugs the OBSERVED variances into Var D(t) = var_c + t^2 var_b - 2 t cov.
// When no paired score differs, var_c = var_b = cov = V and Var D(t) = V (1 - t)^2, so the interval
// collapses onto [R, R] whatever n is: 5 trials that all pass on both sides would "prove" a ratio of
// 1.000. Tang's score method (tang.h) does not collapse, because it evaluates the variance under
// H0: ratio = t, where the candidate must lose a share of the reference's score. This file brings
// that idea to every Fieller path (AUC over buckets, fractional scores, repeats, clusters).
//
// The floor: what the contrast's variance would be if the candidate were the reference minus a
// hidden loss process, each independent unit g (a trial, or a cluster of trials) losing its whole
// reference score B_g with probability q, where q is the largest loss fraction that `units`
// effective units with no observed difference cannot exclude: the score (Wilson) one-sided upper
// bound for 0 events, q = z^2 / (units + z^2). Under that model (with the observed means):
//   var_c' = (1 - q)^2 var_b + q (1 - q) U,   var_b' = var_b,   cov' = (1 - q) var_b,
//   Var' D(t) = (1 - q - t)^2 var_b + q (1 - q) U,
// with U = sum over buckets k of w_k^2 sum_g B_g^2 / n_k^2 (the hidden loss's own variance) and
// units = mean_b^2 / U (Kish's effective number of units, weighted by reference score: the reference
// passes of a binary bucket; the clusters when trials share a source; the AUC-weighted count).
//
// A zero-event device: a score interval adds z^2 pseudo-events to 0 observed ones. Observed paired
// differences take their place one for one: with k effective units that differ (Kish's count of
// the per-unit differences, (sum a_g^2)^2 / sum a_g^4, a_g = w_k D_g / n_k; k discordant pairs of a
// binary bucket), q = max(0, z^2 - k) / (units + z^2), and from k >= z^2 = 2.7 on there is no
// floor: the observed spread, from enough units, is Fieller's to use as before (fractional scores
// that all move a little, MRCR-style, are such a spread, not a degenerate one).
//
// The decision uses Var D(t) = max(observed, floor); the confidence set is then the union of the
// two Fieller sets, so lcb = min of the two lower bounds, ucb = max of the two upper bounds, and the
// test statistic at the margin is the smaller of the two. Properties (tested in stats-ratio-test):
// - no paired difference, one bucket, binary: lcb = units / (units + z^2) = Tang's bound exactly
//   (Tang's Z(t) = sqrt(n11 (1 - t) / t) for a table (n11, 0, 0, n00)); with p = 1 that is the
//   Wilson lower bound of n/n. The exact (Clopper-Pearson) zero-event bound alpha^(1/n) is lower
//   (n = 30: 0.905 vs 0.917); the score bound is chosen to agree with the gate's primary method;
// - one or two discordant pairs: between Fieller's bound and Tang's (n = 30, one lost: Fieller
//   0.912, floored 0.900, Tang 0.864); three or more: Fieller's bound, unchanged.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "harness/stats/fieller.h"

namespace kvgate::stats {

// What the floor needs from one bucket's units (clusters; dense ids 0 <= cluster[i] < clusters;
// n = scores.size()): ref_squares = sum_g B_g^2 / n^2 with B_g the unit's reference score total;
// diff_squares = sum_g (D_g / n)^2 and diff_fourths = sum_g (D_g / n)^4 with D_g its total of
// candidate - reference.
struct UnitSums {
  double ref_squares = 0.0, diff_squares = 0.0, diff_fourths = 0.0;
  // A metric sum_k w_k (bucket mean k): the sums of the buckets with w^2, w^2 and w^4.
  void add(const UnitSums& bucket, double weight);
  double differing_units() const;  // (diff_squares)^2 / diff_fourths; 0 when nothing differs
};
UnitSums unit_sums(std::span<const double> candidate, std::span<const double> reference,
                   std::span<const std::uint32_t> cluster, std::size_t clusters);

struct LossFloor {
  double units = 0.0;            // effective independent units at risk, mean_b^2 / ref_squares
  double differing_units = 0.0;  // k: effective units with a paired difference
  double loss_bound = 0.0;       // q = max(0, z^2 - k) / (units + z^2); 0: no floor
  RatioMoments moments{};        // the observed means, the floor's variances (above)
};
// Requires mean_b > 0, ref_squares > 0 (true whenever mean_b > 0) and z > 0.
LossFloor loss_floor(const RatioMoments& observed, const UnitSums& sums, double z);

struct FlooredFiellerTest {
  FiellerTest test;      // the decision: the union of the two sets, the smaller z at the margin
  FiellerTest observed;  // Fieller on the observed moments alone
  LossFloor floor;
  bool floor_lcb = false;  // the floor lowered the lower bound
  bool floor_ucb = false;  // the floor raised the upper bound
};
FlooredFiellerTest floored_fieller_test(const RatioMoments& observed, const UnitSums& sums, double margin, double alpha);

}  // namespace kvgate::stats
