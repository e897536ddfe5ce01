// A score bound for R = sum_k w_k mean_c,k / sum_k w_k mean_b,k: the ratio of two weighted sums of
// paired means over strata (length buckets: the AUC; one stratum: a mean score), for any paired
// scores in [0, 1], averaged repeats and clustered trials included. The gate's bound wherever
// Tang's (tang.h: one stratum of independent 0/1 pairs) does not apply; docs/gate-bound.md says
// why it was chosen and how its size was measured.
//
// The test of H0: R = t is Tang's score idea applied to the weighted sum: the contrast
//   S(t) = sum_k w_k mean_k(a(t)),   a(t) = candidate - t reference (per unit),
// standardized by its variance UNDER H0, V(t) = sum_k w_k^2 Var~_k(a(t)) / G_k, where Var~_k is the
// variance under the stratum's restricted maximum-likelihood distribution: the multinomial over
// the stratum's observed unit outcomes plus the four extreme outcomes a unit can have ({0, hi}^2:
// lose or gain everything) that maximizes the likelihood subject to sum_k w_k E~_k[a(t)] = 0.
// Z(t) = S(t) / sqrt(V(t)); the bounds invert it (score_interval.h).
//
// Why not Fieller (fieller.h): it plugs in the OBSERVED variance. With few one-directional losses
// a sample with fewer losses has both a higher estimate and a smaller variance, so its bound is
// too high exactly where the gate decides. The restricted MLE adds the losses H0 implies before
// the variance is taken, whatever was observed; with no loss observed the extreme "lost unit"
// outcome carries them. For one stratum of 0/1 pairs the extreme outcomes are the 2x2 table's
// cells and Z(t) is Tang's exactly (tested in stats-score-test).
//
// Units: a unit is a cluster of trials (a trial when nothing clusters them); a unit's outcome is
// its totals (C_g, B_g) scaled by G_k / n_k (G_k units, n_k trials), so that the stratum's means
// are plain means over units; hi = G_k max_g m_g / n_k is the largest total a unit can reach.
#pragma once

#include <cstddef>
#include <vector>

#include "harness/stats/interval.h"

namespace kvgate::stats {

// One stratum: per unit, the candidate's and the reference's total score and the unit's number of
// trials (scores are in [0, 1], so a total lies in [0, trials]).
struct PairedUnits {
  double weight = 1.0;
  std::vector<double> cand, ref, trials;
};

// The strata prepared for the test: each stratum's distinct unit outcomes with their counts and
// its four extreme outcomes (count 0 unless observed). Throws std::invalid_argument for no
// strata, an empty stratum, mismatched lengths, a weight <= 0, a total outside [0, trials], or a
// reference that never scores (R undefined).
class StratifiedScore {
 public:
  explicit StratifiedScore(const std::vector<PairedUnits>& strata);

  double ratio() const { return mean_c_ / mean_b_; }
  double candidate_mean() const { return mean_c_; }  // sum_k w_k mean_c,k
  double reference_mean() const { return mean_b_; }  // sum_k w_k mean_b,k

  // S(t) = sum_k w_k mean_k(a(t)), observed.
  double contrast(double t) const;
  // V(t) under H0: R = t (restricted MLE), and the observed variance of S(t) (the plain ML
  // variances of the units' a(t), the empirical distribution: what V becomes when H0 is true).
  double null_variance(double t) const;
  double observed_variance(double t) const;
  // Z(t) = S(t) / sqrt(V(t)), decreasing in t; +-infinity when V(t) = 0 and S(t) != 0.
  double z(double t) const;
  // Units in all (sum_k G_k): what power calculations scale.
  double units() const { return units_; }

  // A stratum's outcomes: (c, b) scaled unit totals, with how many units had them (0: an extreme
  // outcome not observed).
  struct Outcome {
    double c = 0.0, b = 0.0, count = 0.0;
  };
  struct Stratum {
    double weight = 0.0, units = 0.0;
    std::vector<Outcome> outcomes;
  };
  const std::vector<Stratum>& strata() const { return strata_; }
  // The restricted MLE for H0: R = t: per stratum, probabilities parallel to its outcomes.
  std::vector<std::vector<double>> restricted(double t) const;

 private:
  double variance(double t, const std::vector<std::vector<double>>& p) const;

  std::vector<Stratum> strata_;
  double mean_c_ = 0.0, mean_b_ = 0.0, units_ = 0.0;
};

// The stratum's distribution that maximizes sum_j count_j log p_j - beta sum_j p_j a_j over the
// simplex (the Lagrangian of the restricted MLE with multiplier beta): p_j = count_j / (mu + beta
// a_j), and an outcome never observed takes the mass left over when it is the one with the
// smallest beta a_j. Exposed for tests.
std::vector<double> tilted_distribution(const std::vector<double>& counts, const std::vector<double>& a, double beta);

struct StratifiedScoreTest {
  double ratio = 0.0;
  double z_margin = 0.0;  // Z(margin)
  double p_value = 1.0;   // one-sided non-inferiority p, P(Z > z_margin) under H0: R = margin
  Interval bounds;        // one-sided (1 - alpha) lower and upper bounds
  double null_variance = 0.0, observed_variance = 0.0;  // of S(margin): V(margin), the observed one
};
StratifiedScoreTest stratified_score_test(const StratifiedScore& s, double margin, double alpha);

}  // namespace kvgate::stats
